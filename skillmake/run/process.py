"""Running a trial's processes so that none outlives its trial: each under a supervisor, all stopped on interrupt.

Every process a trial starts (agent, setup/cleanup command, python check, CLI judge) runs under
`skillmake/supervisor.py`, which kills every descendant when the command ends, on a timeout, and when the run
is interrupted or dies (see that module). The live supervisors are registered (interrupts.LIVE) so an
interrupted run stops them all at once and exits without waiting for trials (the handlers are interrupts.py's).
What escapes a supervisor (a command that kills or stops it) is found by the run's own process, a subreaper,
and ended (reaper.py): after such a trial, and when the run exits.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from skillmake.core import interrupts
from skillmake.run import reaper, supervisor

RUN_PID_ENV = "SKILLMAKE_RUN_PID"  # the run's main process: supervisors end their command when it dies
STOP_GRACE_S = 5.0  # how long a supervisor may take to kill its command's processes before it is SIGKILLed
INTERRUPTED_MESSAGE = interrupts.MESSAGE
WAIT_SLICE_S = 0.1  # how often a thread waiting on a command looks for a signal another thread received
# `python -I -S` skips site and the environment (PYTHONPATH must not reach the supervisor); importing the module
# from its folder, rather than running it as a script, uses its cached bytecode. Appended, so stdlib names win.
_BOOT = (f"import sys; sys.path.append({str(Path(supervisor.__file__).resolve().parent)!r}); "
         "import supervisor; sys.exit(supervisor.main(sys.argv))")
_SUPERVISED = os.name == "posix" and bool(sys.executable)

_LIVE = interrupts.LIVE  # pid → the supervisor's Popen; dict ops are atomic under the GIL
_RUN: dict[str, bool] = {}  # "prepared" once prepare_run has run in this process


class Interrupted(KeyboardInterrupt):
    """The run was interrupted, or died, while this process ran: its result must not be recorded.

    A KeyboardInterrupt so that no `except Exception` on the way up turns it into a trial or check result."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Completed:
    """What a finished (or killed) process left behind."""

    returncode: int | None  # None when it had to be killed
    stdout: bytes
    stderr: bytes
    timed_out: bool
    duration_ms: float
    error: str | None = None  # could not start (not found, not executable)


def run(argv: Sequence[str] | str, *, cwd: str, env: dict[str, str], timeout: float,
        stdin: bytes | None = None, shell: bool = False) -> Completed:
    """Run `argv` to completion or until `timeout`; whatever it started is killed when it ends or times out.

    Raises Interrupted when the run is interrupted (or its main process dies) while the command runs."""
    if interrupts.pending():
        raise Interrupted("the run was interrupted")
    command = _command(argv, shell)
    if not _SUPERVISED:
        return _run_plain(command, cwd=cwd, env=env, timeout=timeout, stdin=stdin)
    started = time.monotonic()
    status_r, status_w = os.pipe()
    try:
        with reaper.SPAWNING:  # a sweep never sees this supervisor unregistered (reaper.py)
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _BOOT, str(status_w), str(os.getpid()), _run_pid(), "--",
                 *command],
                cwd=cwd, env=env, pass_fds=(status_w,),
                # Its own session: a SIGKILL to the run's process group must leave the supervisor alive to clean
                # up, and what the command starts is told apart from the run's own processes (reaper.py).
                start_new_session=True,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            _LIVE[proc.pid] = proc
    except OSError as exc:
        os.close(status_r)
        return Completed(returncode=None, stdout=b"", stderr=b"", timed_out=False, duration_ms=0.0,
                         error=f"cannot start {command[0]!r}: {exc.strerror or exc}")
    finally:
        os.close(status_w)
    try:
        if interrupts.interrupted():  # interrupt() ran between the check above and the registration
            _stop(proc)
        out, err, timed_out = _communicate(proc, stdin, timeout)
        status = _read_status(status_r)
    except BaseException:
        _stop(proc)
        _abandon(proc)
        raise
    finally:
        _LIVE.pop(proc.pid, None)
        os.close(status_r)
        if proc.returncode is None or proc.returncode < 0:  # the supervisor was killed: what it held is loose
            sweep_orphans()
    return _completed(status, out, err, timed_out=timed_out, name=command[0], supervisor_code=proc.returncode,
                      duration_ms=(time.monotonic() - started) * 1000)


