"""Ctrl-C and SIGTERM: one flag, the supervisors to stop, and handlers that take no lock.

Installed by the first lines of every entry point (`skillmake`, `python -m skillmake`, and a dodo.py's
`from skillmake.dodo import *`), before anything slow is imported, so an interrupt is never lost nor shown as a
traceback, however early it comes. It imports nothing but os, signal and sys: it must be cheap enough to come
first.

A handler only sets a flag, signals processes (os.kill) and writes with os.write; it never takes a lock (a
second signal may arrive while the first handler runs, in the same thread) and never waits. What it does next
depends on where it runs:

- the run's own process, before anything runs (start-up, loading, planning): write the one line and exit 130 at
  once; there is nothing to save or stop, and an exception raised into an extension module's initialisation
  (orjson's, say) can crash the interpreter;
- the run's own process once tasks run (arm()): `skillmake` raises KeyboardInterrupt (its main() stops every
  trial's processes, says so and exits 130); plain `doit` writes the one line and raises SystemExit(130), so
  doit saves what finished;
- a doit worker process (`-P process`): raise KeyboardInterrupt only where it waits for work in doit's loop (it
  then leaves); anywhere else (a trial: its supervisors were just stopped, and the next `process.run` raises
  Interrupted, so no half-written record is left behind; doit's set-up before its loop's try, where nothing would
  catch it) try again a few milliseconds later, until it waits for work that the interrupted run no longer sends.

At the end of the exit functions, SIGINT and SIGTERM are ignored: the interpreter then restores their default
actions, and a signal during its last moments would end a run that already has its exit status by the signal.

A signal may be delivered to any thread; only the main thread runs Python handlers, and only when it next runs
Python code. The wakeup fd (`pending()`) lets a thread that waits on a process notice the signal at once.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy reads signal's stubs; at run time the C module spares importing enum (~10 ms)
    import signal
    from types import FrameType
    from typing import Any
else:
    try:
        import _signal as signal
    except ImportError:  # pragma: no cover - an interpreter without the C module
        import signal

MESSAGE = "interrupted; finished trials are kept in the store"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
RETRY_S = 0.005  # how soon an interrupt that could not unwind the main thread where it was tries again

# pid → every busy supervisor of this process, with a Popen's `returncode` (process.py adds and removes them while
# they run a command; dict operations are atomic under the GIL, and the handler only copies it).
LIVE: dict[int, Any] = {}

_state: dict[str, Any] = {"interrupted": False, "raised": False, "front": "", "armed": False, "pid": 0,
                          "wakeup": -1, "leaving_hook": False}
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # skillmake/, every layer


def interrupted() -> bool:
    return bool(_state["interrupted"])


def interrupt() -> None:
    """Mark the run interrupted and tell every live supervisor to stop its command (no lock, no wait)."""
    _state["interrupted"] = True
    stop_all()


def stop_all() -> None:
    for pid, proc in list(LIVE.items()):
        if getattr(proc, "returncode", None) is None:
            stop(pid)


def stop(pid: int) -> None:
    """SIGTERM a supervisor; SIGCONT too, since a command may have stopped it (SIGSTOP) and a stopped process
    acts on nothing but SIGKILL and SIGCONT."""
    for signum in (signal.SIGTERM, signal.SIGCONT):
        try:
            os.kill(pid, signum)
        except OSError:
            pass


def install(front: str) -> None:
    """SIGINT and SIGTERM handlers for a `front` ("skillmake" or "doit") run; the first call wins, later ones
    and calls off the main thread do nothing. An ignored SIGINT (a background job of a script) is taken over:
    the run is stoppable from its first moment to its last."""
    if _state["front"] or not _on_main_thread():
        return
    _state.update(front=front, pid=os.getpid())
    for signum in STOP_SIGNALS:
        signal.signal(signum, _on_signal)
    signal.signal(signal.SIGALRM, _retry)
    new_wakeup_fd()
    import atexit

    atexit.register(_finalizing)  # registered first, so it runs last
    if front == "doit":
        import sys

        _state["excepthook"] = sys.excepthook
        sys.excepthook = _excepthook


def install_for_entry_point() -> None:
    """install("skillmake") when this process is the `skillmake` command (its console script, `python -m
    skillmake`): called on import, so the handlers come before the front end imports anything else."""
    import sys

    first = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # skillmake/
    if os.path.basename(first) == "skillmake" or first in (os.path.join(here, "__main__.py"),
                                                            os.path.join(here, "commands", "cli.py")):
        install("skillmake")


def install_for_doit() -> None:
    """install("doit") when this process is plain `doit` (its console script or `python -m doit`) loading a
    user's dodo.py. Importing skillmake.dodo anywhere else (the `skillmake` front end's own loader, a test, a
    notebook) changes no handler: that process's owner decides."""
    import sys

    first = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(first) == "doit" or first.endswith(os.path.join("doit", "__main__.py")):
        install("doit")


