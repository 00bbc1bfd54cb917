"""The `fake_api` pytest fixture: a fresh FakeAPI per test, closed afterwards."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from .server import FakeAPI


@pytest.fixture
def fake_api() -> Iterator[FakeAPI]:
    """A running FakeAPI on 127.0.0.1; nothing queued, no default (unscripted model calls get a 400)."""
    with FakeAPI() as api:
        yield api


@contextlib.contextmanager
def judged_by_fake_api(monkeypatch: pytest.MonkeyPatch, key: str) -> Iterator[FakeAPI]:
    """A FakeAPI that the judges (and SDK agents) reach with `key`: its endpoint variables set, no
    SKILLMAKE_JUDGE_PROVIDER override left from the environment."""
    from skillmake.run.judges import resolve

    with FakeAPI() as fake:
        for name, value in fake.env(key).items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv(resolve.PROVIDER_ENV, raising=False)
        yield fake
