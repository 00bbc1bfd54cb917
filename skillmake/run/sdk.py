"""The provider SDKs (anthropic, openai): an optional extra, imported only by the API agents and batch judging that
call them (the synchronous judges use run/wire.py)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Iterable
from types import ModuleType

from skillmake.core.errors import SkillmakeError

EXTRA = "api"  # pip install 'skillmake[api]'
SDKS = ("anthropic", "openai")


class MissingSDK(SkillmakeError):
    """A provider SDK is needed and not installed: say which extra brings it."""

    def __init__(self, name: str, *, what: str) -> None:
        self.name = name
        super().__init__(f"{what} needs the {name} Python SDK, which is not installed",
                         hint=missing_hint(name))


def missing_hint(name: str) -> str:
    return (f"pip install 'skillmake[{EXTRA}]' (or pip install {name}); the command, claude-code and codex "
            "agents do not need it")


def load(name: str, *, what: str | None = None) -> ModuleType:
    """Import SDK `name`, or raise MissingSDK naming the extra. `what` names who needs it (an agent, a judge)."""
    try:
        return importlib.import_module(name)
    except ImportError as err:
        if (err.name or name).split(".")[0] != name:
            raise  # the SDK is there but broken: its own error says more
        raise MissingSDK(name, what=what or f"the {name} agent") from err


def available(name: str) -> bool:
    """Whether SDK `name` can be imported, without importing it (for pre-flight checks)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a None placeholder in sys.modules (blocked), or a broken parent
        return False


_WARMING: dict[str, threading.Thread] = {}
_WARMING_LOCK = threading.Lock()


def warm(names: Iterable[str]) -> None:
    """Start importing each SDK of `names` that this process has not imported, once, in a thread of its own.

    Importing anthropic costs ~1.6 s: a run starts it when its first trial on an API agent starts (the judges need
    no SDK: run/wire.py), so no worker waits for it behind a lock of ours (a trial that needs the SDK sooner waits
    on Python's module lock, as for its own import). An SDK that is not installed, or fails to import, is left to
    `load` to report where it is needed."""
    for name in names:
        if name not in SDKS or name in sys.modules:
            continue
        with _WARMING_LOCK:
            if name in _WARMING or not available(name):
                continue
            thread = _WARMING[name] = threading.Thread(target=_import_quietly, args=(name,), daemon=True,
                                                       name=f"skillmake: import {name}")
        thread.start()


def _import_quietly(name: str) -> None:
    try:
        importlib.import_module(name)
    except Exception:  # `load` imports it again where it is needed, and says what is wrong
        pass
