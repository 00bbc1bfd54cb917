"""Captured-output mode (clauditor's `grade --output FILE`): an existing output is graded with the case's checks
and judges; the agent never runs, nothing is staged, nothing is stored, and the exit code is clauditor's."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.functional.project import Project, Run
from tests.functional.test_seed_clauditor import SEEDS, _project

# Until the front end wires `skillmake grade --output`, the module's own entry point is what runs.
GRADE = [sys.executable, "-m", "skillmake", "grade"]
GOOD = "1. Cupertino Library https://sccl.org\nVenues: three of them, all open on weekends.\n"
JUDGE = "/v1/chat/completions"

JUDGED_SPEC = """\
{
  "skill_name": "shout",
  "test_args": "the team",
  "input_files": ["fixtures/team.csv"],
  "assertions": [{"id": "loud", "type": "regex", "pattern": "[A-Z]{4,}!"}],
  "grading_criteria": [{"id": "friendly", "criterion": "Is the greeting friendly?"}],
  "grading_provider": "openai",
  "grading_model": "gpt-5.4-mini"
}
"""


def grade(project: Project, *args: str, env: dict[str, str] | None = None) -> Run:
    return project.run(cmd=[*GRADE, *args], env=env, check_views=False)


def stored(root: Path) -> list[Path]:
    """Every action record and attempt in the project's store."""
    state = root / ".skillmake"
    return [p for sub in ("actions", "attempts") if (state / sub).is_dir() for p in (state / sub).rglob("*.json")]


def test_a_passing_output_is_graded_without_running_the_agent(tmp_path: Path) -> None:
    project, env = _project(tmp_path, "skill-folder")
    project.write("out.md", GOOD)
    done = grade(project, "--output", "out.md", env=env)
    assert done.code == 0, done.out + done.err
    assert done.out.startswith("grade:find-kid-activities/find-kid-activities/captured  pass  ")
    assert "not stored" in done.out
    assert done.agent_calls == 0 and project.calls() == []
    assert stored(project.root) == []  # no trial, no grade, no attempt: it is no trial of the skill
    assert not (project.root / ".skillmake" / "runs").exists()


def test_a_failing_output_exits_1_and_says_which_check_failed(tmp_path: Path) -> None:
    project, env = _project(tmp_path, "skill-folder")
    project.write("out.md", "Error: could not reach the venue list\n")
    done = grade(project, "--output", "out.md", "find-kid-activities", env=env)
    assert done.code == 1, done.out + done.err
    assert "captured  fail" in done.out
    assert "✗" in done.out and "Error" in done.out
    assert done.agent_calls == 0 and stored(project.root) == []


def test_the_spec_can_be_named_by_its_file(tmp_path: Path) -> None:
    project, env = _project(tmp_path, "skill-folder")
    project.write("out.md", GOOD)
    spec = ".claude/skills/find-kid-activities/SKILL.eval.json"
    done = grade(project, "--output", "out.md", spec, "--case", "find-kid-activities", env=env)
    assert done.code == 0, done.out + done.err
    elsewhere = project.run(cmd=[*GRADE, "--root", str(project.root), "--output", str(project.root / "out.md")],
                            env=env, check_views=False)  # --root, as every command takes
    assert elsewhere.code == 0, elsewhere.out + elsewhere.err


def test_a_missing_output_file_or_unknown_case_is_a_usage_error(tmp_path: Path) -> None:
    project, env = _project(tmp_path, "skill-folder")
    missing = grade(project, "--output", "nowhere.md", env=env)
    assert missing.code == 3 and "nowhere.md" in missing.err and "Traceback" not in missing.err
    project.write("out.md", GOOD)
    unknown = grade(project, "--output", "out.md", "--case", "nope", env=env)
    assert unknown.code == 3 and "no case 'nope'" in unknown.err
    spec = grade(project, "--output", "out.md", "elsewhere", env=env)
    assert spec.code == 3 and "no spec 'elsewhere'" in spec.err


def test_an_invalid_spec_exits_2_located(tmp_path: Path) -> None:
    project, env = _project(tmp_path, "skill-folder")
    spec = project.root / ".claude/skills/find-kid-activities/SKILL.eval.json"
    spec.write_text(spec.read_text().replace('"type": "not_contains"', '"type": "not_contians"'))  # clauditor refuses
    project.write("out.md", GOOD)
    done = grade(project, "--output", "out.md", env=env)
    assert done.code == 2, done.out + done.err
    assert "SKILL.eval.json:" in done.err and "Traceback" not in done.err


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    def judge(request: Recorded) -> Reply:
        friendly = "HELLO" in request.text()
        return Reply.text(json.dumps({"criteria": [{"id": "friendly", "passed": friendly, "score": 1.0 * friendly,
                                                    "evidence": "as written", "reasoning": "it greets"}]}))

    with FakeAPI() as fake:
        fake.script = judge
        yield fake


def _judged(tmp_path: Path) -> Project:
    root = tmp_path / "p"
    shutil.copytree(SEEDS / "skill-folder", root)  # only for its layout; the spec below replaces the seed's
    spec = root / ".claude" / "skills" / "find-kid-activities" / "SKILL.eval.json"
    spec.write_text(JUDGED_SPEC)
    (spec.parent / "fixtures").mkdir()
    (spec.parent / "fixtures" / "team.csv").write_text("name\nAda\n")
    return Project.empty(root)


def test_judges_grade_the_captured_output_and_input_files_are_not_staged(api: FakeAPI, tmp_path: Path) -> None:
    project = _judged(tmp_path)
    project.write("good.txt", "HELLO TEAM!\n")
    project.write("bad.txt", "hello team.\n")
    env = {**api.openai_env(), "CLAUDITOR_HARNESS": "codex"}
    good = grade(project, "--output", "good.txt", env=env)
    assert good.code == 0, good.out + good.err
    # clauditor's own warning, on stderr, and the grade goes on
    assert "WARNING: --output bypasses the runner; input_files declaration is ignored." in good.err
    assert api.count(JUDGE) == 1
    assert "team.csv" not in api.requests[-1].text()  # nothing was staged, so nothing of it reached the judge
    bad = grade(project, "--output", "bad.txt", env=env)
    assert bad.code == 1, bad.out + bad.err
    assert "Is the greeting friendly?" in bad.out and "captured  fail" in bad.out
    assert api.count(JUDGE) == 2
    assert stored(project.root) == []


def test_a_judge_without_credentials_stops_before_any_call(api: FakeAPI, tmp_path: Path) -> None:
    project = _judged(tmp_path)
    project.write("good.txt", "HELLO TEAM!\n")
    env = {"OPENAI_BASE_URL": api.openai_env()["OPENAI_BASE_URL"], "OPENAI_API_KEY": "", "CODEX_API_KEY": "",
           "CLAUDITOR_HARNESS": "codex"}
    done = grade(project, "--output", "good.txt", env=env)
    assert done.code == 3, done.out + done.err
    assert "OPENAI_API_KEY" in done.err
    assert api.count(JUDGE) == 0


def test_the_judge_model_can_be_chosen_for_the_grade(api: FakeAPI, tmp_path: Path) -> None:
    project = _judged(tmp_path)
    project.write("good.txt", "HELLO TEAM!\n")
    env = {**api.openai_env(), "CLAUDITOR_HARNESS": "codex"}
    done = grade(project, "--output", "good.txt", "--judge-model", "gpt-5.4-nano", env=env)
    assert done.code == 0, done.out + done.err
    assert [r.model for r in api.requests] == ["gpt-5.4-nano"]
