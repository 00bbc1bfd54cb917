"""A trial's process supervisor: runs one command and leaves none of its descendants alive when it ends.

Started by `skillmake.run.process.run` as `python -I -S … STATUS_FD PARENT RUN -- COMMAND…` (this module's main),
once per process a trial starts. It runs the command in a session of its own and, when the command exits, when it is
told to stop (SIGTERM/SIGINT/SIGHUP: a timeout or an interrupted run), or when its parent or the run dies, it
SIGKILLs every descendant and reaps them before it exits. On Linux nothing escapes it: it is a child subreaper,
so a double-forked or setsid'd daemon is reparented to it rather than to init, and it enumerates descendants
through /proc. It hears its parent die through PR_SET_PDEATHSIG and the run's main process through a pidfd (in
`-P process` mode the run can die while the worker that started this process lives on).

One line goes to STATUS_FD at the end: `<cause> <how> <value>` where cause is `done` (the command ended by
itself), `stopped` (told to stop) or `orphaned` (parent or run died), how/value `exit N`, `signal N`, or
`exec ERRNO` when the command could not start.

It runs once per trial, so it starts cheaply: stdlib C modules only, nothing of skillmake, no `signal.py` (that
imports enum) and no `typing`. Elsewhere than Linux it still runs the command and kills its process group.
"""

from __future__ import annotations

import os
import select
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy reads signal's stubs; at run time the C module is ~8 ms cheaper to import
    import signal as sig
    from collections.abc import Callable

    Prctl = Callable[..., int]
else:
    try:
        import _signal as sig
    except ImportError:  # pragma: no cover - an interpreter without the C module
        import signal as sig

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STOP_SIGNALS = (sig.SIGTERM, sig.SIGINT, sig.SIGHUP)
POLL_S = 0.5  # how often to look for a dead parent/run where the kernel cannot tell us (no prctl, no pidfd)


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


def _spawn(command: list[str], prctl_: Prctl | None) -> tuple[int, int]:
    """Fork and exec `command` in a new session; (pid, 0) or (-1, errno) when it could not start."""
    err_r, err_w = os.pipe()  # close-on-exec: EOF means the exec succeeded
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; coverage cannot follow it past exec
        try:
            os.close(err_r)
            for signum in (*STOP_SIGNALS, sig.SIGCHLD, sig.SIGPIPE, sig.SIGXFSZ):
                sig.signal(signum, sig.SIG_DFL)  # Python ignores SIGPIPE/SIGXFSZ; a command expects defaults
            os.setsid()
            if prctl_ is not None:  # the command dies with this supervisor, even by SIGKILL
                prctl_(PR_SET_PDEATHSIG, sig.SIGKILL, 0, 0, 0)
            _exec(command)
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


def _exec(command: list[str]) -> None:
    """os.execvp without its `import warnings` (a millisecond per trial): search PATH as execvp(3) does."""
    name = command[0]
    if "/" in name:
        os.execv(name, command)
    error: OSError | None = None
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        try:
            os.execv(os.path.join(folder or ".", name), command)
        except (FileNotFoundError, NotADirectoryError) as exc:
            error = error or exc
        except OSError as exc:  # found but not runnable (EACCES …): report that rather than a later miss
            error = exc if error is None or isinstance(error, (FileNotFoundError, NotADirectoryError)) else error
    raise error or FileNotFoundError(2, "No such file or directory", name)


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


def _watch_run(run: int) -> int | None:
    """A pidfd that becomes readable when the run's main process exits; None where pidfds are missing."""
    if run <= 0 or not hasattr(os, "pidfd_open"):
        return None
    try:
        return os.pidfd_open(run)
    except ProcessLookupError:
        return -1  # already gone
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


def supervise(command: list[str], *, status_fd: int, parent: int, run: int) -> int:
    me = os.getpid()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    sig.set_wakeup_fd(wake_w)
    for signum in (*STOP_SIGNALS, sig.SIGCHLD):
        sig.signal(signum, _ignore)
    prctl_ = prctl()
    if prctl_ is not None:
        prctl_(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        prctl_(PR_SET_PDEATHSIG, sig.SIGTERM, 0, 0, 0)
    run_fd = _watch_run(run)
    cause = "done"
    # The parent or the run may have died before the watches were set: check once, after them.
    if os.getppid() != parent or run_fd == -1:
        cause = "orphaned"
    if cause == "done" and any(b in STOP_SIGNALS for b in _drain(wake_r)):
        cause = "stopped"
    if cause != "done":
        _report(status_fd, f"{cause} signal {sig.SIGKILL}")
        return 128 + sig.SIGKILL
    command_pid, errno = _spawn(command, prctl_)
    if command_pid < 0:
        _report(status_fd, f"done exec {errno}")
        return 127
    status: list[int] = []
    watched = [wake_r] + ([run_fd] if run_fd is not None and run_fd >= 0 else [])
    # Without PDEATHSIG or a pidfd, a dead parent or run is found by looking now and then.
    poll = POLL_S if prctl_ is None or (run > 0 and len(watched) == 1) else None
    while not status:
        _reap(command_pid, status, block=False)
        if status:
            break
        ready, _, _ = select.select(watched, [], [], poll)
        if wake_r in ready and any(b in STOP_SIGNALS for b in _drain(wake_r)):
            cause = "orphaned" if os.getppid() != parent else "stopped"
        if run_fd is not None and run_fd in ready:
            cause = "orphaned"
        if poll is not None and (os.getppid() != parent or (run > 0 and not alive(run))):
            cause = "orphaned"
        if cause != "done":
            break
    _kill_all(me, command_pid, status)
    code = status[0] if status else sig.SIGKILL  # a wait status: killed by SIGKILL
    if os.WIFSIGNALED(code):
        _report(status_fd, f"{cause} signal {os.WTERMSIG(code)}")
        return 128 + os.WTERMSIG(code)
    value = os.WEXITSTATUS(code) if os.WIFEXITED(code) else 1
    _report(status_fd, f"{cause} exit {value}")
    return value


def _drain(fd: int) -> bytes:
    data = b""
    while True:
        try:
            chunk = os.read(fd, 256)
        except BlockingIOError:
            return data
        if not chunk:
            return data
        data += chunk


def _report(fd: int, line: str) -> None:
    try:
        os.write(fd, line.encode() + b"\n")
    except OSError:
        pass  # the parent is gone; nobody is left to tell


def main(argv: list[str]) -> int:
    if len(argv) < 6 or argv[4] != "--":
        os.write(2, b"usage: supervisor.py STATUS_FD PARENT_PID RUN_PID -- COMMAND...\n")
        return 2
    status_fd = int(argv[1])
    os.set_inheritable(status_fd, False)  # the command must not hold the status pipe
    return supervise(argv[5:], status_fd=status_fd, parent=int(argv[2]), run=int(argv[3]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
