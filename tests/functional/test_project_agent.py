"""A spec that names no agent runs on the project's (`[tool.skillmake] agent`): seed formats never name one, and a
native spec may leave it to the project. The lent agent is part of the trial key as if the spec wrote it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from .project import AGENT, Project

SKILL = "---\nname: a\ndescription: answers\n---\nAnswer in UPPERCASE.\n"
CASES = """\
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: ONE}]
"""
WRITTEN = "skill: skills/a\nagent: {kind: command, command: [python3, agent.py]}\n" + CASES
LENT = "skill: skills/a\n" + CASES
CONFIG = 'agent = {kind = "command", command = ["python3", "agent.py"]}\n'


@pytest.fixture(autouse=True)
def _no_inherited_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in [v for v in os.environ if v.startswith("SKILLMAKE_")]:
        monkeypatch.delenv(var, raising=False)


def test_a_spec_without_agent_runs_on_the_projects_and_shares_keys_with_one_that_writes_it(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "p", {"agent.py": AGENT, "skills/a/SKILL.md": SKILL, "a.eval.yaml": LENT,
                                             "skillmake.toml": CONFIG})
    first = project.run(cmd=[sys.executable, "-m", "skillmake"])
    assert first.code == 0, first.err
    assert first.agent_calls == 1
    # The same spec with the agent written out: the same trial, so nothing runs.
    (project.root / "a.eval.yaml").write_text(WRITTEN)
    again = project.run(cmd=[sys.executable, "-m", "skillmake"])
    assert again.code == 0, again.err
    assert again.agent_calls == 0


def test_without_a_project_agent_the_missing_agent_is_a_located_error(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "p", {"agent.py": AGENT, "skills/a/SKILL.md": SKILL, "a.eval.yaml": LENT,
                                             "skillmake.toml": "trials = 1\n"})
    done = project.run(cmd=[sys.executable, "-m", "skillmake", "validate"])
    assert done.code == 2
    assert "a.eval.yaml:1:1 /: missing required key 'agent'" in done.err
