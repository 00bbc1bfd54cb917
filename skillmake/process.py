"""Running a trial's processes so that none outlives its trial: each under a supervisor, all stopped on interrupt.

Every process a trial starts (agent, setup/cleanup command, python check, CLI judge) runs under
`skillmake/supervisor.py`, which kills every descendant when the command ends, on a timeout, and when the run
is interrupted or dies (see that module). This module keeps a registry of the live supervisors so an
interrupted run stops them all at once and exits without waiting for trials, and it installs the SIGINT/SIGTERM
handlers that do so, for the `skillmake` front end and for plain `doit` alike.
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

from . import supervisor

RUN_PID_ENV = "SKILLMAKE_RUN_PID"  # the run's main process: supervisors end their command when it dies
STOP_GRACE_S = 5.0  # how long a supervisor may take to kill its command's processes before it is SIGKILLed
INTERRUPTED_MESSAGE = "interrupted; finished trials are kept in the store"
# `python -I -S` skips site and the environment (PYTHONPATH must not reach the supervisor); importing the module
# from its folder, rather than running it as a script, uses its cached bytecode. Appended, so stdlib names win.
_BOOT = (f"import sys; sys.path.append({str(Path(supervisor.__file__).resolve().parent)!r}); "
         "import supervisor; sys.exit(supervisor.main(sys.argv))")
_SUPERVISED = os.name == "posix" and bool(sys.executable)

_LIVE: dict[int, subprocess.Popen[bytes]] = {}  # pid → the supervisor; dict ops are atomic under the GIL
_INTERRUPTED = threading.Event()
_HANDLERS: dict[str, bool] = {}  # "raise_keyboard_interrupt" → the mode the first installer chose


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
    if _INTERRUPTED.is_set():
        raise Interrupted("the run was interrupted")
    command = _command(argv, shell)
    if not _SUPERVISED:
        return _run_plain(command, cwd=cwd, env=env, timeout=timeout, stdin=stdin)
    started = time.monotonic()
    status_r, status_w = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _BOOT, str(status_w), str(os.getpid()), _run_pid(), "--", *command],
            cwd=cwd, env=env, pass_fds=(status_w,),
            # Its own session: a SIGKILL to the run's process group must leave the supervisor alive to clean up.
            start_new_session=True,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        os.close(status_r)
        return Completed(returncode=None, stdout=b"", stderr=b"", timed_out=False, duration_ms=0.0,
                         error=f"cannot start {command[0]!r}: {exc.strerror or exc}")
    finally:
        os.close(status_w)
    _LIVE[proc.pid] = proc
    try:
        if _INTERRUPTED.is_set():  # interrupt() ran between the check above and the registration
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
    return _completed(status, out, err, timed_out=timed_out, name=command[0], supervisor_code=proc.returncode,
                      duration_ms=(time.monotonic() - started) * 1000)


def _completed(status: tuple[str, str, int], out: bytes, err: bytes, *, timed_out: bool, name: str,
               supervisor_code: int | None, duration_ms: float) -> Completed:
    """The result the supervisor's status line describes; raises Interrupted for a run that was stopped."""
    cause, how, value = status
    if cause == "orphaned" or (cause == "stopped" and _INTERRUPTED.is_set()):
        raise Interrupted("the run was interrupted" if _INTERRUPTED.is_set() else "the run's main process died")
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
    (its command's descendants all dead, the pipes reach EOF), but never longer than STOP_GRACE_S."""
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
        return out or b"", err or b"", False
    except subprocess.TimeoutExpired:
        _stop(proc)
    try:
        out, err = proc.communicate(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired as exc:  # something outside the supervisor's reach holds a pipe
        _abandon(proc)
        return exc.output or b"", exc.stderr or b"", True
    return out or b"", err or b"", True


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Ask a supervisor to kill its command's processes and exit (send_signal skips a reaped pid)."""
    try:
        proc.send_signal(signal.SIGTERM)
    except OSError:
        pass


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
    _INTERRUPTED.set()
    for proc in list(_LIVE.values()):
        _stop(proc)


def interrupted() -> bool:
    return _INTERRUPTED.is_set()


def wait_for_all(timeout: float = STOP_GRACE_S) -> bool:
    """Wait until every supervised process of this process has been reaped and no other thread is still inside
    skillmake (a `-P thread` worker writing the record of a trial that finished just before the interrupt: the
    interpreter kills daemon threads where they stand, which would leave temp files). False if one still is."""
    deadline = time.monotonic() + timeout
    while (_LIVE or _busy_threads()) and time.monotonic() < deadline:
        time.sleep(0.01)
    return not (_LIVE or _busy_threads())


_PACKAGE = str(Path(__file__).resolve().parent) + os.sep


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


def install_interrupt_handlers(*, raise_keyboard_interrupt: bool = False) -> None:
    """SIGINT and SIGTERM stop every supervised process at once, then unwind the run so doit saves what finished.

    The skillmake front end passes raise_keyboard_interrupt=True and reports the interrupt itself; for plain
    `doit` (a dodo.py importing skillmake.dodo) the run prints one line and exits 130 instead of a traceback.
    In the run's main process this also marks the run (RUN_PID_ENV, which supervisors watch) and arranges that
    doit's `-P process` workers die with it. The first call wins; later ones, and calls off the main thread,
    do nothing."""
    if _HANDLERS or threading.current_thread() is not threading.main_thread():
        return
    import multiprocessing
    import multiprocessing.util

    _HANDLERS["raise_keyboard_interrupt"] = raise_keyboard_interrupt
    if multiprocessing.parent_process() is None:
        os.environ[RUN_PID_ENV] = str(os.getpid())
        multiprocessing.util.register_after_fork(_WORKERS, _worker_started)
    else:  # a worker started by spawn/forkserver, which imported the dodo again
        _worker_started(_WORKERS)
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    atexit.register(_wait_if_interrupted)


class _Workers:
    """multiprocessing's after-fork registry holds a weak reference to an object; this is that object."""


_WORKERS = _Workers()


def _worker_started(_: object) -> None:
    """In a doit worker process: SIGTERM it when the run's main process dies (even by SIGKILL), so its trials'
    supervisors are stopped by the handler it inherited and it does not linger waiting for work."""
    _LIVE.clear()  # the parent's supervisors are not this process's to stop
    prctl = supervisor.prctl()
    if prctl is not None:
        prctl(supervisor.PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    run_pid = int(_run_pid())
    if run_pid and not supervisor.alive(run_pid):
        os.kill(os.getpid(), signal.SIGTERM)  # the run died before PDEATHSIG was set




def _on_signal(signum: int, frame: FrameType | None) -> None:
    first = not _INTERRUPTED.is_set()
    interrupt()
    if not first:
        return  # already unwinding; a second signal must not cut its cleanup short
    if os.environ.get(RUN_PID_ENV) != str(os.getpid()) or _HANDLERS.get("raise_keyboard_interrupt"):
        raise KeyboardInterrupt  # a worker unwinds its trial; the front end reports the interrupt itself
    os.write(2, f"doit: {INTERRUPTED_MESSAGE}\n".encode())  # print() may be mid-write on this very thread
    raise SystemExit(130)


def _wait_if_interrupted() -> None:
    if _INTERRUPTED.is_set():
        wait_for_all()
