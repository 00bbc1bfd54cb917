"""Running one trial (run/trial.py): what its agent is sent, when it is refused before the agent starts, and what
its record says. Each refused trial is an error (retried next run, never cached) and its agent never runs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from skillmake.engine.plan import plan_spec
from skillmake.run.project import Project
from skillmake.run.trial import execute, prompt_text
from skillmake.spec.model import Case, Skill


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("SKILLMAKE_TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "p").mkdir()
    return tmp_path / "p"


def _project(root: Path, command: str, extra: str = "") -> Project:
    (root / "skills/s").mkdir(parents=True, exist_ok=True)
    (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (root / "p.eval.yaml").write_text(
        f"skill: skills/s\nagent: {{kind: command, command: {command}}}\n{extra}"
        "cases: [{id: a, prompt: hi, checks: [{type: contains, needle: x}]}]\n")
    return Project.open(str(root))


def _run_all(project: Project, before: Any = None) -> list[dict[str, Any]]:
    spec = project.specs[0]
    items = plan_spec(project, spec).items
    if before is not None:
        before()
    return [execute(project, spec, i.case, i.arm, i.k, i.tkey).record for i in items]


def _output(project: Project, record: dict[str, Any]) -> str:
    return (project.store.get(record["outputs"]["output"]) or b"").decode()


@pytest.mark.parametrize(("prompt", "args", "skill", "sent"), [
    ("hi", "--fast", True, "hi\n\n--fast"),
    ("hi", None, True, "hi"),
    (None, "--fast", True, "/s --fast"),  # clauditor's test_args: the skill's command line
    (None, "--fast", False, "--fast"),
    (None, None, False, ""),
])
def test_the_prompt_sent_is_the_prompt_and_the_args(prompt: str | None, args: str | None, skill: bool,
                                                     sent: str) -> None:
    case = cast(Case, SimpleNamespace(prompt=prompt or "", args=args))
    assert prompt_text(case, cast(Skill, SimpleNamespace(name="s")) if skill else None) == sent


def test_a_trial_whose_agent_would_see_the_projects_own_setup_is_refused_before_its_agent_runs(
        tmp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SKILLMAKE_TMPDIR inside the project: the trials would run under the project's CLAUDE.md, so none runs."""
    (tmp / "CLAUDE.md").write_text("the project's own instructions\n")
    (tmp / "inside").mkdir()
    monkeypatch.setenv("SKILLMAKE_TMPDIR", str(tmp / "inside"))
    ran = tmp_path / "agent-ran"
    project = _project(tmp, f"[sh, -c, 'touch {ran}; echo x']")
    (record,) = _run_all(project)
    assert record["outcome"] == "error" and "would see" in record["error"] and "CLAUDE.md" in record["error"]
    assert not ran.exists()
    assert record["timing"]["agent_ms"] == 0.0
    assert project.store.get_action(record["key"], schema="trial-record.schema.json") is None  # never cached


def test_a_program_file_saved_after_planning_refuses_the_trial_before_its_agent_runs(tmp: Path,
                                                                                    tmp_path: Path) -> None:
    ran = tmp_path / "agent-ran"
    (tmp / "agent.sh").write_text(f"touch {ran}; echo x\n")
    project = _project(tmp, "[sh, agent.sh]")
    (record,) = _run_all(project, before=lambda: (tmp / "agent.sh").write_text(f"touch {ran}; echo y\n"))
    assert record["outcome"] == "error" and "agent.sh changed before the trial ran" in record["error"]
    assert not ran.exists()


def test_a_program_file_changed_while_the_agent_runs_makes_the_trial_an_error(tmp: Path) -> None:
    (tmp / "agent.sh").write_text('echo x; echo "# edited" >> "$0"\n')  # the agent edits its own program
    project = _project(tmp, "[sh, agent.sh]")
    (record,) = _run_all(project)
    assert record["outcome"] == "error" and "agent.sh changed while the trial ran" in record["error"]
    assert _output(project, record) == ""  # what a program other than its key's printed is not this trial's output


def test_only_the_arm_with_the_skill_is_given_it(tmp: Path) -> None:
    project = _project(tmp, "[sh, -c, 'echo \"skill=$SKILLMAKE_SKILL_NAME\"; ls \"$SKILLMAKE_SKILL\" 2>&1 | head -1']",
                       extra="baseline: true\n")
    records = {r["labels"]["arm"]: r for r in _run_all(project)}
    assert _output(project, records["with_skill"]) == "skill=s\nSKILL.md\n"
    assert _output(project, records["without_skill"]).startswith("skill=\n")


def test_a_completed_trials_record_says_how_long_its_agent_took_within_the_whole(tmp: Path) -> None:
    project = _project(tmp, "[sh, -c, 'sleep 0.2; echo x']")
    (record,) = _run_all(project)
    timing = record["timing"]
    assert record["outcome"] == "completed"
    assert 200 <= timing["agent_ms"] <= timing["duration_ms"] < 200 + 5_000
