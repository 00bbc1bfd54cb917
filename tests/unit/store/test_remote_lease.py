"""The remote store's batched prefetch and its leases (skillmake/store/remote.py, lease.py), over a shared folder
(file://): two Remote objects stand for two clones on two machines."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from skillmake.store import lease
from skillmake.store.objects import TRIAL_SCHEMA, Store
from skillmake.store.remote import FEW, Remote

from .test_objects import trial_record

KEY = "sha256:" + "d" * 64


def key(i: int) -> str:
    return f"sha256:{i:064x}"


def test_prefetch_lists_once_and_fetches_only_what_the_remote_holds(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    url = (tmp_path / "shared").as_uri()
    first = Store(tmp_path / "a")
    records = [trial_record(first, key(i)) for i in range(FEW + 8)]
    assert Remote(url).push(records, first) == len(records)

    remote = Remote(url)
    second = Store(tmp_path / "b")
    asked: list[str] = []
    listings: list[str] = []
    cat, find = remote._cat, remote.fs.find

    def counted_cat(path: str) -> bytes | None:
        asked.append(path)
        return cat(path)

    def counted_find(path: str, **kw: Any) -> Any:
        listings.append(path)
        return find(path, **kw)

    monkeypatch.setattr(remote, "_cat", counted_cat)
    monkeypatch.setattr(remote.fs, "find", counted_find)
    absent = [key(10_000 + i) for i in range(20)]  # keys the remote never had
    fetched = remote.prefetch([r["key"] for r in records] + absent, second, schema=TRIAL_SCHEMA)
    assert sorted(fetched) == sorted(r["key"] for r in records)
    assert all(second.get_action(r["key"], schema=TRIAL_SCHEMA) == r for r in records)
    # One listing, then the entries (and their objects) it names: nothing asked about the 20 absent keys.
    assert len(listings) == 1
    entries = [p for p in asked if "/actions/" in p]
    assert sorted(entries) == sorted(remote.action_path(r["key"]) for r in records)
    assert not [p for p in asked if any(k[7:] in p for k in absent)]
    before = remote.stats.requests
    assert not remote.fetch(key(10_000), second, schema=TRIAL_SCHEMA)  # known absent: not asked again
    assert remote.stats.requests == before


def test_a_few_keys_are_asked_for_one_by_one(tmp_path: Path) -> None:
    remote, store = Remote((tmp_path / "shared").as_uri()), Store(tmp_path / "b")
    assert remote.prefetch([key(1), key(2)], store, schema=TRIAL_SCHEMA) == []
    assert remote.stats.requests == 2  # no listing of the whole remote for two keys


def test_the_second_holder_waits_for_the_first_and_then_finds_its_record(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lease.TTL_VAR, "2")
    url = (tmp_path / "shared").as_uri()
    alice, bob = Remote(url), Remote(url)
    events: list[str] = []
    inside = threading.Event()

    def hold_then_publish() -> None:
        store = Store(tmp_path / "a")
        with alice.lease(KEY):
            events.append("alice holds")
            inside.set()
            time.sleep(0.8)
            alice.push([trial_record(store, KEY)], store)  # the record goes up before the lease is let go
            events.append("alice published")

    thread = threading.Thread(target=hold_then_publish)
    thread.start()
    inside.wait(10)
    with bob.lease(KEY):
        events.append("bob goes on")
        assert bob.fetch(KEY, Store(tmp_path / "b"), schema=TRIAL_SCHEMA)  # no longer remembered as absent
    thread.join()
    assert events == ["alice holds", "alice published", "bob goes on"]
    assert bob.waited == 1 and alice.waited == 0
    assert not list((tmp_path / "shared" / "leases").rglob("0*"))  # released


def test_a_silent_lease_is_taken_over_after_the_ttl_and_a_beating_one_is_not(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lease.TTL_VAR, "0.8")
    url = (tmp_path / "shared").as_uri()
    dead = tmp_path / "shared" / "leases" / KEY[7:] / f"{0:010d}"
    dead.parent.mkdir(parents=True)
    dead.write_bytes(orjson.dumps({"holder": "gone:1", "beat": 0}))  # a holder that was killed: it never beats

    t0 = time.monotonic()
    with Remote(url).lease(KEY):
        took = time.monotonic() - t0
        assert dead.exists() and (dead.parent / f"{1:010d}").exists()  # generation 1 over the dead 0
        live = Remote(url)
        waited: list[float] = []

        def wait() -> None:
            t1 = time.monotonic()
            with live.lease(KEY):
                waited.append(time.monotonic() - t1)

        other = threading.Thread(target=wait)
        other.start()
        time.sleep(2.5)  # three ttls: a live holder beats every ttl/4, so no takeover
        assert not waited
    other.join(10)
    assert 0.8 <= took < 5 and waited
    assert not list(dead.parent.iterdir())


def test_a_lease_of_a_process_of_this_machine_that_is_gone_is_taken_over_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lease.TTL_VAR, "600")  # its silence alone would keep a waiter ten minutes
    gone = subprocess.Popen(["true"])
    gone.wait()
    remote = Remote((tmp_path / "shared").as_uri())
    folder = tmp_path / "shared" / "leases" / KEY[7:]
    folder.mkdir(parents=True)
    (folder / f"{0:010d}").write_bytes(orjson.dumps({"holder": f"{socket.gethostname()}:{gone.pid}", "beat": 0}))
    t0 = time.monotonic()
    with remote.lease(KEY):
        assert time.monotonic() - t0 < 5
        assert (folder / f"{1:010d}").exists()
    assert not list(folder.iterdir())
    # A holder that is alive on this machine (this very test) is waited for.
    (folder / f"{0:010d}").write_bytes(orjson.dumps({"holder": f"{socket.gethostname()}:{os.getppid()}", "beat": 0}))
    assert not remote._leases._dead_here((folder / f"{0:010d}").read_bytes())  # type: ignore[union-attr]


def test_requests_failing_at_once_each_their_own_way_say_unreachable_once(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Concurrent fetches that all find the remote down (a refused connection here, a closed one there) stop
    asking it and say so in one line, not one line per exception class (found in test_remote's offline test)."""
    remote = Remote(f"file://{tmp_path}/bucket")
    both_in = threading.Barrier(2)
    errors = iter([ConnectionRefusedError("refused"), ConnectionResetError("closed")])
    lock = threading.Lock()

    def fail(*_: Any, **__: Any) -> bool:
        both_in.wait(timeout=10)  # both requests are under way before either fails
        with lock:
            raise next(errors)

    monkeypatch.setattr(remote, "_fetch", fail)
    store = Store(tmp_path / "store")
    threads = [threading.Thread(target=remote.fetch, args=(key(i), store), kwargs={"schema": TRIAL_SCHEMA})
               for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert remote.down
    assert [n for n in remote.stats.notes if "unreachable" in n] == [
        f"remote file://{tmp_path}/bucket unreachable (ConnectionRefusedError); running without it"]
    assert remote.fetch(key(3), store, schema=TRIAL_SCHEMA) is False  # not asked again
