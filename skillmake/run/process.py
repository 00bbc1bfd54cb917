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
WAIT_SLICE_S = 0.1  # how often a thread waiting on a command looks for a signal another thread received
_SUPERVISED = os.name == "posix" and bool(sys.executable)

_LIVE = interrupts.LIVE  # pid → the busy supervisor; dict ops are atomic under the GIL
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
    ours: list[int] = []  # this end of the command's stdin, stdout and stderr
    try:
        sup, ours = _hand_over(command, cwd=cwd, env=env, stdin=stdin)
    except OSError as exc:
        return Completed(returncode=None, stdout=b"", stderr=b"", timed_out=False, duration_ms=0.0,
                         error=f"cannot start {command[0]!r}: {exc.strerror or exc}")
    talk = _Talk(sup, ours, stdin, deadline=started + timeout)
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
                sweep_orphans()
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


class _Talk:
    """One command's exchange with its supervisor: stdin written, stdout and stderr read to their end, the answer
    line read; a stop sent on a timeout or an interrupt (and again, until answered); the supervisor given up for
    dead (and what escaped it swept) when it dies or does not answer in time."""

    def __init__(self, sup: supervisors.Supervisor, ours: list[int], stdin: bytes | None, *, deadline: float):
        self.sup, self.deadline = sup, deadline
        self.stdin_fd, out, err = ours
        self.data = memoryview(stdin or b"")
        self.chunks: dict[int, list[bytes]] = {out: [], err: []}
        self.fds = {1: out, 2: err}
        self.line = b""
        self.status: tuple[str, str, int] | None = None
        self.dead = False
        self.timed_out = False
        self.give_up: float | None = None  # when a stop was sent: the moment to stop waiting for its effect
        self.poll = select.poll()
        for fd in (out, err):
            self.poll.register(fd, select.POLLIN)
        self.poll.register(sup.sock.fileno(), select.POLLIN)
        if self.stdin_fd >= 0:
            os.set_blocking(self.stdin_fd, False)
            self.poll.register(self.stdin_fd, select.POLLOUT)
        self.open = {out, err}

    def run(self) -> None:
        sock = self.sup.sock.fileno()
        while self.open or not (self.status or self.dead):
            now = time.monotonic()
            if self.give_up is None and now >= self.deadline and not (self.status or self.dead):
                self.timed_out = True
                self._stop(now)
            elif self.give_up is not None and now >= self.give_up:
                if self.status or self.dead:
                    return  # something outside the supervisor's reach holds a pipe: leave it
                self._died()  # it does not answer: SIGKILL it, sweep what it held, wait once more
                self.give_up = now + STOP_GRACE_S
            limit = self.give_up if self.give_up is not None else self.deadline
            events = self.poll.poll(max(0.0, min(WAIT_SLICE_S, limit - now)) * 1000)
            for fd, _ in events:
                if fd == sock:
                    self._answer()
                elif fd == self.stdin_fd:
                    self._write()
                else:
                    self._read(fd)
            if interrupts.pending() and not (self.status or self.dead):
                self._stop(now)  # again each slice: a stop signal can cross the end of the previous command
            if not events:
                _resume_if_stopped(self.sup.pid)

    def _stop(self, now: float) -> None:
        self.sup.stop()
        if self.give_up is None:
            self.give_up = now + STOP_GRACE_S

    def _read(self, fd: int) -> None:
        data = os.read(fd, 1 << 16)
        if data:
            self.chunks[fd].append(data)
            return
        self.poll.unregister(fd)
        self.open.discard(fd)
        os.close(fd)  # at its end: a run makes thousands of these
        if self.status and self.open and self.give_up is None:
            self.give_up = time.monotonic() + STOP_GRACE_S

    def _write(self) -> None:
        try:
            n = os.write(self.stdin_fd, self.data[:1 << 16])
        except BlockingIOError:
            return
        except OSError:  # the command closed its stdin (EPIPE): what it did not read is not sent
            n = len(self.data)
        self.data = self.data[n:]
        if not self.data:
            self.poll.unregister(self.stdin_fd)
            os.close(self.stdin_fd)
            self.stdin_fd = -1

    def _answer(self) -> None:
        try:
            data = self.sup.sock.recv(256)
        except OSError:
            data = b""
        if not data:
            self._died()
            return
        self.line += data
        if self.line.endswith(b"\n"):
            self.status = _parse(self.line)
            self.poll.unregister(self.sup.sock.fileno())
            if self.open:  # the command's processes are dead: its pipes reach their end at once
                self.give_up = time.monotonic() + STOP_GRACE_S

    def _died(self) -> None:
        """The supervisor died (or is made to): reap it and end what it held (re-parented to this process)."""
        if self.dead:
            return
        self.dead = True
        try:
            self.poll.unregister(self.sup.sock.fileno())
        except KeyError:
            pass
        supervisors.discard(self.sup)
        sweep_orphans()
        if self.open:  # swept: its pipes reach their end, unless something outside this process's reach holds one
            self.give_up = min(self.give_up or float("inf"), time.monotonic() + STOP_GRACE_S)

    def answer(self) -> tuple[str, str, int]:
        return self.status or ("done", "none", 0)

    def output(self, which: int) -> bytes:
        return b"".join(self.chunks[self.fds[which]])

    def close(self) -> None:
        for fd in (self.stdin_fd, *self.open):
            if fd >= 0:
                os.close(fd)
        self.stdin_fd = -1
        self.open.clear()


def _parse(line: bytes) -> tuple[str, str, int]:
    """(cause, how, value) from the supervisor's answer; ("done", "none", 0) when it is not one."""
    parts = line.decode("ascii", "replace").split()
    if len(parts) == 3 and parts[2].lstrip("-").isdigit():
        return parts[0], parts[1], int(parts[2])
    return "done", "none", 0


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
        return reaper.sweep()


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
    """A doit worker leaving: its supervisors end, then whatever its trials left behind."""
    supervisors.close_all()
    reaper.sweep()


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
    supervisors.close_all()
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
