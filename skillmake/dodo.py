"""Task creators for a user's dodo.py:  `from skillmake.dodo import *`  makes plain `doit` run the evals."""

from __future__ import annotations

# First, before the engine loads: from the dodo.py's import on, Ctrl-C or SIGTERM under plain doit stops every
# trial's processes, keeps what finished and exits 130 in one line (interrupts.py).
from skillmake.core import interrupts

interrupts.install_for_doit()

# Before any of skillmake's dataclasses is defined (as in __main__.py): their methods' code from the cache.
from skillmake.core import dataclass_code  # noqa: E402

dataclass_code.install()

import sys  # noqa: E402
from types import FrameType  # noqa: E402

from skillmake.core import console  # noqa: E402
from skillmake.engine import heap, info  # noqa: E402
from skillmake.engine.config import doit_config  # noqa: E402
from skillmake.engine.creators import (  # noqa: E402
    task_batch,
    task_grade,
    task_report,
    task_thresholds,
    task_trial,
    task_trigger,
    task_validate,
)
from skillmake.engine.tasks import current_root  # noqa: E402
from skillmake.run import process  # noqa: E402

__all__ = ["DOIT_CONFIG", "task_batch", "task_grade", "task_report", "task_thresholds", "task_trial", "task_trigger",
           "task_validate"]

heap.start()  # before planning: what it builds lives for the whole run (heap.py)
DOIT_CONFIG = doit_config(current_root())
process.prepare_run()  # the run's process: subreaper of its trials, its workers die with it (process.py)
if not isinstance(sys.stdout, console.PipeSafe):  # `doit list | head` ends quietly, as under `skillmake`
    sys.stdout = console.PipeSafe(sys.stdout)


def _guard_doits_outstream(safe: console.PipeSafe) -> None:
    """doit's command (`list`, `info`) took its own reference to sys.stdout before it loaded this dodo.py, and
    writes there: point it at the guarded stream too, or `doit list | head` ends in a BrokenPipeError traceback."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        command = frame.f_locals.get("self")
        if command is not None and getattr(command, "outstream", None) is safe.stream:
            command.outstream = safe
            info.guard(command)  # and `doit info <no such task>` is one line, not doit's KeyError traceback
            return
        frame = frame.f_back


if isinstance(sys.stdout, console.PipeSafe):
    _guard_doits_outstream(sys.stdout)
