"""store/locks.py through Store.key_lock: one holder per key across threads and processes; a fixed set of lock files,
none made or removed per key (a long run locks one key per trial)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from skillmake.core.canonical import digest_bytes
from skillmake.store import locks as store_module
from skillmake.store.objects import Store


def _key(i: int) -> str:
    return digest_bytes(str(i).encode())


def test_many_keys_share_a_bounded_set_of_lock_files_made_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    for i in range(2_000):
        with store.key_lock(_key(i)):
            pass
    files = list((store.root / "locks").iterdir())
    assert 200 < len(files) <= store_module.LOCK_STRIPES
    inodes = {f.name: f.stat().st_ino for f in files}
    for i in range(2_000):  # taken again: no file is made or removed
        with store.key_lock(_key(i)):
            pass
    assert {f.name: f.stat().st_ino for f in (store.root / "locks").iterdir()} == inodes
    assert sum(1 for name in store_module._stripes if name.startswith(str(store.root))) == len(files)


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
    inside, most = [0], [0]
    guard = threading.Lock()

    def hold() -> None:
        with store.key_lock(key):
            with guard:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.005)
            with guard:
                inside[0] -= 1

    threads = [threading.Thread(target=hold) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert most[0] == 1 and (store.root / "locks" / "ef.lock").exists()


def test_one_holder_per_key_across_threads_and_none_kept_after(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    key = "sha256:" + "ab" * 32
    inside, most, errors = [0], [0], []
    guard = threading.Lock()

    def hold() -> None:
        try:
            for _ in range(5):
                with store.key_lock(key):
                    with guard:
                        inside[0] += 1
                        most[0] = max(most[0], inside[0])
                    time.sleep(0.002)
                    with guard:
                        inside[0] -= 1
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=hold) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and most[0] == 1
    assert all(s.depth == 0 and s.fd == -1 for name, s in store_module._stripes.items()
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
    assert store_module._stripes[str(store.root / "locks" / "cd.lock")].depth == 0
