"""Shared fixtures: no network beyond loopback, every state folder under tmp_path."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.balance import pytest_collection_modifyitems  # noqa: F401  (the workers take the heaviest files first)
from tests.bytecode import compile_package
from tests.cputime import register as register_cpu_per_file
from tests.fakeapi.fixtures import fake_api  # noqa: F401
from tests.interpreter import remove as remove_links
from tests.interpreter import shortcut_shims

REPO = Path(__file__).resolve().parent.parent
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _is_loopback(address):
        raise ConnectionRefusedError(f"tests may not reach the network (tried {address!r})")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> Any:
    if not _is_loopback(address):
        raise ConnectionRefusedError(f"tests may not reach the network (tried {address!r})")
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def _isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Block non-loopback connections in this process; keep HOME and caches under tmp_path."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "CODEX_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    # Subprocesses: proxies pointing nowhere make any accidental outbound HTTP fail fast.
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    from skillmake.run import ratelimit

    ratelimit.reset()  # no cap, and no pause a provider asked for, carried over from an earlier test
    yield
    from skillmake.run import wire

    wire.close_all()  # the judges' kept-alive connections to this test's fake API


@pytest.fixture
def repo() -> Path:
    return REPO


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")  # the tests' children; this process: just below
sys.dont_write_bytecode = False  # while collecting, pytest caches the rewritten test modules (tests/bytecode.py)


def pytest_collection_finish(session: pytest.Session) -> None:
    sys.dont_write_bytecode = True  # no test leaves bytecode in its project, a skill folder or tests/data


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the cores. Most tests wait on the processes they start (a run, the real
    CLIs, servers), so two workers kept two cores only 130% busy; three took the quiet 2-core machine's suite from
    645 s to 580 s. PYTEST_XDIST_AUTO_NUM_WORKERS still decides when set."""
    wanted = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "").strip()
    if wanted.isdigit():
        return int(wanted)
    return len(os.sched_getaffinity(0)) + 1


def pytest_configure(config: pytest.Config) -> None:
    register_cpu_per_file(config)  # CPU seconds per test file, when SKILLMAKE_TEST_CPU names a folder
    if not hasattr(config, "workerinput"):  # once, in the process that starts the workers
        compile_package()  # the children the tests start read it (tests/bytecode.py says why)
        config.stash[_LINKS] = shortcut_shims()  # `python3` without a version manager's shim (tests/interpreter.py)


_LINKS = pytest.StashKey[Path | None]()


def pytest_unconfigure(config: pytest.Config) -> None:
    remove_links(config.stash.get(_LINKS, None))


@pytest.fixture
def clean_run_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No run setting from the caller's shell (SKILLMAKE_TRIALS, …) or an earlier test's command line."""
    from skillmake.spec import overrides

    for var in [*overrides.ENV.values(), "SKILLMAKE_COMMAND_LINE_SETTINGS", "SKILLMAKE_ROOT"]:
        monkeypatch.delenv(var, raising=False)
    yield
    overrides.set_command_line({})


@pytest.fixture
def judge_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The judges' retry waits, recorded instead of slept through."""
    from skillmake.run.judges import retry

    recorded: list[float] = []
    monkeypatch.setattr(retry, "_sleep", recorded.append)
    return recorded
