"""The project lock: one run per project at a time, and who holds it when another run must wait."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

import orjson

_held: dict[str, int] = {}  # lock path → fd, for the life of this process


def acquire(state_dir: Path, *, what: str, wait: bool = True, on_wait: Callable[[str], None] | None = None) -> bool:
    """Take the project's run lock for the rest of this process (released when it exits, however it exits).

    A second run waits for the first, telling `on_wait` once who holds it; with wait=False it returns False.
    Taking it again in the same process is a no-op.
    """
    path = state_dir / "run.lock"
    key = str(path)
    if key in _held:
        return True
    state_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        if not wait:
            os.close(fd)
            return False
        if on_wait is not None:
            on_wait(holder(path))
        fcntl.flock(fd, fcntl.LOCK_EX)
    os.set_inheritable(fd, False)
    info = orjson.dumps({"pid": os.getpid(), "since": time.strftime("%H:%M:%S"), "what": what})
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, info, 0)
    _held[key] = fd
    return True


def holder(path: Path) -> str:
    """Who holds the lock, as the holder wrote it: 'the run of pid 123 (`skillmake -n 4`, since 10:02:11)'."""
    try:
        info = orjson.loads(path.read_bytes())
        return f"the run of pid {info['pid']} (`{info['what']}`, since {info['since']})"
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
        return "another run"
