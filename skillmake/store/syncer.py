"""Making the store's action records durable off the trial's path: a thread of the run fsyncs what it wrote."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading

from skillmake.core.pid import pid


class Syncer:
    """Makes the action records this process wrote durable, in a thread of its own: an fsync cost a trial's worker
    ~0.5 ms on a quiet disk and 4–15 ms on a busy one, waited for inside every trial. `flush` waits for all of them
    (at exit, and for tests)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending: list[str] = []
        self._busy = False
        self._pid = -1
        self.synced = 0  # how many records were made durable (a count for tests)

    def add(self, path: str) -> None:
        with self._cond:
            self._pending.append(path)
            if self._pid != pid():  # the first record of this process (or of a forked worker)
                self._pid = pid()
                self._busy = False
                threading.Thread(target=self._loop, name="skillmake-fsync", daemon=True).start()
            self._cond.notify_all()

    def flush(self) -> None:
        with self._cond:
            if self._pid != pid():
                self._pending.clear()
                return
            while self._pending or self._busy:
                self._cond.wait(1.0)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending:
                    self._cond.wait()
                batch, self._pending, self._busy = self._pending, [], True
            try:
                _fsync_all(batch)
            finally:
                with self._cond:
                    self.synced += len(batch)
                    self._busy = False
                    self._cond.notify_all()


def _fsync_all(paths: list[str]) -> None:
    """fsync each record. Its folder is not: on ext4 (ordered journal) the fsync commits the rename before it, and
    an fsync per folder doubled the disk's work for a rename that a power loss may at worst undo (a miss)."""
    for path in paths:
        _fsync(path)


def _fsync(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # gone (quarantined, replaced: its successor is synced itself)
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


SYNCER = Syncer()


@atexit.register
def _sync_at_exit() -> None:
    """What a run wrote is durable before it exits; a second Ctrl-C while it waits ends the wait, not with a
    traceback (what is left is in the page cache: only a power loss can lose it)."""
    with contextlib.suppress(BaseException):
        SYNCER.flush()
