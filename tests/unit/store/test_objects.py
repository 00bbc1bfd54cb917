from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from skillmake.core.canonical import digest_bytes
from skillmake.core.errors import RecordError
from skillmake.store.objects import TRIAL_SCHEMA, Store


def trial_record(store: Store, key: str = "sha256:" + "a" * 64) -> dict[str, Any]:
    out = store.put(b"HELLO!\n")
    empty = store.put(b"")
    return {
        "schema": "skillmake/trial-record@1", "kind": "trial", "key": key,
        "inputs": {"key_version": 1, "skill": None, "run": "sha256:" + "b" * 64, "agent": "sha256:" + "c" * 64,
                   "k": 0},
        "labels": {"spec": "s", "skill": "sk", "case": "c", "arm": "with_skill", "k": 0},
        "agent": {"kind": "command", "model": None, "version": None},
        "outcome": "completed", "error": None, "exit_code": 0,
        "outputs": {"output": out, "stdout": out, "stderr": empty, "transcript": None, "files": {}},
        "usage": {}, "timing": {"started": "2026-01-01T00:00:00+00:00", "duration_ms": 1.0},
    }


def test_objects_are_content_addressed_read_only_and_verified(tmp_path: Path) -> None:
    store = Store(tmp_path)
    digest = store.put(b"data")
    assert digest == digest_bytes(b"data")
    path = store.object_path(digest)
    assert path.parent.name == digest[7:9] and len(path.name) == 62
    assert not os.access(path, os.W_OK) or os.geteuid() == 0
    assert store.get(digest) == b"data"
    assert store.put(b"data") == digest  # idempotent


def test_corrupt_object_is_quarantined_and_a_miss(tmp_path: Path) -> None:
    store = Store(tmp_path)
    digest = store.put(b"data")
    path = store.object_path(digest)
    os.chmod(path, 0o644)
    path.write_bytes(b"dat")  # bit rot / a truncated copy
    assert store.get(digest) is None
    assert not path.exists()
    assert any((tmp_path / "quarantine").iterdir())


def test_action_round_trip_and_validation(tmp_path: Path) -> None:
    store = Store(tmp_path)
    record = trial_record(store)
    store.put_action(record, schema=TRIAL_SCHEMA)
    assert store.get_action(record["key"], schema=TRIAL_SCHEMA) == record
    bad = dict(record, outcome="maybe")
    with pytest.raises(RecordError, match="outcome"):
        store.put_action(bad, schema=TRIAL_SCHEMA)


def test_action_naming_a_missing_object_is_refused_on_write_and_a_miss_on_read(tmp_path: Path) -> None:
    store = Store(tmp_path)
    record = trial_record(store)
    record["outputs"]["files"] = {"out.md": "sha256:" + "d" * 64}
    with pytest.raises(RecordError, match="not stored"):
        store.put_action(record, schema=TRIAL_SCHEMA)
    record = trial_record(store)
    store.put_action(record, schema=TRIAL_SCHEMA)
    store.object_path(record["outputs"]["output"]).unlink()
    assert store.get_action(record["key"], schema=TRIAL_SCHEMA) is None


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"key": "sha256:' + b"0" * 64 + b'"}', b"[]"])
def test_damaged_action_entry_is_a_miss_not_a_crash(tmp_path: Path, damage: bytes) -> None:
    store = Store(tmp_path)
    record = trial_record(store)
    store.put_action(record, schema=TRIAL_SCHEMA)
    store.action_path(record["key"]).write_bytes(damage)
    assert store.get_action(record["key"], schema=TRIAL_SCHEMA) is None
    assert not store.action_path(record["key"]).exists()


def test_interrupted_write_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillmake.core import atomic

    def boom(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "fsync", boom)
    folder = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        atomic.write_bytes(folder / "x.json", b"{}")
    assert list(folder.iterdir()) == []