def arm() -> None:
    """Something is under way that has to be unwound rather than cut short (doit runs tasks, a command of the
    front end runs): from now on an interrupt raises in the main thread (KeyboardInterrupt for the `skillmake`
    front end, SystemExit(130) for plain doit) instead of ending the process at once."""
    _state["armed"] = True


def forked() -> None:
    """In a doit worker (forked, or spawned and installed again): it is not the run's process, and the parent's
    supervisors and wakeup pipe are not its own."""
    _state["pid"] = -1
    LIVE.clear()
    if _state["front"] and _on_main_thread():
        new_wakeup_fd()


def new_wakeup_fd() -> None:
    """A pipe of this process's own that the interpreter writes each caught signal's number to, from any thread."""
    old = _state["wakeup"]
    r, w = os.pipe()
    for fd in (r, w):
        os.set_blocking(fd, False)
    signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    _state["wakeup"] = r
    if old >= 0:
        try:
            os.close(old)
        except OSError:
            pass


def wakeup_fd() -> int:
    """The read end of the wakeup pipe, or -1: a thread that polls it need call `pending` only when it is readable
    (or the run is `interrupted`), not once per wait."""
    return int(_state["wakeup"])


def pending() -> bool:
    """Whether a stop signal has come, as the wakeup pipe says: for a thread that waits on a process, which the
    handler (on the main thread, maybe busy in C) has not reached yet. Marks the run interrupted when so."""
    if _state["interrupted"]:
        return True
    fd = _state["wakeup"]
    if fd < 0:
        return False
    try:
        data = os.read(fd, 64)
    except OSError:
        return False
    if any(b in STOP_SIGNALS for b in data):
        interrupt()
        return True
    return False


def _on_main_thread() -> bool:
    """Without importing threading (start-up cost): only the main thread may read the wakeup fd setting."""
    try:
        signal.set_wakeup_fd(signal.set_wakeup_fd(-1))
    except ValueError:
        return False
    return True


def _excepthook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
    """Plain doit: an interrupt that reached the top as a KeyboardInterrupt (a `-P process` worker reported its
    own before the main thread's handler ran) ends the run as the handler would: one line, the exit functions
    (which stop and sweep what the run started), exit 130; never a traceback."""
    if not (issubclass(kind, KeyboardInterrupt) and _state["interrupted"]):
        _state["excepthook"](kind, value, tb)
        return
    import atexit
    import sys

    if not _state["raised"]:
        os.write(2, f"doit: {MESSAGE}\n".encode())
    _state["raised"] = True
    try:
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    finally:
        os._exit(130)


def _retry(signum: int, frame: FrameType | None) -> None:
    """A stop signal whose unwinding was put off (see _unwind): is the main thread somewhere safe now? (Its
    supervisors were told to stop when it came, and one started since stops itself: no need to signal again.)"""
    if _state["interrupted"] and not _state["raised"]:
        _unwind(frame)


def leaving() -> None:
    """The process is exiting (the run's, or a doit worker's): a pending retry has nothing left to unwind."""
    signal.setitimer(signal.ITIMER_REAL, 0)
    if _state["interrupted"]:
        _state["raised"] = True


def _finalizing() -> None:
    """The last exit function: from here on the interpreter tears itself down and restores SIGINT's and SIGTERM's
    default actions, so a stop signal now (a process group's Ctrl-C crossing the run's end) would end the process by
    that signal (exit status -2 or -15, nothing printed) instead of the status the run already has. An ignored
    signal is left ignored: the run exits as it was about to. A signal that came just before is handled (or not)
    here without a word: the run's status stands."""
    try:
        leaving()
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
    except (KeyboardInterrupt, SystemExit):
        pass


