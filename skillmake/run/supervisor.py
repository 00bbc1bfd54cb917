"""A run's process supervisor: runs the trials' commands one at a time and leaves none of a command's
descendants alive when it ends.

Started by `skillmake.run.process` as `python -I -S … SOCKET_FD PARENT RUN` (this module's main), once per
worker of a run (not once per command: an interpreter's start-up was most of a trial's cost), it serves requests
on a Unix socket: each names a command (argv, cwd, environment) and carries its stdin, stdout and stderr as file
descriptors (SCM_RIGHTS), so its output goes straight to the run. It runs the command in a session of its own and,
when the command exits, when it is told to stop (SIGTERM/SIGINT/SIGHUP: a timeout or an interrupted run), or when
its parent or the run dies, it SIGKILLs every descendant and reaps them before it answers. On Linux nothing
escapes it: it is a child subreaper, so a double-forked or setsid'd daemon is reparented to it rather than to
init, and it enumerates descendants through /proc. Between commands it has no descendant at all, so the next
command starts clean. It hears its parent die through the socket's end of file and a pidfd, and the run's main
process through a pidfd (in `-P process` mode the run can die while the worker that started this process lives
on); then it ends its command and exits.

The answer to each request is one line: `<cause> <how> <value>` where cause is `done` (the command ended by
itself), `stopped` (told to stop) or `orphaned` (parent or run died), how/value `exit N`, `signal N`, or
`exec ERRNO` when the command could not start.

It starts cheaply: stdlib C modules only, nothing of skillmake, no `signal.py` (that imports enum) and no
`typing`. Elsewhere than Linux it still runs the command and kills its process group.
"""

from __future__ import annotations

import marshal
import os
import select
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy reads these stubs; at run time the C modules are ~8 ms cheaper to import
    import signal as sig
    import socket as _socket
    from collections.abc import Callable

    Prctl = Callable[..., int]
else:
    try:
        import _signal as sig
    except ImportError:  # pragma: no cover - an interpreter without the C module
        import signal as sig
    import _socket

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STOP_SIGNALS = (sig.SIGTERM, sig.SIGINT, sig.SIGHUP)
POLL_S = 0.5  # how often to look for a dead parent/run where the kernel cannot tell us (no pidfd)
HEADER = 8  # a request: its length as 8 ASCII hex digits, then marshal.dumps((argv, cwd, env))
FDS = 3  # stdin, stdout, stderr of the command


def prctl() -> Prctl | None:
    """libc's prctl, or None where there is none (not Linux, no ctypes)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        return None


def _ignore(signum: int, frame: object) -> None:
    """The wakeup fd carries the signal number; the handler only has to exist so the default action does not."""


def _spawn(command: list[str], cwd: str, env: dict[str, str], fds: list[int]) -> tuple[int, int]:
    """Start `command` in a new session, in `cwd`, with `fds` as its stdin, stdout and stderr; (pid, 0), or
    (-1, errno) when it could not start.

    posix_spawn (a vfork and an exec, no Python in the child): a fork running Python code until its exec took twice
    the CPU and five times the wall time of the command `true` itself. It cannot set the command's parent-death
    signal, so a command whose supervisor was SIGKILLed is ended by the run's process, the subreaper it is then
    re-parented to (reaper.py), as what the command had started would be anyway."""
    try:
        path = _which(command[0], env)
        os.chdir(cwd)  # this process runs one command at a time: its own folder is the command's to choose
        pid = os.posix_spawn(path, command, env, setsid=True, setsigmask=(), setsigdef=_DEFAULTS,
                             file_actions=[(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(fds)])
    except OSError as exc:
        return -1, exc.errno or 0
    except NotImplementedError:  # no POSIX_SPAWN_SETSID (not glibc): fork, and Python until the exec
        return _fork(path, command, env, fds)
    finally:
        try:
            os.chdir("/")  # never hold a trial's folder open between commands
        except OSError:
            pass
    return pid, 0


def _fork(path: str, command: list[str], env: dict[str, str], fds: list[int]) -> tuple[int, int]:
    err_r, err_w = os.pipe()  # close-on-exec: EOF means the exec succeeded
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; coverage cannot follow it past exec
        try:
            os.close(err_r)
            for signum in _DEFAULTS:
                sig.signal(signum, sig.SIG_DFL)
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            os.setsid()
            os.execve(path, command, env)
        except OSError as exc:
            os.write(err_w, str(exc.errno or 0).encode())
        finally:
            os._exit(127)
    os.close(err_w)
    try:
        data = b""
        while chunk := os.read(err_r, 64):
            data += chunk
    finally:
        os.close(err_r)
    if data:
        os.waitpid(pid, 0)
        return -1, int(data)
    return pid, 0


# Signals the command gets with their default action (Python ignores SIGPIPE and SIGXFSZ; the others are handled
# here, which an exec resets anyway).
_DEFAULTS = (*STOP_SIGNALS, sig.SIGCHLD, sig.SIGPIPE, sig.SIGXFSZ)


def _which(name: str, env: dict[str, str]) -> str:
    """The file `name` runs, searched on the command's own PATH as execvp(3) does (posix_spawnp would search
    this process's)."""
    if "/" in name:
        return name
    denied: OSError | None = None
    for folder in env.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(folder or ".", name)
        if os.path.isfile(path):
            if os.access(path, os.X_OK):
                return path
            denied = denied or PermissionError(13, "Permission denied", path)
    raise denied or FileNotFoundError(2, "No such file or directory", name)


