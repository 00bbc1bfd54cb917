"""Store.key_lock: one holder per key across threads, and nothing kept per key once its last user is gone (a long
run locks one key per trial)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from skillmake.store import objects as store_module
from skillmake.store.objects import Store


def test_a_released_key_keeps_no_lock_behind(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    before = dict(store_module._thread_locks)
    for i in range(200):
        with store.key_lock(f"sha256:{i:064x}"):
            pass
    assert store_module._thread_locks == before


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
    assert str(store.root / "locks") not in "".join(store_module._thread_locks)


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
    assert not any(key.removeprefix("sha256:") in name for name in store_module._thread_locks)