def test_a_record_whose_workspace_tree_is_lost_is_refused_and_a_miss(tmp_path: Path) -> None:
    store = Store(tmp_path)
    record = dict(trial_record(store), workspace="sha256:" + "e" * 64)
    with pytest.raises(RecordError, match="not stored"):
        store.put_action(record, schema=TRIAL_SCHEMA)
    record["workspace"] = store.put_json({"made.txt": {"file": store.put(b"made\n"), "mode": 0o644}})
    store.put_action(record, schema=TRIAL_SCHEMA)
    assert store.get_action(record["key"], schema=TRIAL_SCHEMA) is not None
    store.object_path(record["workspace"]).unlink()
    assert store.get_action(record["key"], schema=TRIAL_SCHEMA) is None


_WRITER = """
import fcntl, os, signal, sys, tempfile, time
from skillmake.store.objects import Store
store = Store(sys.argv[1])
store.begin_run()
folder = store.objects / "ab"
folder.mkdir(parents=True, exist_ok=True)
fd, tmp = tempfile.mkstemp(dir=folder, prefix=".cdef.", suffix=".tmp")
if sys.argv[2] == "live":
    fcntl.flock(fd, fcntl.LOCK_EX)  # as atomic.write_bytes holds it until the rename
print(tmp, flush=True)
if sys.argv[2] == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(60)
"""


def _writer(root: Path, how: str) -> tuple[Any, Path]:
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(root), how], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    tmp = Path(proc.stdout.readline().strip())
    old = time.time() - 600
    os.utime(tmp, (old, old))
    return proc, tmp


