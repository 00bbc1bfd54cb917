"""Finding the real claude and codex CLIs for the end-to-end tests: skip locally when missing, fail under CI."""

from __future__ import annotations

import os

import pytest

from skillmake.run.agents.cli_common import find_cli

_HOW = {"claude": "SKILLMAKE_CLAUDE", "codex": "SKILLMAKE_CODEX"}


def require_cli(name: str) -> str:
    """The path of CLI `name` (claude, codex), found as the agents find it. Missing: a failure when $CI is set
    (CI installs them, so the end-to-end tests must run there), else a skip that says how to install them."""
    found = find_cli(name, _HOW[name])
    if found:
        return found
    reason = f"{name} CLI not installed: run scripts/setup.sh (or set {_HOW[name]})"
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{reason}; CI must run the end-to-end tests", pytrace=False)
    print(reason)
    pytest.skip(reason)
