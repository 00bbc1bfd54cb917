"""What the store remembers of the records this process wrote or read (the report takes a cell's records from its
early checkout while their files are still the ones noted), and the bounds of its per-process caches."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import orjson
import pytest

from skillmake.core import atomic
from skillmake.store import objects
from skillmake.store.objects import TRIAL_SCHEMA, Store
from tests.unit.store.test_objects import trial_record


def _signature(store: Store, key: str) -> tuple[int, int, int]:
    st = store.action_path(key).stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def test_a_record_written_is_noted_by_its_files_signature_and_is_the_same_until_replaced(tmp_path: Path) -> None:
    store = Store(tmp_path)
    record = trial_record(store)
    key = record["key"]
    assert store.written_as(key) is None
    store.put_action(record, schema=TRIAL_SCHEMA)
    noted = store.written_as(key)
    assert noted == _signature(store, key)
    assert store.same_record(key, noted) is True
    path = store.action_path(key)
    atomic.write_bytes(path, path.read_bytes())  # the same bytes, another file (another run's write)
    assert store.same_record(key, noted) is False
    assert store.written_as(key) == noted  # what this process wrote, until it reads the new one
    assert store.get_action(key, schema=TRIAL_SCHEMA) == record
    assert store.written_as(key) == _signature(store, key) != noted
    assert store.same_record(key, store.written_as(key)) is True


def test_a_record_read_again_unchanged_keeps_its_signature(tmp_path: Path) -> None:
    """The second read is answered from what the first one kept (_seen): the signature noted is still the file's
    inode, size and mtime, nothing more."""
    writer = Store(tmp_path)
    record = trial_record(writer)
    writer.put_action(record, schema=TRIAL_SCHEMA)
    reader = Store(tmp_path)
    for _ in range(2):
        assert reader.get_action(record["key"], schema=TRIAL_SCHEMA) == record
        assert reader.written_as(record["key"]) == _signature(reader, record["key"])
    reader._written.clear()
    assert reader.get_action(record["key"], schema=TRIAL_SCHEMA) == record  # from _seen: one stat
    assert reader.written_as(record["key"]) == _signature(reader, record["key"])


def test_same_record_is_false_for_no_signature_and_for_a_missing_file(tmp_path: Path) -> None:
    store = Store(tmp_path)
    record = trial_record(store)
    store.put_action(record, schema=TRIAL_SCHEMA)
    noted = store.written_as(record["key"])
    assert store.same_record(record["key"], None) is False
    os.unlink(store.action_path(record["key"]))
    assert store.same_record(record["key"], noted) is False


def test_a_quarantined_record_is_a_miss(tmp_path: Path) -> None:
    store = Store(tmp_path)
    record = trial_record(store)
    store.put_action(record, schema=TRIAL_SCHEMA)
    store.quarantine_action(record["key"])
    assert not store.has_action(record["key"]) and store.get_action(record["key"], schema=TRIAL_SCHEMA) is None
    assert any((tmp_path / "quarantine").iterdir())
    store.quarantine_action(record["key"])  # nothing there any more: nothing to do


@pytest.mark.parametrize("bound", ["_WRITTEN_MAX", "_SEEN_MAX"])
def test_the_per_process_notes_of_records_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      bound: str) -> None:
    """Emptied when full, then the new one noted: two notes, then one."""
    monkeypatch.setattr(objects, bound, 2)
    writer = Store(tmp_path)
    reader = Store(tmp_path)
    notes = writer._written if bound == "_WRITTEN_MAX" else reader._seen
    sizes = []
    for key in [f"sha256:{c * 64}" for c in "abc"]:
        writer.put_action(trial_record(writer, key), schema=TRIAL_SCHEMA)  # notes its signature
        assert reader.get_action(key, schema=TRIAL_SCHEMA) is not None  # keeps its bytes (_seen)
        sizes.append(len(notes))
        assert key in notes
    assert sizes == [1, 2, 1]


def test_the_objects_this_process_put_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(objects, "_PUT_MAX", 2)
    store = Store(tmp_path)
    sizes = []
    for data in (b"1", b"2", b"3"):
        digest = store.put(data)
        sizes.append(len(store._put))
        assert digest in store._put
    assert sizes == [1, 2, 1]


def test_an_object_found_missing_is_written_again_by_its_next_put(tmp_path: Path) -> None:
    store = Store(tmp_path)
    digest = store.put(b"data")
    store.object_path(digest).unlink()
    assert store.get(digest) is None
    assert store.put(b"data") == digest and store.get(digest) == b"data"


def test_bytes_found_valid_once_are_not_checked_against_their_schema_again(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A record's bytes written (or read and checked) by this process are not validated again when another Store
    of the process reads them; other bytes are."""
    monkeypatch.setattr(objects, "_VALID", {})  # nothing found valid yet in this process
    checked: list[str] = []
    real = objects.validate_record
    monkeypatch.setattr(objects, "validate_record", lambda schema, record, **kw: checked.append(schema) or
                        real(schema, record, **kw))
    store = Store(tmp_path)
    record = trial_record(store)
    store.put_action(record, schema=TRIAL_SCHEMA)
    assert checked == [TRIAL_SCHEMA]  # the write
    assert Store(tmp_path).get_action(record["key"], schema=TRIAL_SCHEMA) == record
    assert checked == [TRIAL_SCHEMA]
    path = store.action_path(record["key"])
    other = dict(orjson.loads(path.read_bytes()), exit_code=3)
    atomic.write_bytes(path, orjson.dumps(other))
    assert Store(tmp_path).get_action(record["key"], schema=TRIAL_SCHEMA) == other
    assert checked == [TRIAL_SCHEMA, TRIAL_SCHEMA]
    assert Store(tmp_path).get_action(record["key"], schema=TRIAL_SCHEMA) == other
    assert checked == [TRIAL_SCHEMA, TRIAL_SCHEMA]


