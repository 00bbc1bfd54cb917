"""The last attempt of a key (never a result), and one execution per key across threads and processes."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from pathlib import Path

from skillmake.store import locks
from skillmake.store.objects import TRIAL_SCHEMA, Store
from tests.unit.store.test_objects import trial_record


def test_an_attempt_is_kept_apart_from_results_and_cleared_by_one(tmp_path: Path) -> None:
    store = Store(tmp_path)
    record = dict(trial_record(store), outcome="timeout", error="timed out after 1s")
    store.put_attempt(record, schema=TRIAL_SCHEMA)
    assert store.get_action(record["key"], schema=TRIAL_SCHEMA) is None  # never read as a result
    assert store.get_attempt(record["key"], schema=TRIAL_SCHEMA) == record
    assert store.get_attempt("sha256:" + "f" * 64, schema=TRIAL_SCHEMA) is None
    store.clear_attempt(record["key"])
    assert store.get_attempt(record["key"], schema=TRIAL_SCHEMA) is None
    store.clear_attempt(record["key"])  # clearing twice is fine


def test_a_damaged_or_foreign_attempt_is_a_miss(tmp_path: Path) -> None:
    store = Store(tmp_path)
    record = dict(trial_record(store), outcome="error", error="boom")
    store.put_attempt(record, schema=TRIAL_SCHEMA)
    path = store.attempt_path(record["key"])
    path.write_text(path.read_text().replace(record["key"], "sha256:" + "e" * 64))
    assert store.get_attempt(record["key"], schema=TRIAL_SCHEMA) is None
    path.write_text("{not json")
    assert store.get_attempt(record["key"], schema=TRIAL_SCHEMA) is None


def test_the_key_lock_excludes_threads_with_one_lock_file(tmp_path: Path) -> None:
    store = Store(tmp_path)
    inside: list[int] = []
    overlaps: list[int] = []

    def work(i: int) -> None:
        with store.key_lock("sha256:" + "a" * 64):
            inside.append(i)
            if len(inside) > 1:
                overlaps.append(i)
            time.sleep(0.02)
            inside.remove(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == []
    assert [p.name for p in (tmp_path / "locks").glob("*.lock")] == [
        os.path.basename(locks.stripe_path(str(tmp_path / "locks"), 0xAA)[0])]  # keys.lock on Linux, else aa.lock
    with store.key_lock("sha256:" + "b" * 64), store.key_lock("sha256:" + "c" * 64):
        pass  # different keys do not wait for each other


def _hold(root: str, seconds: float, started: object) -> None:
    store = Store(root)
    with store.key_lock("sha256:" + "d" * 64):
        started.set()  # type: ignore[attr-defined]
        time.sleep(seconds)


def test_the_key_lock_excludes_another_process(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    started = ctx.Event()
    proc = ctx.Process(target=_hold, args=(str(tmp_path), 0.6, started))
    proc.start()
    assert started.wait(30)
    t0 = time.monotonic()
    with Store(tmp_path).key_lock("sha256:" + "d" * 64):
        waited = time.monotonic() - t0
    proc.join(30)
    assert waited > 0.3  # it waited for the other process to let go


def test_store_layout_is_a_contract_between_versions_sharing_a_store(tmp_path: Path) -> None:
    store = Store(tmp_path)
    key = "sha256:" + "ab" * 32
    assert store.attempt_path(key) == tmp_path / "attempts" / "ab" / f"{'ab' * 32}.json"
    assert store.action_path(key) == tmp_path / "actions" / "ab" / f"{'ab' * 32}.json"


def test_attempts_are_schema_checked_on_write_and_on_read(tmp_path: Path) -> None:
    import orjson
    import pytest

    from skillmake.core.errors import RecordError

    store = Store(tmp_path)
    record = dict(trial_record(store), outcome="error", error="boom")
    with pytest.raises(RecordError):
        store.put_attempt(dict(record, outcome="exploded"), schema=TRIAL_SCHEMA)
    path = store.attempt_path(record["key"])
    path.parent.mkdir(parents=True)
    path.write_bytes(orjson.dumps(dict(record, outcome="exploded")))  # valid JSON, right key, wrong shape
    assert store.get_attempt(record["key"], schema=TRIAL_SCHEMA) is None


def test_a_record_naming_a_lost_object_is_quarantined_every_time(tmp_path: Path) -> None:
    store = Store(tmp_path)
    for n in range(2):
        record = trial_record(store, key="sha256:" + str(n) * 64)
        store.put_action(record, schema=TRIAL_SCHEMA)
        store.object_path(record["outputs"]["output"]).unlink()  # the object it names is gone
        assert store.get_action(record["key"], schema=TRIAL_SCHEMA) is None
        assert not store.action_path(record["key"]).exists()  # moved aside, never trusted again
    assert len(list((tmp_path / "quarantine").iterdir())) == 2


def test_the_key_lock_works_in_a_store_that_does_not_exist_yet(tmp_path: Path) -> None:
    store = Store(tmp_path / "new" / "store")
    with store.key_lock("sha256:" + "a" * 64):
        assert (tmp_path / "new" / "store" / "locks").is_dir()
