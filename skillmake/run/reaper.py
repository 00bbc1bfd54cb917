"""The run's own process finds and ends whatever its trials left behind, even past a dead supervisor.

Every trial command runs under a supervisor that kills its descendants (supervisor.py). A command can still
escape it: SIGKILL or SIGSTOP its own supervisor, and a daemon it double-forked is left without one. So the
run's process (and each doit worker, in `-P process`) is a child subreaper (Linux's PR_SET_CHILD_SUBREAPER, no
privilege needed): an orphan is re-parented to it rather than to init, and `sweep` finds it there.

What is an orphan of a trial, among this process's descendants: a process in another session than this one's
that is not a supervisor of this process (nor below one: SUPERVISORS, idle or busy). Trial commands always run
in sessions of their own (the supervisor's `setsid`), while everything else this process starts (doit's workers,
`git`) stays in its session. Supervisors being started are covered by SPAWNING: the sweep and the start of a
supervisor (supervisors.py) hold it, so no supervisor is ever seen before it is registered.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Collection

from skillmake.run import supervisor

SPAWNING = threading.Lock()  # held while a supervisor is started and registered, and while sweeping
SUPERVISORS: set[int] = set()  # pids of this process's supervisors (supervisors.py): never swept
_state = {"subreaper": False}


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants; False where the system cannot."""
    prctl = supervisor.prctl()
    if prctl is None:
        return False
    _state["subreaper"] = prctl(supervisor.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return bool(_state["subreaper"])


def is_subreaper() -> bool:
    return bool(_state["subreaper"])


def _table() -> dict[int, tuple[int, int, bool]] | None:
    """pid → (parent pid, session id, is a zombie) of every process, from /proc; None without /proc."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    table: dict[int, tuple[int, int, bool]] = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) >= 4:
            table[int(name)] = (int(fields[1]), int(fields[3]), fields[0] == b"Z")
    return table


def orphans(keep: Collection[int] = ()) -> tuple[list[int], list[int]]:
    """(live, dead): this process's descendants in other sessions than its own, except its supervisors, the
    processes in `keep` and everything below them; dead ones are zombies waiting to be reaped."""
    if not sys.platform.startswith("linux"):
        return [], []
    table = _table()
    if table is None:
        return [], []
    me = os.getpid()
    mine = os.getsid(0)
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    live: list[int] = []
    dead: list[int] = []
    keep = {*keep, *SUPERVISORS}
    todo = [pid for pid in children.get(me, ()) if pid not in keep]
    while todo:
        pid = todo.pop()
        _, session, zombie = table[pid]
        if session != mine:
            (dead if zombie else live).append(pid)
        todo.extend(p for p in children.get(pid, ()) if p not in keep)
    return live, dead


def sweep(keep: Collection[int] = (), *, within: float = 2.0) -> int:
    """SIGKILL every orphan of a trial below this process (see `orphans`) until none is left, reaping those that
    were re-parented to it. Returns how many were killed."""
    killed: set[int] = set()
    deadline = time.monotonic() + within
    while True:
        found, dead = orphans(keep)
        _reap(dead)
        if not found or time.monotonic() > deadline:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(0.005)
        _reap(killed)
    _reap(killed)
    return len(killed)


def _reap(pids: Collection[int]) -> None:
    """Collect the exit status of those of `pids` that are this process's children (never anyone else's: a
    Popen's child must keep its status for its Popen)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