def _on_signal(signum: int, frame: FrameType | None) -> None:
    interrupt()
    _unwind(frame)


def _unwind(frame: FrameType | None) -> None:
    """After an interrupt: unwind (or leave) from where the main thread is, or try again a moment later."""
    if _state["raised"]:
        return  # already unwinding: a second signal must not cut its cleanup short
    if os.getpid() != _state["pid"]:  # a doit worker: leave doit's loop only from where it waits for work
        if _waiting_for_work(frame):
            _state["raised"] = True
            raise KeyboardInterrupt
        # In a trial, in doit's set-up before its loop's try, or between tasks: the worker may get no other
        # signal, and the interrupted run sends it no more work, so it would wait for work until it is killed.
        signal.setitimer(signal.ITIMER_REAL, RETRY_S)
        return
    front = _state["front"]
    if _state["armed"] and not _safe_point(frame):
        # Inside the standard library's queue and lock code, an exception can leave a lock held that the exit
        # then waits for forever (doit -n 4 -P process hung so): try again a few milliseconds later.
        signal.setitimer(signal.ITIMER_REAL, RETRY_S)
        if not _state["leaving_hook"]:
            # The run may notice the interrupt by itself and leave before the retry fires (a trial's thread read
            # the wakeup pipe): then the retry must not raise inside an exit function, such as one waiting for a
            # supervisor. Registered now, this runs before every exit function registered earlier (LIFO).
            import atexit

            atexit.register(leaving)
            _state["leaving_hook"] = True
        return
    _state["raised"] = True
    # A retry may still be set (an earlier signal came at an unsafe point): the exit restores SIGALRM's default
    # action, which would end the process by SIGALRM (-14) instead of 130 if that timer fired on the way out.
    signal.setitimer(signal.ITIMER_REAL, 0)
    if not _state["armed"]:
        # Start-up, planning, loading: nothing has run, so nothing is to be saved or stopped; and an exception
        # raised here could land inside an extension module's initialisation, which does not survive it.
        os.write(2, f"{front}: {MESSAGE}\n".encode())
        os._exit(130)
    if front == "skillmake":
        raise KeyboardInterrupt  # main() stops every trial's processes and says so
    os.write(2, f"doit: {MESSAGE}\n".encode())  # print() may be mid-write on this very thread
    raise SystemExit(130)  # doit saves what finished on its way out


def _safe_point(frame: FrameType | None) -> bool:
    """Whether the main thread may be unwound from where it is: skillmake's and doit's own code, or waiting in
    one of the standard library's blocking calls (a queue's or condition's wait, a pipe's read, a select)."""
    if frame is None:
        return True
    code = frame.f_code
    path = code.co_filename
    if path.startswith(_PACKAGE) or f"{os.sep}doit{os.sep}" in path:
        return True
    module = os.path.basename(path)
    return (module, code.co_name) in _SAFE_WAITS


_SAFE_WAITS = {("threading.py", "wait"), ("connection.py", "_recv"), ("connection.py", "_recv_bytes"),
               ("connection.py", "recv_bytes"), ("connection.py", "recv"), ("connection.py", "_poll"),
               ("connection.py", "poll"), ("connection.py", "wait"), ("selectors.py", "select"),
               ("subprocess.py", "_communicate"), ("subprocess.py", "_wait"), ("subprocess.py", "_try_wait"),
               ("queues.py", "get"), ("queue.py", "get")}


def _waiting_for_work(frame: FrameType | None) -> bool:
    """Whether a doit worker is in its loop's wait for the next job (doit's MRunner.execute_task_subprocess, in
    its job queue's get): the one place a KeyboardInterrupt is caught by doit's loop (which tells the run's process
    and returns) with no task half done and none of skillmake's code on the stack."""
    while frame is not None:
        caller = frame.f_back
        if caller is not None and caller.f_code.co_name == "execute_task_subprocess":
            code = frame.f_code
            return code.co_name == "get" and code.co_filename.endswith(f"multiprocessing{os.sep}queues.py")
        frame = caller
    return False


install_for_entry_point()