def _completed(status: tuple[str, str, int], out: bytes, err: bytes, *, timed_out: bool, name: str,
               supervisor_code: int | None, duration_ms: float) -> Completed:
    """The result the supervisor's status line describes; raises Interrupted for a run that was stopped."""
    cause, how, value = status
    if cause == "orphaned" or (cause == "stopped" and interrupts.interrupted()):
        raise Interrupted("the run was interrupted" if interrupts.interrupted() else "the run's main process died")
    if how == "exec":
        return Completed(returncode=None, stdout=b"", stderr=b"", timed_out=False, duration_ms=duration_ms,
                         error=f"cannot start {name!r}: {os.strerror(value)}")
    error = None
    if timed_out:
        pass  # a timeout says it all, however the supervisor then ended
    elif cause == "stopped":
        error = "stopped by a signal sent to its supervisor"
    elif how == "none":
        error = f"its supervisor ended without a status (exit status {supervisor_code})"
    returncode = None if timed_out or error else (-value if how == "signal" else value)
    return Completed(returncode=returncode, stdout=out, stderr=err, timed_out=timed_out, duration_ms=duration_ms,
                     error=error)


def _command(argv: Sequence[str] | str, shell: bool) -> list[str]:
    """The argv to exec, as subprocess.Popen would build it."""
    args = [argv] if isinstance(argv, str) else list(argv)
    return ["/bin/sh", "-c", *args] if shell else args


def _run_pid() -> str:
    value = os.environ.get(RUN_PID_ENV, "")
    return value if value.isdigit() else "0"


