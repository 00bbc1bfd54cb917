"""A command agent's words: those its trial key names as program files beside the spec run from there; every other
word is passed as written, so a file that appears beside the spec after planning never runs in a trial."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillmake.engine.plan import plan_spec
from skillmake.run.project import Project
from skillmake.run.trial import execute


def _project(root: Path, command: str) -> Project:
    (root / "skills/s").mkdir(parents=True)
    (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (root / "p.eval.yaml").write_text(
        f"skill: skills/s\nagent: {{kind: command, command: {command}}}\n"
        "cases: [{id: a, prompt: hi, checks: [{type: contains, needle: x}]}]\n")
    return Project.open(str(root))


def _run(project: Project) -> tuple[str, str]:
    spec = project.specs[0]
    item = plan_spec(project, spec).items[0]
    record = execute(project, spec, item.case, item.arm, item.k, item.tkey).record
    return record["outcome"], project.store.get(record["outputs"]["output"]).decode()


def test_a_program_file_in_the_key_runs_from_the_spec_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLMAKE_TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    (tmp_path / "p").mkdir()
    (tmp_path / "p/agent.sh").write_text('echo "ran $0"\n')
    project = _project(tmp_path / "p", "[sh, agent.sh]")
    assert _run(project) == ("completed", f"ran {tmp_path / 'p' / 'agent.sh'}\n")


def test_a_file_made_beside_the_spec_after_planning_is_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Planned with no agent.sh, the key names no program file; the file saved before the trial starts is unkeyed
    content, so the word stays `agent.sh` (looked up in the trial's own workspace, where it is not)."""
    monkeypatch.setenv("SKILLMAKE_TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    project = _project(tmp_path / "p", "[sh, -c, 'cat \"$0\" 2>/dev/null || echo no agent here', agent.sh]")
    spec = project.specs[0]
    item = plan_spec(project, spec).items[0]
    (tmp_path / "p/agent.sh").write_text("echo unkeyed\n")
    record = execute(project, spec, item.case, item.arm, item.k, item.tkey).record
    assert project.store.get(record["outputs"]["output"]).decode() == "no agent here\n"
