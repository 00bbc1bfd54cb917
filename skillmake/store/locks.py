"""One execution per key at a time: flock'd lock files that threads of one process and other processes respect."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

LOCK_STRIPES = 256  # locks/<2 hex>.lock: every key lock of a store is one of these files


class _Stripe:
    """One lock file of this process: a re-entrant thread lock, and the fd holding its flock while held."""

    __slots__ = ("depth", "fd", "lock")

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.depth = 0
        self.fd = -1


# path → its _Stripe: at most LOCK_STRIPES per store, kept for the process's life.
_stripes: dict[str, _Stripe] = {}
_stripes_guard = threading.Lock()


@contextlib.contextmanager
def flock(path: str | Path) -> Iterator[None]:
    """An exclusive lock on `path` that threads of one process and other processes all respect; re-entrant in one
    thread. flock belongs to an open file: the first hold of a thread opens and locks it, the last closes it."""
    name = str(path)
    stripe = _stripes.get(name)
    if stripe is None:
        with _stripes_guard:
            stripe = _stripes.setdefault(name, _Stripe())
    with stripe.lock:
        if stripe.depth == 0:
            stripe.fd = _locked_fd(path)
        stripe.depth += 1
        try:
            yield
        finally:
            stripe.depth -= 1
            if stripe.depth == 0:
                os.close(stripe.fd)
                stripe.fd = -1


def _locked_fd(path: str | Path) -> int:
    """An fd of `path` (made when missing) holding its flock. A file removed meanwhile (a user emptying locks/) is
    not the lock any more: the holder tries again on the file now at that path."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
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