def _communicate(proc: subprocess.Popen[bytes], stdin: bytes | None, timeout: float) -> tuple[bytes, bytes, bool]:
    """(stdout, stderr, timed out). On a timeout the supervisor is told to stop; its output is read until it has
    (its command's descendants all dead, the pipes reach EOF), but never longer than STOP_GRACE_S.

    It waits in slices: a signal may have been delivered to another thread than the main one (which then runs
    the handler only when it next runs Python code), and each slice looks at the wakeup pipe for it."""
    deadline = time.monotonic() + timeout
    data = stdin
    try:
        while True:
            try:
                out, err = proc.communicate(data, timeout=max(0.0, min(WAIT_SLICE_S, deadline - time.monotonic())))
                return out or b"", err or b"", False
            except subprocess.TimeoutExpired:
                data = None  # sent (or being sent) already: communicate() goes on from where it was
                if time.monotonic() >= deadline:
                    raise
                if interrupts.pending():
                    _stop(proc)
                _resume_if_stopped(proc.pid)
    except subprocess.TimeoutExpired:
        _stop(proc)
    try:
        out, err = proc.communicate(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired as exc:  # something outside the supervisor's reach holds a pipe
        _abandon(proc)
        return exc.output or b"", exc.stderr or b"", True
    return out or b"", err or b"", True


def _resume_if_stopped(pid: int) -> None:
    """A command may SIGSTOP its own supervisor, which could then neither end it nor report: continue it."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return
    if stat[stat.rfind(b")") + 2:][:1] in (b"T", b"t"):
        try:
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Ask a supervisor to kill its command's processes and exit (a reaped one is skipped; a stopped one is
    continued, or it would never act on the request)."""
    if proc.returncode is None:
        interrupts.stop(proc.pid)


def _abandon(proc: subprocess.Popen[bytes]) -> None:
    """Wait a little for a stopped supervisor, SIGKILL it (and its session) if it hangs, close its pipes."""
    try:
        proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        for kill in (os.killpg, os.kill):
            try:
                kill(proc.pid, signal.SIGKILL)
            except OSError:
                pass
        proc.wait()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def _read_status(fd: int) -> tuple[str, str, int]:
    """(cause, how, value) from the supervisor's status line; ("done", "none", 0) when it left none."""
    os.set_blocking(fd, False)  # the supervisor has exited: what it wrote is all there is
    try:
        data = os.read(fd, 256)
    except BlockingIOError:
        data = b""
    parts = data.decode("ascii", "replace").split()
    if len(parts) == 3 and parts[2].lstrip("-").isdigit():
        return parts[0], parts[1], int(parts[2])
    return "done", "none", 0


def _run_plain(command: list[str], *, cwd: str, env: dict[str, str], timeout: float,
               stdin: bytes | None) -> Completed:
    """Where there is no supervisor (not POSIX): the command in a new process group, killed on a timeout."""
    started = time.monotonic()
    try:
        proc = subprocess.Popen(command, cwd=cwd, env=env, start_new_session=True,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        return Completed(returncode=None, stdout=b"", stderr=b"", timed_out=False, duration_ms=0.0,
                         error=f"cannot start {command[0]!r}: {exc.strerror or exc}")
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        timed_out = True
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return Completed(returncode=None if timed_out else proc.returncode, stdout=out or b"", stderr=err or b"",
                     timed_out=timed_out, duration_ms=(time.monotonic() - started) * 1000)


# --- interrupting a run ---------------------------------------------------------------------------------------


def interrupt() -> None:
    """Stop every live supervised process now, and make every later `run` raise Interrupted. Safe in a signal
    handler: no lock, and signalling never waits."""
    interrupts.interrupt()


def interrupted() -> bool:
    return interrupts.interrupted()


def raise_if_interrupted() -> None:
    """For a task that finished in a doit worker after the run was interrupted: leave rather than take more work."""
    if interrupts.interrupted():
        raise Interrupted("the run was interrupted")


def wait_for_all(timeout: float = STOP_GRACE_S) -> bool:
    """Wait until every supervised process of this process has been reaped and no other thread is still inside
    skillmake (a `-P thread` worker writing the record of a trial that finished just before the interrupt: the
    interpreter kills daemon threads where they stand, which would leave temp files). False if one still is."""
    deadline = time.monotonic() + timeout
    while (_LIVE or _busy_threads()) and time.monotonic() < deadline:
        time.sleep(0.01)
    return not (_LIVE or _busy_threads())


_PACKAGE = str(Path(__file__).resolve().parents[1]) + os.sep  # skillmake/, every layer's frames


def _busy_threads() -> list[int]:
    """Other threads with a skillmake frame on their stack; an idle doit worker waits inside doit's code only."""
    me = threading.get_ident()
    busy = []
    for ident, frame in sys._current_frames().items():
        f: FrameType | None = frame
        while ident != me and f is not None:
            if f.f_code.co_filename.startswith(_PACKAGE):
                busy.append(ident)
                break
            f = f.f_back
    return busy


def sweep_orphans() -> int:
    """End whatever a trial left running past its supervisor (reaper.py); how many processes that was."""
    if not reaper.is_subreaper():
        return 0
    with reaper.SPAWNING:
        return reaper.sweep(keep=set(_LIVE))


def install_interrupt_handlers(*, raise_keyboard_interrupt: bool = False) -> None:
    """The handlers (interrupts.install: the first caller's front end wins) and the run's set-up (prepare_run).

    The skillmake front end passes raise_keyboard_interrupt=True and reports the interrupt itself; for plain
    `doit` (a dodo.py importing skillmake.dodo) the run prints one line and exits 130 instead of a traceback."""
    interrupts.install("skillmake" if raise_keyboard_interrupt else "doit")
    prepare_run()


def prepare_run() -> None:
    """In the run's main process: mark the run (RUN_PID_ENV, which supervisors watch), make it the subreaper of
    whatever its trials leave behind, arrange that doit's `-P process` workers die with it, and that on exit
    nothing of the run is left (at_exit). Once per process, on the main thread; in a worker started by spawn or
    forkserver (which imports the dodo again), only the worker's part."""
    if _RUN or threading.current_thread() is not threading.main_thread():
        return
    import multiprocessing
    import multiprocessing.util

    _RUN["prepared"] = True
    if multiprocessing.parent_process() is None:
        os.environ[RUN_PID_ENV] = str(os.getpid())
        reaper.become_subreaper()
        multiprocessing.util.register_after_fork(_WORKERS, _worker_started)
        atexit.register(_at_exit)  # after multiprocessing's own: runs before it joins the workers
    else:
        _worker_started(_WORKERS)


class _Workers:
    """multiprocessing's after-fork registry holds a weak reference to an object; this is that object."""


_WORKERS = _Workers()


def _worker_started(_: object) -> None:
    """In a doit worker process: SIGTERM it when the run's main process dies (even by SIGKILL), so its trials'
    supervisors are stopped by the handler it inherited and it does not linger waiting for work; and make it the
    subreaper of what its own trials leave behind."""
    interrupts.forked()
    reaper.become_subreaper()
    prctl = supervisor.prctl()
    if prctl is not None:
        prctl(supervisor.PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    run_pid = int(_run_pid())
    if run_pid and not supervisor.alive(run_pid):
        os.kill(os.getpid(), signal.SIGTERM)  # the run died before PDEATHSIG was set
    import multiprocessing.util

    # A worker leaves through os._exit, after multiprocessing's finalizers (never atexit's functions).
    multiprocessing.util.Finalize(None, reaper.sweep, exitpriority=100)


def _at_exit() -> None:
    """However the run ends: when interrupted, give its trials' supervisors and threads a moment to stop, then
    SIGKILL doit workers that did not leave (one blocked on a queue would be joined forever); then end every
    process its trials left behind."""
    if interrupts.interrupted():
        try:
            wait_for_all()
            _end_workers(STOP_GRACE_S)
        except KeyboardInterrupt:  # a signal now must not leave anything behind either
            _end_workers(0.0)
    if reaper.is_subreaper():
        reaper.sweep()


def _end_workers(grace: float) -> None:
    import multiprocessing

    if multiprocessing.parent_process() is not None:
        return
    workers = multiprocessing.active_children()
    deadline = time.monotonic() + grace
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
    for worker in workers:
        if worker.is_alive():
            worker.kill()
            worker.join(1.0)
