"""Atomic file writes: temp file in the same folder, fsync, rename — with the permissions the umask gives."""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from pathlib import Path

TEMP_SUFFIX = ".tmp"  # every temp file is `.<target name>.<random><TEMP_SUFFIX>` beside its target

_umask_lock = threading.Lock()
_umask: int | None = None


def umask() -> int:
    """The process's umask, read once (skillmake never changes it; a first run made ~10 writes per trial, and a
    read per write was 5 % of it). Linux says it in /proc without changing it; elsewhere os.umask can only be
    read by setting it, which is not thread-safe, so that probe is serialised and done once."""
    global _umask
    if _umask is not None:
        return _umask
    with _umask_lock:
        if _umask is None:
            _umask = _read_umask()
        return _umask


def _read_umask() -> int:
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o077)
    os.umask(current)
    return current


def write_bytes(path: str | Path, data: bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Write `data` to `path` so a reader sees the old file or the whole new one.

    `durable=False` skips the fsync: still atomic, but after a power loss the file may be empty —
    right for derived files kept for people (kept runs), never for the store.

    mkstemp creates its file 0600 whatever the umask; the result gets the permissions an ordinary `open()`
    would give (0644 under the usual umask 022), so a shared store and published reports stay readable.
    `mode` (0444 for store objects) is narrowed by the umask the same way.

    The writer holds a flock on its temp file until it is renamed: a sweep of temp files left by killed
    runs (Store.sweep_temp) skips one that a live writer holds, in this run or another sharing the store.
    """
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TEMP_SUFFIX)
    except FileNotFoundError:  # the folder is new: create it only then (a mkdir per write is costly)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TEMP_SUFFIX)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, (0o666 if mode is None else mode) & ~umask())
        if durable:
            os.fsync(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    finally:
        os.close(fd)


def write_text(path: str | Path, text: str, *, durable: bool = True) -> None:
    write_bytes(path, text.encode("utf-8"), durable=durable)
