"""One execution per key at a time: locks in a store's locks/ that threads of one process and other processes
respect."""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import sys
import threading
from collections.abc import Iterator

LOCK_STRIPES = 256  # every key lock of a store is one of these stripes (by the key's first two hex digits)
STRIPES_FILE = "keys.lock"  # Linux: one file, a byte of it per stripe (elsewhere: <2 hex>.lock, a file per stripe)

# An open file description lock on one byte (Linux ≥ 3.15): it belongs to the open file, as flock's does, so two
# threads of one process, each with its own fd, exclude each other as two processes do. One file of 256 bytes
# replaces 256 lock files: a store's first run made each of them, and a new file is the dearest thing a trial does
# on a disk whose inode allocator scans past recently deleted inodes (ext4 without a journal: 50-250 µs a create).
_OFD: int | None = getattr(fcntl, "F_OFD_SETLKW", None) if sys.platform.startswith("linux") else None
_FLOCK = "hhqqi4x"  # struct flock on 64-bit Linux: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks)
if _OFD is not None and (struct.calcsize(_FLOCK) != 32 or struct.calcsize("P") != 8):
    _OFD = None  # a 32-bit ABI lays struct flock out otherwise: a file per stripe there


class _Stripe:
    """One stripe of this process: a re-entrant thread lock, and the fd holding its lock while held."""

    __slots__ = ("depth", "fd", "lock")

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.depth = 0
        self.fd = -1


# (file, byte) → its _Stripe: at most LOCK_STRIPES per store, kept for the process's life.
_stripes: dict[tuple[str, int], _Stripe] = {}
_stripes_guard = threading.Lock()


def stripe_path(folder: str, index: int) -> tuple[str, int]:
    """The file and the byte that hold stripe `index` of the locks in `folder` (byte -1: the whole file)."""
    if _OFD is not None:
        return f"{folder}/{STRIPES_FILE}", index
    return f"{folder}/{index:02x}.lock", -1


@contextlib.contextmanager
def stripe(folder: str, index: int) -> Iterator[None]:
    """An exclusive lock on stripe `index` of the locks in `folder`, respected by the threads of one process and by
    other processes; re-entrant in one thread. The lock belongs to an open file: the first hold of a thread opens
    the file and locks it, the last closes it."""
    at = stripe_path(folder, index)
    held = _stripes.get(at)
    if held is None:
        with _stripes_guard:
            held = _stripes.setdefault(at, _Stripe())
    with held.lock:
        if held.depth == 0:
            held.fd = _locked_fd(*at)
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
            if held.depth == 0:
                os.close(held.fd)
                held.fd = -1


def _locked_fd(path: str, byte: int) -> int:
    """An fd of `path` (made when missing) holding the lock of `byte` (-1: a flock of the whole file). A file removed
    meanwhile (a user emptying locks/) is not the lock any more: the holder tries again on the file now at that path."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            continue
        try:
            if byte < 0 or _OFD is None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            else:
                fcntl.fcntl(fd, _OFD, struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, byte, 1, 0))
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            return fd
        os.close(fd)
