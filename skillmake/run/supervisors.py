"""The run's supervisors (supervisor.py): started once each, lent to one command after another, ended with the run.

A process has as many supervisors as it has commands running at once (a doit worker thread's trial, a grade's
python check): `lend` takes an idle one or starts one, `give_back` returns it after a command it saw to the end,
`discard` ends one that may not serve again (it died, did not answer, or its run is over). Every supervisor is in
ALL (and reaper.SUPERVISORS), so a sweep for what escaped one (reaper.py) spares them all and what runs below
them. A supervisor hears its parent die (its socket's end of file, a pidfd), so none outlives the process that
started it; `close_all` ends them at the exit of that process, before anything is swept. `Talk` is one command's
exchange with its supervisor, for process.run.
"""

from __future__ import annotations

import atexit
import marshal
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from skillmake.core import interrupts
from skillmake.run import reaper, supervisor

RUN_PID_ENV = "SKILLMAKE_RUN_PID"  # the run's main process: supervisors end their command when it dies
STOP_GRACE_S = 5.0  # how long a supervisor may take to kill its command's processes before it is SIGKILLed
WAIT_SLICE_S = 0.1  # how often a thread waiting on a command looks for a signal another thread received
# `python -I -S` skips site and the environment (PYTHONPATH must not reach the supervisor); importing the module
# from its folder, rather than running it as a script, uses its cached bytecode. Appended, so stdlib names win.
_BOOT = (f"import sys; sys.path.append({str(Path(supervisor.__file__).resolve().parent)!r}); "
         "import supervisor; sys.exit(supervisor.main(sys.argv))")


class Supervisor:
    """One supervisor process and the socket it is asked on."""

    __slots__ = ("proc", "sock")

    def __init__(self, proc: subprocess.Popen[bytes], sock: socket.socket) -> None:
        self.proc, self.sock = proc, sock

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:  # interrupts.stop_all skips a reaped one
        return self.proc.returncode

    def send(self, command: Sequence[str], *, cwd: str, env: dict[str, str], fds: Sequence[int]) -> None:
        """Ask it to run `command` with `fds` as stdin, stdout and stderr (it gets copies: close yours)."""
        body = marshal.dumps((list(command), cwd, dict(env)))
        data = memoryview(b"%08x" % len(body) + body)
        sent = self.sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, bytes(_ints(fds)))])
        if sent < len(data):
            self.sock.sendall(data[sent:])

    def stop(self) -> None:
        """Ask it to end its command now (SIGTERM, and SIGCONT in case the command stopped it)."""
        if self.proc.returncode is None:
            interrupts.stop(self.proc.pid)

    def end(self, grace: float = 0.0) -> None:
        """Close its socket (an idle supervisor exits at that), wait `grace` seconds, then SIGKILL it; reaped."""
        self.sock.close()
        if grace:
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()


def _ints(fds: Sequence[int]) -> bytes:
    return b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds)


ALL: dict[int, Supervisor] = {}  # pid → every supervisor of this process, idle or busy
_IDLE: list[Supervisor] = []
_state = {"pid": os.getpid(), "atexit": False}
_LOCK = [threading.Lock()]  # a list: a forked child replaces it (one held by another thread would never be freed)


def _lock() -> threading.Lock:
    return _LOCK[0]


def lend() -> Supervisor:
    """An idle supervisor of this process, or a new one (OSError when none can start)."""
    with _lock():
        while _IDLE:
            sup = _IDLE.pop()
            if sup.proc.poll() is None:
                return sup
            ALL.pop(sup.pid, None)
            reaper.SUPERVISORS.discard(sup.pid)
            sup.sock.close()
    return _start()


def give_back(sup: Supervisor) -> None:
    with _lock():
        _IDLE.append(sup)


def discard(sup: Supervisor, grace: float = 0.0) -> None:
    """End a supervisor that must not serve again (reaped when this returns)."""
    sup.end(grace)
    ALL.pop(sup.pid, None)
    reaper.SUPERVISORS.discard(sup.pid)


