"""A seed spec names no agent of skillmake's, yet validates in a project without config: it runs on the harness its
own tool uses by default (skill-creator and clauditor: `claude -p`, so claude-code; caliper: its default backend,
claude-code), and the project's `agent` overrides that default, never a backend the file names itself."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from skillmake.spec.loader import load_spec

from .project import Project

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "tests" / "data" / "seeds"
SKILL = "---\nname: a\ndescription: answers\n---\nAnswer in UPPERCASE.\n"
COMMAND = {"kind": "command", "command": ["python3", "agent.py"]}
CONFIG = 'trials = 1\nagent = {kind = "command", command = ["python3", "agent.py"]}\n'
CALIPER = ("skill: {path: ./SKILL.md%s}\n"
           "tasks:\n  - {name: a, prompt: say one, assert: \"assert 'SAY ONE' in output\"}\n")
AGENT = """\
import sys
from pathlib import Path
with open(Path(__file__).resolve().parent / "calls.log", "a") as log:
    log.write("call\\n")
print(sys.stdin.read().strip().upper())
"""


@pytest.fixture(autouse=True)
def _no_inherited_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in [v for v in os.environ if v.startswith("SKILLMAKE_")]:
        monkeypatch.delenv(var, raising=False)


def skill_creator(root: Path) -> Path:
    shutil.copytree(SEEDS / "skill-creator" / "reference-skill", root / "reference-skill")
    return root / "reference-skill" / "evals" / "evals.json"


def clauditor(root: Path) -> Path:
    shutil.copytree(SEEDS / "clauditor" / "commands", root, dirs_exist_ok=True)
    return root / ".claude" / "commands" / "find-kid-activities.eval.json"


def caliper(root: Path, backend: str = "") -> Path:
    (root / "skill").mkdir(parents=True)
    (root / "skill" / "SKILL.md").write_text(SKILL)
    spec = root / "skill" / "a.eval.yaml"
    spec.write_text(CALIPER % (f", backend: {backend}" if backend else ""))
    return spec


@pytest.mark.parametrize("make", [skill_creator, caliper], ids=["skill-creator", "caliper"])
def test_a_seed_spec_validates_without_config_on_its_tools_default_harness(tmp_path: Path, make: object) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    spec = load_spec(str(path), root=str(tmp_path), default_agent={})
    assert spec.arms[0].agent.kind == "claude-code"


def test_a_clauditor_spec_validates_without_config(tmp_path: Path) -> None:
    # clauditor's `harness: auto` picks by what is installed (adapters/clauditor.py); it is never "no agent".
    spec = load_spec(str(clauditor(tmp_path)), root=str(tmp_path), default_agent={})
    assert spec.arms[0].agent.kind in ("claude-code", "codex")


@pytest.mark.parametrize("make", [skill_creator, clauditor, caliper], ids=["skill-creator", "clauditor", "caliper"])
def test_the_projects_agent_overrides_the_tools_default(tmp_path: Path, make: object) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    (tmp_path / "agent.py").write_text(AGENT)
    spec = load_spec(str(path), root=str(tmp_path), default_agent=COMMAND)
    assert spec.arms[0].agent.kind == "command"


def test_a_backend_the_caliper_file_names_beats_the_projects_agent(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    spec = load_spec(str(caliper(tmp_path, "codex")), root=str(tmp_path), default_agent=COMMAND)
    assert spec.arms[0].agent.kind == "codex"


def test_skillmake_validate_passes_for_evals_json_in_a_project_without_config(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "p", {})
    skill_creator(project.root)
    done = project.run(cmd=[sys.executable, "-m", "skillmake", "validate"])
    assert done.code == 0, done.err
    assert "names no agent" not in done.err


def test_a_caliper_spec_runs_on_the_projects_command_agent_not_the_claude_cli(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "p", {"skillmake.toml": CONFIG, "agent.py": AGENT})
    caliper(project.root)
    done = project.run(cmd=[sys.executable, "-m", "skillmake"])
    assert done.code == 0, done.out + done.err
    assert "claude" not in done.err.lower()
    assert (project.root / "calls.log").read_text().splitlines() == ["call"]
