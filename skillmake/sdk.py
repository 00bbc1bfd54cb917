"""The provider SDKs (anthropic, openai): an optional extra, imported only by the agent or judge that calls them."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from .errors import SkillmakeError

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
