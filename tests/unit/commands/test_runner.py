"""commands/runner.py: the run options reach the modules that read them through the environment."""

from __future__ import annotations

import os

import pytest

from skillmake.commands import argv as cmdline
from skillmake.commands import runner
from skillmake.engine import shard
from skillmake.run.agents import claude_code
from skillmake.spec.adapters import clauditor

VARS = (clauditor.FLAGS_VAR, claude_code.NO_API_KEY_VAR, shard.SHARD_VAR)


def test_the_variables_are_named_as_their_readers_name_them() -> None:
    """runner names three variables itself (importing their readers for the names cost every run ~5 ms)."""
    assert runner.CLAUDITOR_FLAGS_VAR == clauditor.FLAGS_VAR
    assert runner.NO_API_KEY_VAR == claude_code.NO_API_KEY_VAR
    assert runner.SHARD_VAR == shard.SHARD_VAR


def test_the_options_reach_their_readers_and_leave_with_them(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(runner, "_SET_HERE", set())
    runner.set_run_options(cmdline.parse(["--shard", "1/2", "--no-api-key", "--harness", "codex"],
                                         doit_commands=runner.doit_commands))
    assert os.environ[shard.SHARD_VAR] == "1/2"
    assert os.environ[claude_code.NO_API_KEY_VAR] == "1"
    assert clauditor.chosen(dict(os.environ), "CLAUDITOR_HARNESS") == ("codex", "--harness")
    runner.set_run_options(cmdline.parse([], doit_commands=runner.doit_commands))  # a later run in this process
    assert not [var for var in VARS if var in os.environ]
