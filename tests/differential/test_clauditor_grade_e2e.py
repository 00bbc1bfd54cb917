"""The whole `grade`, side by side: the real clauditor 0.1.3 CLI (`clauditor grade`, in its own venv) and `skillmake
clauditor grade`, on the same spec and command, both running the real claude CLI against one loopback fake API that
answers the skill and both judges (each in its own prompt format) by the same rule: a criterion passes when its
text says PASS. They must give the same exit code and the same count of criteria passed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.differential.seedtools import VENV, require_seedtools
from tests.e2e.clis import require_cli
from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.functional.project import Project

pytestmark = pytest.mark.e2e

COMMAND = "---\ndescription: Greets by shouting\n---\nGreet whoever $ARGUMENTS names, in UPPERCASE letters only.\n"
BASE: dict[str, Any] = {"skill_name": "shout", "test_args": "the team", "harness": "claude-code", "transport": "api",
                        "grading_model": "claude-sonnet-4-6",
                        "assertions": [{"id": "loud", "type": "contains", "needle": "HELLO"}]}


def _criteria(*verdicts: str) -> list[dict[str, str]]:
    return [{"id": f"c{i}", "criterion": f"{v} criterion {i}?"} for i, v in enumerate(verdicts, 1)]


# name → the spec's own fields over BASE
SPECS: dict[str, dict[str, Any]] = {
    # issue 19 §2: 3 of 4 criteria and min_pass_rate 0.7 pass clauditor's gate
    "three_of_four": {"grading_criteria": _criteria("PASS", "PASS", "PASS", "FAIL"),
                      "grade_thresholds": {"min_pass_rate": 0.7}},
    "defaults_apply": {"grading_criteria": _criteria("PASS", "PASS", "FAIL", "FAIL")},  # 0.5 < 0.7 by default
    "mean_score_gate": {"grading_criteria": _criteria("PASS", "PASS", "PASS", "FAIL"),
                        "grade_thresholds": {"min_pass_rate": 0.5, "min_mean_score": 0.9}},
    "assertions_do_not_gate": {"grading_criteria": _criteria("PASS", "PASS"),
                               "assertions": [{"id": "nope", "type": "contains", "needle": "NOPE"}]},
    "n_runs_is_not_read": {"grading_criteria": _criteria("PASS"), "variance": {"n_runs": 3, "min_stability": 1.0}},
    "no_criteria": {},  # clauditor's grade exits 1 running nothing
}


def _clauditor_judge(text: str) -> Reply | None:
    found = re.findall(r'<criterion id="\d+">(.*?)</criterion>', text)
    if not found:
        return None
    return Reply.text(json.dumps([{"criterion": c, "passed": "PASS" in c, "score": float("PASS" in c),
                                   "evidence": "as written", "reasoning": "by the rule"} for c in found]))


def _skillmake_judge(text: str) -> Reply | None:
    found = re.findall(r"^- id: (\S+)\n  criterion: (.*)$", text, flags=re.MULTILINE)
    if not found:
        return None
    return Reply.text(json.dumps({"criteria": [{"id": i, "passed": "PASS" in c, "score": float("PASS" in c),
                                                "evidence": "as written", "reasoning": "by the rule"}
                                               for i, c in found]}))


def answer(request: Recorded) -> Reply:
    text = request.text()
    return _clauditor_judge(text) or _skillmake_judge(text) or Reply.text("HELLO TEAM!")


@pytest.fixture(scope="module")
def fake() -> Any:
    with FakeAPI() as api:
        api.script = answer
        yield api


def _project(root: Path, spec: dict[str, Any]) -> Project:
    project = Project.empty(root, {".claude/commands/shout.md": COMMAND,
                                   ".claude/commands/shout.eval.json": json.dumps({**BASE, **spec}, indent=2)})
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # clauditor finds its project by .git/.claude
    return project


def _env(api: FakeAPI, claude: str, home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join([os.path.dirname(claude), os.environ.get("PATH", "")])
    return {**os.environ, **api.env(), "PATH": path, "HOME": str(home), "SKILLMAKE_CLAUDE": claude}


def clauditor_grade(root: Path, env: dict[str, str]) -> tuple[int, int | None]:
    """(exit code, criteria passed) of the real `clauditor grade`; None when it graded nothing."""
    done = subprocess.run([str(VENV / "bin" / "clauditor"), "grade", ".claude/commands/shout.md"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    grading = sorted(root.glob(".clauditor/iteration-*/shout/grading.json"))
    if not grading:
        return done.returncode, None
    results = json.loads(grading[-1].read_text())["results"]
    return done.returncode, sum(1 for r in results if r["passed"])


def skillmake_grade(project: Project, env: dict[str, str], spec: dict[str, Any]) -> tuple[int, int | None]:
    done = project.run("clauditor", "grade", ".claude/commands/shout.md", "--json", env=env)
    if not done.out.strip():
        return done.code, None
    report = json.loads(done.out)
    ids = {c["id"] for c in spec.get("grading_criteria", ())}
    failed = {f["id"] for row in report["rows"] for f in row["failures"] if f["k"] == 0 and f["id"] in ids}
    return done.code, len(ids) - len(failed)


# What clauditor 0.1.3 gives each spec (exit code, criteria passed; None: it graded nothing): skillmake must agree.
EXPECTED = {"three_of_four": (0, 3), "defaults_apply": (1, 2), "mean_score_gate": (1, 3),
            "assertions_do_not_gate": (0, 2), "n_runs_is_not_read": (0, 1), "no_criteria": (1, None)}


@pytest.mark.parametrize("name", list(SPECS))
def test_clauditor_and_skillmake_grade_the_same_specs_alike(fake: FakeAPI, tmp_path: Path, name: str) -> None:
    require_seedtools("clauditor")
    claude = require_cli("claude")
    if not shutil.which("git"):
        pytest.skip("git is needed for clauditor to find its project")
    spec = SPECS[name]
    theirs = clauditor_grade(_project(tmp_path / "clauditor", spec).root, _env(fake, claude, tmp_path / "home-c"))
    ours = skillmake_grade(_project(tmp_path / "skillmake", spec), _env(fake, claude, tmp_path / "home-s"), spec)
    assert theirs == EXPECTED[name]  # the real tool, as this test reads it
    assert ours == theirs
    if name in ("three_of_four", "assertions_do_not_gate"):  # the files a CI step reads: clauditor's shape
        _same_files(tmp_path / "clauditor", tmp_path / "skillmake")


def _same_files(theirs: Path, ours: Path) -> None:
    """skillmake's .clauditor/iteration-1/shout/ has clauditor's files, keys and verdicts (values such as tokens,
    timestamps and evidence texts are each tool's own)."""
    for name in ("grading.json", "assertions.json", "run-0/output.txt"):
        assert (ours / ".clauditor/iteration-1/shout" / name).is_file(), name
    t_grading, o_grading = (json.loads((root / ".clauditor/iteration-1/shout/grading.json").read_text())
                            for root in (theirs, ours))
    assert set(o_grading) == set(t_grading)
    assert [(r["id"], r["criterion"], r["passed"], r["score"]) for r in o_grading["results"]] == \
        [(r["id"], r["criterion"], r["passed"], r["score"]) for r in t_grading["results"]]
    assert [set(r) for r in o_grading["results"]] == [set(r) for r in t_grading["results"]]
    assert o_grading["thresholds"] == t_grading["thresholds"]
    t_asserts, o_asserts = (json.loads((root / ".clauditor/iteration-1/shout/assertions.json").read_text())
                            for root in (theirs, ours))
    assert set(o_asserts) == set(t_asserts) and o_asserts["iteration"] == t_asserts["iteration"] == 1
    assert [[(r["id"], r["name"], r["passed"], r["kind"]) for r in run["results"]] for run in o_asserts["runs"]] == \
        [[(r["id"], r["name"], r["passed"], r["kind"]) for r in run["results"]] for run in t_asserts["runs"]]
    assert [set(r) for run in o_asserts["runs"] for r in run["results"]] == \
        [set(r) for run in t_asserts["runs"] for r in run["results"]]
