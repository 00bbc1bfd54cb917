"""Running a trial's processes so that none outlives its trial: each under a supervisor, all stopped on interrupt.

Every process a trial starts (agent, setup/cleanup command, python check, CLI judge) runs under a supervisor
(supervisor.py), which kills every descendant when the command ends, on a timeout, and when the run is interrupted
or dies. A supervisor is started once and serves one command after another (supervisors.py); its command's
output comes straight to this process through pipes it hands over. The busy supervisors are registered
(interrupts.LIVE) so an interrupted run stops them all at once and exits without waiting for trials (the handlers
are interrupts.py's). What escapes a supervisor (a command that kills or stops it) is found by the run's own
process, a subreaper, and ended (reaper.py): after such a trial, and when the run exits.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
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
from skillmake.run import reaper, supervisor, supervisors

RUN_PID_ENV = supervisors.RUN_PID_ENV  # the run's main process: supervisors end their command when it dies
STOP_GRACE_S = supervisors.STOP_GRACE_S  # how long a supervisor may take to kill its command's processes
INTERRUPTED_MESSAGE = interrupts.MESSAGE
_SUPERVISED = os.name == "posix" and bool(sys.executable)

_LIVE = interrupts.LIVE  # pid → the busy supervisor; dict ops are atomic under the GIL
sweep_orphans = supervisors.sweep_orphans  # end what escaped a supervisor (reaper.py)
_RUN: dict[str, bool] = {}  # "prepared" once prepare_run has run in this process
# A write this small to an empty pipe is whole and never blocks (POSIX PIPE_BUF; a pipe holds at least a page): a
# prompt that fits is written before the command starts, without a non-blocking pipe and a poll for it.
_PIPE_BUF = getattr(select, "PIPE_BUF", 512)


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
    ours: list[int] = []  # this end of the command's stdin, stdout and stderr
    try:
        sup, ours = _hand_over(command, cwd=cwd, env=env, stdin=stdin)
    except OSError as exc:
        return Completed(returncode=None, stdout=b"", stderr=b"", timed_out=False, duration_ms=0.0,
                         error=f"cannot start {command[0]!r}: {exc.strerror or exc}")
    talk = supervisors.Talk(sup, ours, stdin if ours[0] >= 0 else None, deadline=started + timeout)
    try:
        _LIVE[sup.pid] = sup
        if interrupts.interrupted():  # interrupt() ran between the check above and the registration
            sup.stop()
        talk.run()
    except BaseException:
        sup.stop()
        raise
    finally:
        _LIVE.pop(sup.pid, None)
        talk.close()
        if talk.status is None or talk.status[0] == "orphaned":  # it may not serve again; what it held may be loose
            if not talk.dead:
                supervisors.discard(sup, STOP_GRACE_S)
                supervisors.sweep_orphans()
        else:
            supervisors.give_back(sup)
    return _completed(talk.answer(), talk.output(1), talk.output(2), timed_out=talk.timed_out, name=command[0],
                      supervisor_code=sup.returncode, duration_ms=(time.monotonic() - started) * 1000)


def _hand_over(command: list[str], *, cwd: str, env: dict[str, str],
               stdin: bytes | None) -> tuple[supervisors.Supervisor, list[int]]:
    """A supervisor that was asked to run `command`, and this process's ends of its stdin (-1 when none is
    written), stdout and stderr. A supervisor that died idle is replaced once."""
    for attempt in (1, 2):
        theirs: list[int] = []
        ours: list[int] = []
        try:
            if stdin is None:
                theirs.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
                ours.append(-1)
            else:
                r, w = os.pipe()
                theirs.append(r)
                if len(stdin) <= _PIPE_BUF:  # fits the empty pipe whole: written now, never waited for
                    try:
                        if stdin:
                            os.write(w, stdin)
                    finally:
                        os.close(w)
                    w = -1
                ours.append(w)
            for _ in (1, 2):
                r, w = os.pipe()
                ours.append(r)
                theirs.append(w)
            sup = supervisors.lend()
            try:
                sup.send(command, cwd=cwd, env=env, fds=theirs)
            except OSError:
                supervisors.discard(sup)
                if attempt == 2:
                    raise
                for fd in ours:
                    if fd >= 0:
                        os.close(fd)
                continue
            return sup, ours
        except BaseException:
            for fd in ours:
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
    raise AssertionError("unreachable")


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


# Threads of skillmake's own that never hold a half-written file and need not end first: the store's fsync thread
# (store/syncer.py; what it has not synced yet, the exit's flush waits for) and the reporter's ticker, which only
# prints (engine/reporter.py; still running when an interrupt cut doit's finish short, and then waited for in full).
HELPER_THREADS = frozenset({"skillmake-fsync", "skillmake-reporter"})


def _busy_threads() -> list[int]:
    """Other threads with a skillmake frame on their stack; an idle doit worker waits inside doit's code only."""
    me = threading.get_ident()
    helpers = {t.ident for t in threading.enumerate() if t.name in HELPER_THREADS}
    busy = []
    for ident, frame in sys._current_frames().items():
        f: FrameType | None = frame
        while ident != me and ident not in helpers and f is not None:
            if f.f_code.co_filename.startswith(_PACKAGE):
                busy.append(ident)
                break
            f = f.f_back
    return busy


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
    supervisors.forked()
    reaper.become_subreaper()
    prctl = supervisor.prctl()
    if prctl is not None:
        prctl(supervisor.PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    run_pid = int(supervisors.run_pid())
    if run_pid and not supervisor.alive(run_pid):
        os.kill(os.getpid(), signal.SIGTERM)  # the run died before PDEATHSIG was set
    import multiprocessing.util

    # A worker leaves through os._exit, after multiprocessing's finalizers (never atexit's functions).
    multiprocessing.util.Finalize(None, _worker_exit, exitpriority=100)


def _worker_exit() -> None:
    """A doit worker leaving: a pending interrupt retry is cancelled (it has nothing left to unwind), its
    supervisors end, then whatever its trials left behind, and its spare trial folders go; the records it wrote are
    made durable (the store's fsync thread gathers them a moment: atexit, which waits for it, is skipped here)."""
    interrupts.leaving()
    supervisors.close_all()
    reaper.sweep()
    from skillmake.run.workspace import clear_spares  # only in a worker: process.py stays light to import
    from skillmake.store.syncer import SYNCER

    clear_spares()
    with contextlib.suppress(BaseException):  # a second Ctrl-C ends the wait (what is left is in the page cache)
        SYNCER.flush()


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
    for _ in range(2):
        try:
            supervisors.close_all()
            if reaper.is_subreaper():
                reaper.sweep()
            return
        except (KeyboardInterrupt, SystemExit):
            # A stop signal crossing the run's end (a process group's SIGTERM as the run finishes): the handler
            # raised, and marked the run unwinding, so the next one will not; end and sweep again, and say nothing
            # (an exit function's exception is printed as a traceback, and cut the sweep short).
            continue


RESIGNAL_S = 0.1  # how often a doit worker that has not left is sent its stop signal again


def _end_workers(grace: float) -> None:
    """Wait up to `grace` for doit's workers to leave, then SIGKILL the rest.

    doit sent each its SIGTERM, but a worker may never act on it: the kernel hands a process's signal to any
    thread that does not block it, and while the worker's main thread blocked every signal (subprocess's vfork)
    another thread (a queue's feeder, the store's fsync thread) took it; the interpreter can then miss it, and
    the main thread waits for work in doit's loop until it is killed (5.1 s for a SIGTERM'd `-P process` run, its
    stack in the job queue's get). A signal sent again now finds the main thread waiting in a read, unmasked: the
    kernel gives it that thread, the read is interrupted and the handler runs there (interrupts.py)."""
    import multiprocessing
    from multiprocessing.connection import wait

    if multiprocessing.parent_process() is not None:
        return
    workers = multiprocessing.active_children()
    deadline = time.monotonic() + grace
    while True:
        alive = [worker for worker in workers if worker.is_alive()]
        left = deadline - time.monotonic()
        if not alive or left <= 0:
            break
        wait([worker.sentinel for worker in alive], min(RESIGNAL_S, left))
        for worker in alive:
            if worker.is_alive() and worker.pid:
                try:
                    os.kill(worker.pid, signal.SIGTERM)
                except OSError:
                    pass
    for worker in workers:
        if worker.is_alive():
            worker.kill()
            worker.join(1.0)
