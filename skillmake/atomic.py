"""Atomic file writes: temp file in the same folder, fsync, rename — with the permissions the umask gives."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

_umask_lock = threading.Lock()


def umask() -> int:
    """The process's umask, read each time (a caller may change it). Linux says it in /proc without changing
    it; elsewhere os.umask can only be read by setting it, so that probe is serialised and brief."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
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
    """
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except FileNotFoundError:  # the folder is new: create it only then (a mkdir per write is costly)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.chmod(tmp, (0o666 if mode is None else mode) & ~umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_text(path: str | Path, text: str, *, durable: bool = True) -> None:
    write_bytes(path, text.encode("utf-8"), durable=durable)