def _descendants(me: int) -> list[int] | None:
    """Every live (non-zombie) process below `me`, from /proc; None where there is no /proc to read."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    children: dict[int, list[int]] = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone since listdir
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) < 2 or fields[0] == b"Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = [me]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


def _reap(command: int, status: list[int], *, block: bool) -> bool:
    """Reap exited children (the command's status goes into `status`); False once there are none left."""
    while True:
        try:
            pid, code = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True
        if pid == command:
            status.append(code)
        if block:
            return True


def _kill_all(me: int, command: int, status: list[int]) -> None:
    """SIGKILL every descendant and reap them until none is left. As a subreaper, having no child means having
    no descendant at all, which keeps the common case (the command left nothing behind) free of a /proc scan."""
    while _reap(command, status, block=False):
        pids = _descendants(me)
        if pids is None:  # no /proc: the command's session group is what can be found
            try:
                os.killpg(command, sig.SIGKILL)
            except OSError:
                pass
            while _reap(command, status, block=True):
                pass
            return
        if not pids:
            continue  # only zombies: the next _reap collects them
        for pid in pids:
            try:
                os.kill(pid, sig.SIGKILL)
            except OSError:
                pass
        # Every live descendant hangs below a child of ours, so this returns once one of them has died.
        _reap(command, status, block=True)


def _pidfd(pid: int) -> int | None:
    """A pidfd that becomes readable when `pid` exits; -1 when it is gone already, None where pidfds are missing."""
    if pid <= 0 or not hasattr(os, "pidfd_open"):
        return None
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return -1
    except OSError:
        return None


def alive(pid: int) -> bool:
    """Whether `pid` exists (EPERM: it exists, owned by another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class _Watch:
    """What this supervisor listens to: its socket, the wakeup pipe of its signals, and pidfds of its parent and
    of the run (or, without pidfds, a look now and then)."""

    def __init__(self, sock: _socket.socket, *, parent: int, run: int) -> None:
        self.sock, self.parent, self.run = sock, parent, run
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(wake_w, False)
        sig.set_wakeup_fd(wake_w)
        for signum in (*STOP_SIGNALS, sig.SIGCHLD):
            sig.signal(signum, _ignore)
        self.deaths = [fd for fd in (_pidfd(parent), _pidfd(run) if run > 0 else None) if fd is not None]
        self.gone = -1 in self.deaths or os.getppid() != parent  # before the watches were set
        self.deaths = [fd for fd in self.deaths if fd >= 0]
        self.fds = [sock.fileno(), self.wake_r, *self.deaths]
        # Without pidfds, a dead parent or run is found by looking now and then.
        self.poll = None if len(self.deaths) == 1 + (run > 0) else POLL_S

    def wait(self) -> tuple[bool, bool, bool]:
        """Block until something happens: (the socket is readable, a stop signal came, the parent or run died)."""
        ready, _, _ = select.select(self.fds, [], [], self.poll)
        stop = self.wake_r in ready and any(b in STOP_SIGNALS for b in self.drain())
        died = any(fd in ready for fd in self.deaths) or (stop and os.getppid() != self.parent)
        if self.poll is not None and not died:
            died = os.getppid() != self.parent or (self.run > 0 and not alive(self.run))
        return self.sock.fileno() in ready, stop, died

    def drain(self) -> bytes:
        data = b""
        while True:
            try:
                chunk = os.read(self.wake_r, 256)
            except BlockingIOError:
                return data
            if not chunk:
                return data
            data += chunk


def _request(sock: _socket.socket) -> tuple[list[str], str, dict[str, str], list[int]] | None:
    """The next request (argv, cwd, env, fds); None at end of file (the parent is gone) or on garbage."""
    fds: list[int] = []
    try:
        # Close-on-exec: a command gets them only as its stdin, stdout and stderr (dup2 clears the flag).
        head, anc, _, _ = sock.recvmsg(HEADER, _socket.CMSG_LEN(FDS * 4), _socket.MSG_CMSG_CLOEXEC)
        for level, kind, data in anc:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                fds += [int.from_bytes(data[i:i + 4], sys.byteorder) for i in range(0, len(data) - 3, 4)]
        while 0 < len(head) < HEADER:
            chunk = sock.recv(HEADER - len(head))
            if not chunk:
                break
            head += chunk
        size = int(head, 16) if len(head) == HEADER else -1
        body = b""
        while size >= 0 and len(body) < size:
            chunk = sock.recv(min(size - len(body), 1 << 20))
            if not chunk:
                break
            body += chunk
        if size < 0 or len(body) < size or len(fds) != FDS:
            raise ValueError("a short or malformed request")
        argv, cwd, env = marshal.loads(body)
        return list(argv), str(cwd), dict(env), fds
    except (OSError, ValueError, EOFError, TypeError):
        for fd in fds:
            os.close(fd)
        return None


def serve(sock: _socket.socket, *, parent: int, run: int) -> int:
    """Answer requests until the parent closes the socket or it or the run dies."""
    me = os.getpid()
    watch = _Watch(sock, parent=parent, run=run)
    prctl_ = prctl()
    if prctl_ is not None:
        prctl_(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    while not watch.gone:
        readable, _, died = watch.wait()
        if died:
            return 0
        if not readable:
            continue  # a stop signal between commands is for a command that has ended already
        request = _request(sock)
        if request is None:
            return 0
        argv, cwd, env, fds = request
        watch.drain()  # stop signals until now were meant for an earlier command
        try:
            line, orphaned = _one(watch, me, argv, cwd, env, fds)
        finally:
            for fd in fds:
                os.close(fd)
        try:
            sock.sendall(line.encode() + b"\n")
        except OSError:
            return 0  # the parent is gone; nobody is left to tell
        if orphaned:
            return 0
    return 0


def _one(watch: _Watch, me: int, argv: list[str], cwd: str, env: dict[str, str],
         fds: list[int]) -> tuple[str, bool]:
    """Run one command to its end; (the answer line, whether the parent or run died meanwhile)."""
    command_pid, errno = _spawn(argv, cwd, env, fds)
    if command_pid < 0:
        return f"done exec {errno}", False
    for fd in fds:  # the command holds them now: its end of file must not wait for this process
        os.close(fd)
    fds.clear()
    status: list[int] = []
    cause = "done"
    while True:
        _reap(command_pid, status, block=False)
        if status:
            break
        readable, stop, died = watch.wait()
        if readable:  # a byte on the socket while a command runs asks to stop it; end of file: the parent is gone
            data = _peek(watch.sock)
            died = died or data == b""
            readable = bool(data)
        if died:
            cause = "orphaned"
            break
        if stop or readable:
            _reap(command_pid, status, block=False)
            if not status:  # a command that ended before the stop came keeps its own result
                cause = "stopped"
            break
    _kill_all(me, command_pid, status)
    if not status or os.WIFSIGNALED(status[0]):  # no status (cannot be, as its parent): killed by SIGKILL
        signum = os.WTERMSIG(status[0]) if status else sig.SIGKILL
        return f"{cause} signal {signum}", cause == "orphaned"
    code = status[0]
    value = os.WEXITSTATUS(code) if os.WIFEXITED(code) else 1
    return f"{cause} exit {value}", cause == "orphaned"


def _peek(sock: _socket.socket) -> bytes | None:
    """What a readable socket holds (consumed): data, b"" at end of file, None when nothing after all."""
    try:
        return sock.recv(64, _socket.MSG_DONTWAIT)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        os.write(2, b"usage: supervisor.py SOCKET_FD PARENT_PID RUN_PID\n")
        return 2
    fd = int(argv[1])
    os.set_inheritable(fd, False)  # a command must not hold the socket
    sock = _socket.socket(fileno=fd)
    return serve(sock, parent=int(argv[2]), run=int(argv[3]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