def test_known_valid_answers_and_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(objects, "_VALID", {})
    monkeypatch.setattr(objects, "_VALID_MAX", 2)
    assert objects._known_valid("s", b"1", add=False) is False
    assert objects._known_valid("s", b"1") is True
    assert objects._known_valid("s", b"1", add=False) is True
    assert objects._known_valid("t", b"1", add=False) is False  # per schema
    objects._known_valid("s", b"2")
    assert len(objects._VALID["s"]) == 2
    objects._known_valid("s", b"3")
    assert objects._VALID["s"] == {hashlib.sha256(b"3").digest()}


def test_a_sweep_removes_old_temp_files_in_every_folder_of_the_store_and_nothing_else(tmp_path: Path) -> None:
    """Temp files (`.<name>.<pid>-<n>.tmp`) older than min_age, in the store's own folder and in objects/,
    actions/, attempts/, replaced/ and index/ at any depth; never a file that is not one (a dot file, a .tmp
    without the dot) and never one younger than min_age."""
    store = Store(tmp_path)
    old = os.path.getmtime(tmp_path) - 60
    temps = [tmp_path / f".top.1-1{atomic.TEMP_SUFFIX}"]
    temps += [tmp_path / sub / "ab" / f".x.json.1-2{atomic.TEMP_SUFFIX}"
              for sub in ("objects", "actions", "attempts", "replaced", "index")]
    kept = [tmp_path / "actions" / "ab" / ".keep", tmp_path / "actions" / "ab" / f"x{atomic.TEMP_SUFFIX}",
            tmp_path / "index" / "p.json"]
    for path in temps + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"{")
        os.utime(path, (old, old))
    young = tmp_path / "objects" / "ab" / f".y.1-3{atomic.TEMP_SUFFIX}"
    young.write_bytes(b"{")
    os.utime(young, (time.time() - 1, time.time() - 1))
    assert store.sweep_temp() == len(temps)
    assert not any(p.exists() for p in temps) and all(p.exists() for p in kept) and young.exists()
    assert store.sweep_temp(min_age=0.5) == 1 and not young.exists()
