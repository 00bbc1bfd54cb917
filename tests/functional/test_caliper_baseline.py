"""caliper's --baseline: every spec also runs without the skill for this run, keyed as `baseline: true` would be."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from .project import ONE_SPEC, one_case


@pytest.fixture(autouse=True)
def _no_inherited_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in [v for v in os.environ if v.startswith("SKILLMAKE_")]:
        monkeypatch.delenv(var, raising=False)


def test_baseline_runs_the_without_skill_arm_and_shares_keys_with_baseline_true(tmp_path: Path) -> None:
    project = one_case(tmp_path / "p")
    skillmake = [sys.executable, "-m", "skillmake"]
    first = project.run(cmd=skillmake)
    assert first.agent_calls == 1 and project.calls() == ["one with_skill 0"]
    with_baseline = project.run(cmd=[*skillmake, "--baseline"])
    assert with_baseline.agent_calls == 1 and project.calls()[-1] == "one without_skill 0"
    # The spec writing `baseline: true` is the same two cells: nothing runs.
    project.write("a.eval.yaml", ONE_SPEC.replace("cases:", "baseline: true\ncases:"))
    assert project.run(cmd=skillmake).agent_calls == 0
