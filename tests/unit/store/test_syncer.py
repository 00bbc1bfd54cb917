"""The store's fsync thread: every record it is given is made durable, in batches, and a flush waits for all."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from skillmake.store import syncer


def _records(folder: Path, n: int) -> list[str]:
    paths = []
    for i in range(n):
        path = folder / f"r{i}.json"
        path.write_bytes(b"{}")
        paths.append(str(path))
    return paths


def test_records_given_one_after_another_are_synced_in_a_few_batches_and_a_flush_waits_for_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[tuple[str, str]] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append((os.readlink(f"/proc/self/fd/{fd}"), threading.current_thread().name))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    sync = syncer.Syncer()
    paths = _records(tmp_path, 200)
    for path in paths:  # as 200 trials finishing within one gathering time would
        sync.add(path)
    sync.flush()
    assert sorted(p for p, _ in synced) == sorted(paths)  # each once, none missed
    assert {name for _, name in synced} == {"skillmake-fsync"}  # by its thread, never the writer's
    assert sync.synced == 200 and 1 <= sync.batches <= 5  # not woken for every record


def test_a_flush_does_not_wait_out_the_gathering_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syncer, "BATCH_SECONDS", 30.0)  # a flush that waited it out would hang this test
    sync = syncer.Syncer()
    sync.add(_records(tmp_path, 1)[0])
    started = time.monotonic()
    sync.flush()
    assert sync.synced == 1
    assert time.monotonic() - started < 10.0


def test_a_record_given_after_a_quiet_spell_is_synced_without_a_flush(tmp_path: Path) -> None:
    sync = syncer.Syncer()
    first, second = _records(tmp_path, 2)
    sync.add(first)
    sync.flush()
    time.sleep(2 * syncer.BATCH_SECONDS)  # the thread waits for a first record again: the next one wakes it
    sync.add(second)
    deadline = time.monotonic() + 10.0
    while sync.synced < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sync.synced == 2
