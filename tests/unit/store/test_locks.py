"""store/locks.py through Store.key_lock: one holder per key across threads and processes; one lock file on Linux (a
byte per stripe), a fixed set elsewhere, none made or removed per key (a long run locks one key per trial)."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import struct
import sys
import threading
import time
from pathlib import Path

import pytest

from skillmake.core.canonical import digest_bytes
from skillmake.store import locks as store_module
from skillmake.store.objects import Store


def _key(i: int) -> str:
    return digest_bytes(str(i).encode())


def _most_inside(store: Store, key: str, *, rounds: int, threads: int = 4) -> int:
    """How many of `threads` threads, each taking `key`'s lock `rounds` times, were inside it at once at most (none
    of them raising)."""
    inside, most, errors = [0], [0], []
    guard = threading.Lock()

    def hold() -> None:
        try:
            for _ in range(rounds):
                with store.key_lock(key):
                    with guard:
                        inside[0] += 1
                        most[0] = max(most[0], inside[0])
                    time.sleep(0.003)
                    with guard:
                        inside[0] -= 1
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    started = [threading.Thread(target=hold) for _ in range(threads)]
    for t in started:
        t.start()
    for t in started:
        t.join(30)
    assert not errors, errors
    return most[0]


def test_many_keys_share_a_bounded_set_of_lock_files_made_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    for i in range(2_000):
        with store.key_lock(_key(i)):
            pass
    files = list((store.root / "locks").iterdir())
    if store_module._OFD is not None:  # Linux: one file, a byte per stripe
        assert [f.name for f in files] == [store_module.STRIPES_FILE]
    else:
        assert 200 < len(files) <= store_module.LOCK_STRIPES
    inodes = {f.name: f.stat().st_ino for f in files}
    for i in range(2_000):  # taken again: no file is made or removed
        with store.key_lock(_key(i)):
            pass
    assert {f.name: f.stat().st_ino for f in (store.root / "locks").iterdir()} == inodes
    stripes = {key for key in store_module._stripes if key[0].startswith(str(store.root))}
    assert 200 < len(stripes) <= store_module.LOCK_STRIPES


def test_a_fallback_without_byte_locks_uses_a_file_per_stripe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    monkeypatch.setattr(store_module, "_OFD", None)
    store = Store(tmp_path / "store")
    with store.key_lock("sha256:" + "ab" * 32), store.key_lock("sha256:" + "cd" * 32):
        pass
    assert sorted(f.name for f in (store.root / "locks").iterdir()) == ["ab.lock", "cd.lock"]


def _hold_in_child(root: str, key: str, ready: object, release: object) -> None:
    store = Store(Path(root))
    with store.key_lock(key):
        ready.set()  # type: ignore[attr-defined]
        release.wait(30)  # type: ignore[attr-defined]


@pytest.mark.parametrize("byte_locks", [True, False], ids=["byte-locks", "file-per-stripe"])
def test_a_stripe_held_by_another_process_excludes_this_one_and_only_that_stripe(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, byte_locks: bool) -> None:
    if byte_locks and store_module._OFD is None:
        pytest.skip("byte locks are Linux's")
    if not byte_locks:  # the forked child inherits the fallback
        monkeypatch.setattr(store_module, "_OFD", None)
    monkeypatch.setattr(store_module, "_stripes", {})
    store = Store(tmp_path / "store")
    key, other = "sha256:" + "ab" * 32, "sha256:" + "ac" * 32
    ctx = multiprocessing.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_hold_in_child, args=(str(store.root), key, ready, release))
    child.start()
    try:
        assert ready.wait(30)
        with store.key_lock(other):  # another byte of the same file: not held
            pass
        got = threading.Event()

        def take() -> None:
            with store.key_lock(key):
                got.set()

        waiter = threading.Thread(target=take)
        waiter.start()
        assert not got.wait(0.3)  # the child holds it
        release.set()
        assert got.wait(30)
        waiter.join(30)
    finally:
        release.set()
        child.join(30)
    assert child.exitcode == 0 and os.path.exists(store_module.stripe_path(str(store.root / "locks"), 0xAB)[0])


def test_a_thread_may_hold_two_keys_of_one_stripe(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    a, b = "sha256:ab" + "0" * 62, "sha256:ab" + "1" * 62  # the same first two hex digits: one lock file
    done = []

    def nested() -> None:
        with store.key_lock(a), store.key_lock(b):
            done.append(True)

    thread = threading.Thread(target=nested)
    thread.start()
    thread.join(10)
    assert done == [True]
    with store.key_lock(a):  # let go of entirely
        pass


def test_a_removed_lock_file_is_made_again_and_still_excludes(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    key = "sha256:" + "ef" * 32
    with store.key_lock(key):
        pass
    for f in (store.root / "locks").iterdir():
        f.unlink()
    assert _most_inside(store, key, rounds=1) == 1
    assert os.path.exists(store_module.stripe_path(str(store.root / "locks"), 0xEF)[0])


def test_one_holder_per_key_across_threads_and_none_kept_after(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    key = "sha256:" + "ab" * 32
    assert _most_inside(store, key, rounds=5, threads=6) == 1
    assert all(s.depth == 0 and s.fd == -1 for (name, _), s in store_module._stripes.items()
               if name.startswith(str(store.root)))


def test_a_holder_that_raises_still_releases(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    key = "sha256:" + "cd" * 32
    try:
        with store.key_lock(key):
            raise ValueError("boom")
    except ValueError:
        pass
    with store.key_lock(key):  # not deadlocked
        pass
    assert store_module._stripes[store_module.stripe_path(str(store.root / "locks"), 0xCD)].depth == 0


@pytest.mark.skipif(not (sys.platform.startswith("linux") and hasattr(fcntl, "F_OFD_SETLKW")
                         and struct.calcsize("P") == 8), reason="byte locks: 64-bit Linux")
def test_64_bit_linux_takes_byte_locks_of_one_file() -> None:
    assert store_module._OFD == fcntl.F_OFD_SETLKW
    assert store_module.stripe_path("/s/locks", 0xAB) == ("/s/locks/keys.lock", 0xAB)


def test_the_file_per_stripe_fallback_still_excludes_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.setattr(store_module, "_OFD", None)
    monkeypatch.setattr(store_module, "_stripes", {})
    store = Store(tmp_path / "store")
    assert _most_inside(store, "sha256:" + "ab" * 32, rounds=5) == 1


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts this process's fds in /proc")
def test_no_lock_leaves_a_file_descriptor_open(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    with store.key_lock("sha256:" + "ab" * 32):
        pass
    before = len(os.listdir("/proc/self/fd"))
    for i in range(50):
        with store.key_lock(_key(i)):
            pass
    assert len(os.listdir("/proc/self/fd")) == before
