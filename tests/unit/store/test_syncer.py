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


def test_a_flush_returns_only_once_the_batch_being_synced_is_durable(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    done: list[str] = []
    real = os.fsync

    def slow_fsync(fd: int) -> None:
        time.sleep(0.2)  # a busy disk: the batch is still being synced when the flush asks
        real(fd)
        done.append(os.readlink(f"/proc/self/fd/{fd}"))

    monkeypatch.setattr(os, "fsync", slow_fsync)
    monkeypatch.setattr(syncer, "BATCH_SECONDS", 0.0)
    sync = syncer.Syncer()
    paths = _records(tmp_path, 3)
    for path in paths:
        sync.add(path)
    time.sleep(0.05)  # the thread has taken the batch and is inside its first fsync
    sync.flush()
    assert sorted(done) == sorted(paths)


def test_records_given_while_a_batch_gathers_join_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syncer, "BATCH_SECONDS", 30.0)  # ended by the flush below, not waited out
    sync = syncer.Syncer()
    first, second = _records(tmp_path, 2)
    sync.add(first)
    time.sleep(0.1)  # the thread has woken for the first record and gathers
    sync.add(second)
    sync.flush()
    assert (sync.synced, sync.batches) == (2, 1)


def test_a_process_that_exits_right_after_writing_a_record_syncs_it_first_and_still_exits(tmp_path: Path) -> None:
    """The exit waits for what the thread has not synced yet (atexit), and the thread itself keeps no process
    alive (a daemon)."""
    import subprocess
    import sys

    record = _records(tmp_path, 1)[0]
    child = (
        "import os, sys\n"
        "from skillmake.store import syncer\n"
        "syncer.BATCH_SECONDS = 30.0\n"  # only the exit's flush can sync it in time
        "real = os.fsync\n"
        "def fsync(fd):\n"
        "    real(fd)\n"
        "    print('synced', os.readlink(f'/proc/self/fd/{fd}'), flush=True)\n"
        "os.fsync = fsync\n"
        f"syncer.SYNCER.add({record!r})\n"
    )
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"synced {record}"]


def test_a_forked_process_starts_its_own_thread_from_a_clean_state(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork copies the syncer as the parent's thread left it, here mid-batch (busy, a flush urgent), without that
    thread: the child's first record starts a thread of its own from a clean state, and its flush returns once the
    child's record is synced (with the parent's state kept, it would wait for a batch no thread of its finishes)."""
    real = os.fsync
    slow = threading.Event()

    def fsync(fd: int) -> None:
        if not slow.is_set():
            slow.set()
            time.sleep(3.0)  # the parent's thread is in its batch while the test forks
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    sync = syncer.Syncer()
    first, second = _records(tmp_path, 2)
    sync.add(first)
    threading.Thread(target=sync.flush, daemon=True).start()
    assert slow.wait(10.0)
    assert sync._busy and sync._urgent
    child = os.fork()
    if child == 0:  # pragma: no cover - the child process
        code = 1
        try:
            sync.add(second)
            sync.flush()
            code = 0 if sync.synced == 1 else 2  # its own record, once
        finally:
            os._exit(code)
    deadline = time.monotonic() + 20.0
    while time.monotonic() < deadline:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(child, 9)
    os.waitpid(child, 0)
    raise AssertionError("the child's flush waited for the parent's batch")
