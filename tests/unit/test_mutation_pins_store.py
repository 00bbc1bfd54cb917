"""Pins from the mutation run (bench/mutation.py): the store's objects and action entries, by its public methods."""

from __future__ import annotations

from pathlib import Path

import orjson

from skillmake.core.canonical import digest_bytes
from skillmake.store.objects import TRIAL_SCHEMA, Store


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
