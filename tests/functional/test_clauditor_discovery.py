"""clauditor's bare `eval.json` beside a SKILL.md, found and run by the real `skillmake` — and no other file named
eval.json claimed; a CLAUDITOR_* variable clauditor would refuse stops `validate` with exit 2, as clauditor does."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillmake.spec.discovery import scan

from .project import AGENT, Project

SKILL = "---\nname: greet\ndescription: greets\n---\nAnswer in UPPERCASE.\n"
SEED = json.dumps({"test_args": "hello team", "assertions": [{"id": "loud", "type": "contains", "needle": "HELLO"}]},
                  indent=2)
FILES = {
    "agent.py": AGENT,
    "skillmake.toml": 'agent = {kind = "command", command = ["python3", "agent.py"]}\n',
    "skills/greet/SKILL.md": SKILL,
    "skills/greet/eval.json": SEED,
    # clauditor's keys, but no SKILL.md beside it: not clauditor's file, not a spec
    "data/eval.json": SEED,
    # beside a SKILL.md, but another tool's file (no clauditor key): left alone
    "skills/other/SKILL.md": SKILL.replace("greet", "other"),
    "skills/other/eval.json": json.dumps({"model": "x", "prompts": ["a", "b"]}),
    # beside a SKILL.md, not even JSON: left alone too
    "skills/third/SKILL.md": SKILL.replace("greet", "third"),
    "skills/third/eval.json": "not json at all\n",
}


@pytest.fixture(autouse=True)
def _no_inherited_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [v for v in os.environ if v.startswith(("SKILLMAKE_", "CLAUDITOR_"))]:
        monkeypatch.delenv(name)


def test_only_the_eval_json_beside_a_skill_md_with_clauditor_keys_is_claimed(tmp_path: Path) -> None:
    Project.empty(tmp_path, FILES)
    found = scan(str(tmp_path))
    assert [os.path.relpath(p, tmp_path) for p in found.files] == ["skills/greet/eval.json"]
    assert found.heads[found.files[0]].name == "greet"
    assert found.skipped == []  # nothing of another tool's to mention either


def test_an_eval_json_seed_runs_named_after_its_skill_and_validates(tmp_path: Path) -> None:
    project = Project.empty(tmp_path, FILES)
    checked = project.run("validate")
    assert checked.code == 0, checked.out + checked.err
    first = project.run()
    assert (first.code, first.agent_calls) == (0, 1), first.out + first.err
    assert (tmp_path / ".skillmake" / "reports" / "greet" / "report.json").is_file()
    assert project.calls() == ["greet with_skill 0"]  # the case, too, is named after the skill folder
    again = project.run()
    assert (again.code, again.agent_calls) == (0, 0)


@pytest.mark.parametrize(("var", "allowed"), [
    ("CLAUDITOR_HARNESS", "claude-code, codex or auto"),
    ("CLAUDITOR_TRANSPORT", "api, cli or auto"),
    ("CLAUDITOR_GRADING_PROVIDER", "anthropic, openai or auto"),
])
def test_a_variable_clauditor_refuses_is_a_located_error_and_exit_2(tmp_path: Path, var: str, allowed: str) -> None:
    project = Project.empty(tmp_path, FILES)
    done = project.run("validate", env={var: "bogus"})
    assert done.code == 2 and "Traceback" not in done.err
    first, hint = done.err.splitlines()[:2]
    assert first == f"skills/greet/eval.json:1:1 /: ${var} is 'bogus', not a {first.split(', not a ')[1]}"
    assert first.endswith(f"(clauditor accepts {allowed})")
    assert hint.startswith(f"  hint: set {var} to {allowed}, or unset it")
    assert done.agent_calls == 0
