"""Leaving the `skillmake` process without tearing its heap down.

At exit Python joins the threads that are not daemons, runs the atexit functions, flushes stdout and stderr, and then
finalizes: it clears every module, collects the whole heap and frees it object by object. A run's heap is the plan of
every trial (millions of objects at 30,000); that last part took 35 ms after a 600-trial run, the whole of a tail
where bare doit takes 25 ms for everything. Nothing of skillmake's is left for it to do: every file is written
atomically and closed, the store's records are synced by an atexit function, doit's database is closed by its run.
So the console script does the first three itself and then ends the process (os._exit). A program that calls
skillmake's main() keeps Python's own exit.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn


def leave(code: int) -> NoReturn:
    """End the process with `code` as Python's exit would, less the finalization (see the module's docstring)."""
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is None:  # an interpreter without it: its own exit, finalization and all
        sys.exit(code)
    # What the interpreter does first at exit: threading's own exit functions (an executor never shut down wakes its
    # idle workers there), then every thread that is not a daemon is joined. Interrupted (a second Ctrl-C), the
    # atexit functions still run, as at Python's own exit: they stop the trials' supervisors and sweep.
    with contextlib.suppress(BaseException):
        shutdown()
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()  # each prints its own exception, as at a normal exit, and the next one runs
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):  # a reader gone (`| head`), a stream closed: as Python's exit
            stream.flush()
    os._exit(code)
