"""Making the store's action records durable off the trial's path: a thread of the run fsyncs what it wrote."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time

from skillmake.core.pid import pid

# How long the thread gathers records after the first of a batch arrives. Woken for every record, it took the GIL
# once per trial from the workers; 3,000 instant trials at -j 4 spent 0.4 ms of CPU a trial on those hand-offs
# (10 % of the run). 50 ms leaves a record unsynced that much longer, which a crash could cost (a miss, never a
# torn record trusted: a record is renamed into place whole and verified on every read).
BATCH_SECONDS = 0.05

# A record is made durable when the work it saves is worth more than the sync: an action that took DURABLE_AFTER_MS
# or more, or that used a model (tokens, requests, cost), or any record that does not say. A quicker, free one (an
# instant command trial, a grade of deterministic checks) is left to the kernel's writeback (~30 s): a power loss
# in that window costs running it again (a record torn or lost is a miss), which is cheaper than syncing every such
# record on every run. Measured at 6,000 instant trials on ext4: the fsyncs were 0.1x bare doit's whole run
# (1.89x -> 1.77x).
DURABLE_AFTER_MS = 1000.0
_PAID = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens", "total_tokens", "cost_usd",
         "requests")


def worth_syncing(record: dict[str, object]) -> bool:
    """Whether `record` is worth an fsync (DURABLE_AFTER_MS): False only for one that says it was quick and free."""
    timing, usage = record.get("timing"), record.get("usage")
    ms = timing.get("duration_ms") if isinstance(timing, dict) else None
    if not isinstance(ms, (int, float)) or ms >= DURABLE_AFTER_MS or not isinstance(usage, dict):
        return True
    return any(isinstance(n, (int, float)) and n > 0 for n in (usage.get(name) for name in _PAID))


class Syncer:
    """Makes the action records this process wrote durable, in a thread of its own: an fsync cost a trial's worker
    ~0.5 ms on a quiet disk and 4–15 ms on a busy one, waited for inside every trial. Records are synced in batches
    (BATCH_SECONDS); `flush` waits for all of them (at exit, and for tests) without waiting out a batch."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending: list[str] = []
        self._busy = False
        self._idle = False  # the thread waits for a first record: the next add wakes it (later ones need not)
        self._urgent = False  # a flush waits: sync what is pending now
        self._pid = -1
        self.synced = 0  # how many records were made durable (a count for tests)
        self.batches = 0  # in how many batches (another)

    def add(self, path: str) -> None:
        with self._cond:
            self._pending.append(path)
            if self._pid != pid():  # the first record of this process (or of a forked worker)
                self._pid = pid()
                self._busy = self._idle = self._urgent = False
                threading.Thread(target=self._loop, name="skillmake-fsync", daemon=True).start()
            elif self._idle:
                self._idle = False
                self._cond.notify_all()

    def flush(self) -> None:
        with self._cond:
            if self._pid != pid():
                self._pending.clear()
                return
            while self._pending or self._busy:
                self._urgent = True
                self._cond.notify_all()
                self._cond.wait(1.0)
            self._urgent = False

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending:
                    self._idle = True
                    self._cond.wait()
                self._idle = False
                deadline = time.monotonic() + BATCH_SECONDS
                while not self._urgent and (left := deadline - time.monotonic()) > 0:
                    self._cond.wait(left)  # gathering: adds do not wake it; a flush does
                batch, self._pending, self._busy = self._pending, [], True
            try:
                _fsync_all(batch)
            finally:
                with self._cond:
                    self.synced += len(batch)
                    self.batches += 1
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
