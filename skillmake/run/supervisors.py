"""The run's supervisors (supervisor.py): started once each, lent to one command after another, ended with the run.

A process has as many supervisors as it has commands running at once (a doit worker thread's trial, a grade's
python check): `lend` takes an idle one or starts one, `give_back` returns it after a command it saw to the end,
`discard` ends one that may not serve again (it died, did not answer, or its run is over). Every supervisor is in
ALL (and reaper.SUPERVISORS), so a sweep for what escaped one (reaper.py) spares them all and what runs below
them. A supervisor hears its parent die (its socket's end of file, a pidfd), so none outlives the process that
started it; `close_all` ends them at the exit of that process, before anything is swept.
"""

from __future__ import annotations

import atexit
import marshal
import os
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