def test_temp_files_of_a_killed_writer_are_swept_and_a_live_writers_are_not(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = tmp_path / "store"
    Store(root).objects.mkdir(parents=True)
    ended = "import sys; from skillmake.store.objects import Store; Store(sys.argv[1]).begin_run()"
    subprocess.run([sys.executable, "-c", ended, str(root)], check=True)  # ended normally: its mark is gone
    assert list((root / "running").iterdir()) == []
    live, live_tmp = _writer(root, "live")
    try:
        killed, dead_tmp = _writer(root, "killed")
        assert killed.wait(timeout=30) == -9
        killed.stdout.close()
        store = Store(root)
        assert store.begin_run() == 1  # the killed writer's mark is found: its temp file goes
        assert not dead_tmp.exists() and live_tmp.exists()  # held by a live writer (another run on a shared store)
        assert len(list((root / "running").iterdir())) == 2  # this process's mark and the live writer's
        assert store.begin_run() == 0  # once per process
    finally:
        live.kill()
        live.wait()
        live.stdout.close()
    assert Store(root).sweep_temp() == 1 and not live_tmp.exists()  # its writer is gone now


def test_a_fresh_temp_file_is_left_alone(tmp_path: Path) -> None:
    store = Store(tmp_path)
    (tmp_path / "actions" / "ab").mkdir(parents=True)
    fresh = tmp_path / "actions" / "ab" / ".x.json.123.tmp"
    fresh.write_bytes(b"{")  # created a moment ago, its writer not yet holding it
    assert store.sweep_temp() == 0 and fresh.exists()
    assert store.sweep_temp(min_age=0) == 1 and not fresh.exists()


# Pins from the mutation run (bench/mutation.py): the store's objects and action entries, by its public methods.
def test_a_json_object_round_trips_and_a_missing_one_is_none(tmp_path: Path) -> None:
    store = Store(tmp_path)
    digest = store.put_json({"b": 1, "a": [1, 2]})
    assert digest.startswith("sha256:") and store.has(digest)
    assert store.object_path(digest).stat().st_mode & 0o777 == 0o444  # objects are immutable
    assert store.get_json(digest) == {"a": [1, 2], "b": 1}
    missing = digest_bytes(b"never stored")
    assert store.get_json(missing) is None and not store.has(missing)


def test_an_object_that_is_not_json_reads_as_none(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert store.get_json(store.put(b"not json {")) is None


def test_an_action_entry_under_another_key_is_a_quarantined_miss(tmp_path: Path) -> None:
    store = Store(tmp_path)
    key, other = digest_bytes(b"key"), digest_bytes(b"other")
    path = store.action_path(key)
    path.parent.mkdir(parents=True)
    path.write_bytes(orjson.dumps({"key": other}))
    assert store.has_action(key) is True and store.has_action(other) is False
    assert store.get_action(key, schema=TRIAL_SCHEMA, verify=False) is None
    assert not path.exists() and any(store.quarantine_dir.iterdir())
    path.write_bytes(orjson.dumps({"key": key, "x": 1}))
    assert store.get_action(key, schema=TRIAL_SCHEMA, verify=False) == {"key": key, "x": 1}


def test_a_record_is_made_durable_off_the_writers_thread_its_objects_before_it(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from skillmake.store import syncer

    store = Store(tmp_path)
    record = trial_record(store)  # its objects are written (and fsync'd) here, before the record
    record["timing"]["duration_ms"] = 2500.0  # a trial worth keeping (worth_syncing)
    synced: list[tuple[str, bool]] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append((os.readlink(f"/proc/self/fd/{fd}"), threading.current_thread() is threading.main_thread()))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    store.put_action(record, schema=TRIAL_SCHEMA)
    syncer.SYNCER.flush()
    assert (str(store.action_path(record["key"])), False) in synced  # the record, by the syncer's thread
    assert not any(main for _, main in synced)  # the writer never waited for an fsync
    store.put(b"a new object")
    assert any(main and p.startswith(str(store.objects)) for p, main in synced)  # objects stay fsync'd at once


@pytest.mark.parametrize("paid", ["input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens",
                                  "total_tokens", "cost_usd", "requests"])
def test_any_sign_of_a_model_call_makes_a_quick_record_worth_syncing(paid: str) -> None:
    from skillmake.store import syncer

    assert syncer.worth_syncing({"timing": {"duration_ms": 1.0}, "usage": {paid: 1}})
    assert not syncer.worth_syncing({"timing": {"duration_ms": 1.0}, "usage": {paid: 0}})


@pytest.mark.parametrize(("timing", "usage", "synced"), [
    ({"duration_ms": 4.0}, {}, False),  # an instant command trial: running it again costs less than the fsync
    ({"duration_ms": 4.0}, {"num_turns": 1, "input_tokens": None, "requests": 0}, False),
    ({"duration_ms": 999.9}, {"cost_usd": 0.0}, False),
    ({"duration_ms": 1000.0}, {}, True),  # a second's work
    ({"duration_ms": 4.0}, {"input_tokens": 12}, True),  # it called a model: paid for
    ({"duration_ms": 4.0}, {"requests": 1}, True),
    ({"duration_ms": 4.0}, {"cost_usd": 0.0001}, True),
    ({"duration_ms": 4.0}, {"total_tokens": 3}, True),
    ({}, {}, True),  # a record that does not say how long it took
    ({"duration_ms": "4"}, {}, True),
    ({"duration_ms": 4.0}, None, True),
])
def test_a_record_is_synced_when_the_work_it_saves_is_worth_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               timing: dict[str, Any], usage: Any,
                                                               synced: bool) -> None:
    from skillmake.store import syncer

    store = Store(tmp_path)
    record = trial_record(store)
    added: list[str] = []
    monkeypatch.setattr(syncer.SYNCER, "add", added.append)
    assert syncer.worth_syncing({**record, "timing": timing, "usage": usage}) is synced
    if usage is not None and isinstance(timing.get("duration_ms"), float):  # valid records: through put_action
        store.put_action({**record, "timing": {**record["timing"], **timing}, "usage": usage}, schema=TRIAL_SCHEMA)
        assert added == ([str(store.action_path(record["key"]))] if synced else [])


def test_records_and_attempts_are_stored_without_this_processs_credentials(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Defence in depth: whatever a record carries, the store writes it redacted of the environment's
    credentials, result and attempt alike (a mutation run found neither redaction pinned here)."""
    secret = "sk-ant-api03-pinned-credential-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    store = Store(tmp_path / "store")
    record = trial_record(store)
    record["agent"]["version"] = f"cli 1.0 ({secret})"
    written = store.put_action(record, schema=TRIAL_SCHEMA)
    attempt = {**trial_record(store, "sha256:" + "e" * 64), "outcome": "error", "error": f"401 for key {secret}",
               "exit_code": 1}
    kept = store.put_attempt(attempt, schema=TRIAL_SCHEMA)
    # What the writer hands on (a merged cell's grade and view take the trial's record from its step) is the record
    # as stored, never the one it was given.
    assert written == store.get_action(record["key"], schema=TRIAL_SCHEMA) and secret not in str(written)
    assert kept == store.get_attempt(attempt["key"], schema=TRIAL_SCHEMA) and secret not in str(kept)
    on_disk = [p.read_bytes() for p in (store.action_path(record["key"]), store.attempt_path(attempt["key"]))]
    assert all(secret.encode() not in data for data in on_disk)
    assert all(b"[REDACTED" in data or b"REDACTED" in data for data in on_disk), on_disk
    got = store.get_action(record["key"], schema=TRIAL_SCHEMA)
    assert got is not None and secret not in got["agent"]["version"] and got["agent"]["version"].startswith("cli 1.0")


def test_a_records_objects_this_process_put_are_not_looked_up_again_and_others_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path)
    record = trial_record(store)
    asked: list[str] = []
    real_has = Store.has
    monkeypatch.setattr(Store, "has", lambda self, digest: asked.append(digest) or real_has(self, digest))
    store.put_action(record, schema=TRIAL_SCHEMA)
    assert asked == []  # both objects were put just now: no stat per object (a trial's record names four)
    record["outputs"]["transcript"] = "sha256:" + "d" * 64  # never put
    with pytest.raises(RecordError, match="not stored"):
        store.put_action(record, schema=TRIAL_SCHEMA)
    assert asked == ["sha256:" + "d" * 64]


def test_an_object_put_again_is_not_looked_up_and_one_quarantined_meanwhile_is_written_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path)
    digest = store.put(b"same output\n")
    looked: list[str] = []
    real_exists = os.path.exists
    monkeypatch.setattr(os.path, "exists", lambda p: looked.append(str(p)) or real_exists(p))
    assert store.put(b"same output\n") == digest and looked == []  # the next trial's identical output: no stat
    path = store.object_path(digest)
    path.chmod(0o644)
    path.write_bytes(b"damaged")
    assert store.get(digest) is None  # quarantined
    store.put(b"same output\n")
    assert store.get(digest) == b"same output\n"  # written again, not taken for present


def test_an_object_put_in_another_store_does_not_count_as_stored_here(tmp_path: Path) -> None:
    one, other = Store(tmp_path / "one"), Store(tmp_path / "other")
    record = trial_record(one)
    with pytest.raises(RecordError, match="not stored"):
        other.put_action(record, schema=TRIAL_SCHEMA)


def test_a_record_read_again_unchanged_is_not_read_again_and_a_replaced_one_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillmake.core import atomic

    store = Store(tmp_path)
    record = trial_record(store)
    store.put_action(record, schema=TRIAL_SCHEMA)
    first = store.get_action(record["key"], schema=TRIAL_SCHEMA)
    assert first is not None
    first["outcome"] = "mutated by a caller"  # each read is a record of its own
    reads: list[str] = []
    real = atomic.read_stat
    monkeypatch.setattr(atomic, "read_stat", lambda p: (reads.append(p), real(p))[1])
    again = store.get_action(record["key"], schema=TRIAL_SCHEMA)
    assert again is not None and again["outcome"] == "completed" and reads == []  # a stat, not a read
    replaced = dict(record, run_id="a-later-run")  # a resample replaces the record under its key
    store.put_action(replaced, schema=TRIAL_SCHEMA)
    latest = store.get_action(record["key"], schema=TRIAL_SCHEMA)
    assert latest is not None and latest["run_id"] == "a-later-run" and len(reads) == 1
    path = store.action_path(record["key"])
    path.write_bytes(path.read_bytes().replace(b'"completed"', b'"finished!"'))  # edited by hand: invalid now
    assert store.get_action(record["key"], schema=TRIAL_SCHEMA) is None and not path.exists()  # quarantined


def test_a_record_read_before_whose_object_is_lost_is_a_miss(tmp_path: Path) -> None:
    store = Store(tmp_path)
    record = trial_record(store)
    store.put_action(record, schema=TRIAL_SCHEMA)
    assert store.get_action(record["key"], schema=TRIAL_SCHEMA) is not None
    store.object_path(record["outputs"]["output"]).unlink()
    assert store.get_action(record["key"], schema=TRIAL_SCHEMA) is None  # still verified on every read