def run_pid() -> str:
    value = os.environ.get(RUN_PID_ENV, "")
    return value if value.isdigit() else "0"


def _start() -> Supervisor:
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with reaper.SPAWNING:  # a sweep never sees this supervisor unregistered (reaper.py)
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _BOOT, str(theirs.fileno()), str(os.getpid()), run_pid()],
                pass_fds=(theirs.fileno(),), cwd="/",
                # Its own session: a SIGKILL to the run's process group must leave it alive to clean up, and what
                # the commands start is told apart from the run's own processes (reaper.py).
                start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
            sup = ALL[proc.pid] = Supervisor(proc, mine)
            reaper.SUPERVISORS.add(proc.pid)
    except BaseException:
        mine.close()
        raise
    finally:
        theirs.close()
    if not _state["atexit"]:
        _state["atexit"] = True
        atexit.register(close_all)
    return sup


def close_all(grace: float = STOP_GRACE_S) -> None:
    """End every supervisor of this process: idle ones at once; busy ones are told to stop their command first
    and given `grace` seconds to kill its processes."""
    if _state["pid"] != os.getpid():
        return
    idle = {sup.pid for sup in _IDLE}
    busy = [sup for sup in list(ALL.values()) if sup.pid not in idle]
    for sup in busy:
        sup.stop()
    deadline = time.monotonic() + grace
    for sup in busy:
        discard(sup, max(0.0, deadline - time.monotonic()) or 0.001)
    for sup in list(_IDLE):
        discard(sup)
    _IDLE.clear()


def forked() -> None:
    """In a forked child (a doit worker): the parent's supervisors are not its own; forget them (closing only
    this process's copies of their sockets) and start afresh."""
    for sup in ALL.values():
        sup.sock.close()
    ALL.clear()
    reaper.SUPERVISORS.clear()
    _IDLE.clear()
    _state["pid"] = os.getpid()
    _LOCK[0] = threading.Lock()


class Talk:
    """One command's exchange with its supervisor: stdin written, stdout and stderr read to their end, the answer
    line read; a stop sent on a timeout or an interrupt (and again, until answered); the supervisor given up for
    dead (and what escaped it swept) when it dies or does not answer in time."""

    def __init__(self, sup: Supervisor, ours: list[int], stdin: bytes | None, *, deadline: float):
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
        # The wakeup pipe (interrupts.py): readable when a signal came, so its reading (`pending`) is done only then
        # rather than once per wake-up (four reads a trial); -1 when there is none, or it went bad: then every time.
        self.wakeup = interrupts.wakeup_fd()
        self.signalled = False
        if self.wakeup >= 0:
            self.poll.register(self.wakeup, select.POLLIN)
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
            for fd, what in events:
                if fd == sock:
                    self._answer()
                elif fd == self.wakeup:
                    self._signalled(what)
                elif fd == self.stdin_fd:
                    self._write()
                else:
                    self._read(fd)
            if self._pending() and not (self.status or self.dead):
                self._stop(now)  # again each slice: a stop signal can cross the end of the previous command
            if not events:
                _resume_if_stopped(self.sup.pid)

    def _signalled(self, what: int) -> None:
        self.signalled = True
        if what & (select.POLLNVAL | select.POLLERR | select.POLLHUP):  # not a pipe to wait on any more
            self._forget_wakeup()

    def _pending(self) -> bool:
        """interrupts.pending, asked only when a signal came (or every time, without the wakeup pipe)."""
        if interrupts.interrupted():
            self._forget_wakeup()  # for good: a pipe nobody drains any more would wake this loop at once, always
            return True
        if self.wakeup >= 0 and not self.signalled:
            return False
        self.signalled = False
        return interrupts.pending()

    def _forget_wakeup(self) -> None:
        if self.wakeup >= 0:
            self.poll.unregister(self.wakeup)
            self.wakeup = -1

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
        discard(self.sup)
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


def sweep_orphans() -> int:
    """End whatever a trial left running past its supervisor (reaper.py); how many processes that was."""
    if not reaper.is_subreaper():
        return 0
    with reaper.SPAWNING:
        return reaper.sweep()
