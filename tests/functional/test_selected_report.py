"""A selected run (-k, --tag) is judged on what it selected and what is stored (pytest's -k): cells it left out
with no record are "not run (not selected)" in report.json, the terminal table and JUnit, and fail nothing.

Also what a newcomer sees around it: the closing line says grades shared within the run as shared (not reused from
the store), and a selection over an invalid spec says the spec is invalid, with validate's exit code.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import orjson
import pytest

from .project import Project, Run, copy_of, template

SPEC = """\
skill: skills/s
agent: {kind: command, command: ["sh", "-c", "echo hi"]}
trials: 3
cases:
  - id: one
    prompt: hello
    checks: [{type: contains, needle: hi}]
  - id: two
    prompt: hello again
    checks: [{type: contains, needle: hi}]
"""
SKILL = "---\nname: s\ndescription: says hi\n---\nSay hi.\n"


def _fresh(root: Path) -> Project:
    return Project.empty(root, {"a.eval.yaml": SPEC, "skills/s/SKILL.md": SKILL})


def _selected_once(root: Path) -> Project:
    project = _fresh(root)
    first = project.run("-k", "one")
    (root / "first.out").write_text(f"{first.code}\n{first.out}\n{first.err}")
    return project


@pytest.fixture(scope="module")
def selected(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, int, str]:
    """The project after its first run, `skillmake -k one`: (project, exit code, output)."""
    folder = template(tmp_path_factory, "selected-k-one", _selected_once)
    code, out = (folder / "first.out").read_text().split("\n", 1)
    return Project.empty(folder), int(code), out


def _report(project: Project) -> dict:
    return orjson.loads((project.root / ".skillmake" / "reports" / "a" / "report.json").read_bytes())


def test_k_one_passes_and_every_rendering_says_case_two_was_not_selected(selected: tuple[Project, int, str]) -> None:
    project, code, out = selected
    assert code == 0, out
    report = _report(project)
    assert report["verdict"]["passed"] is True, report["verdict"]
    assert report["counts"] == {"graded": 3, "expected": 6, "not_selected": 3}
    two = next(r for r in report["rows"] if r["case"] == "two")
    assert (two["n"], two["not_selected"]) == (0, 3)
    assert "not_selected" not in next(r for r in report["rows"] if r["case"] == "one")
    # The gates saw only part of the spec: said as a warning, not a failure.
    assert report["verdict"]["warnings"] == [
        "a: 3 of 6 trials not run (not selected); its gates are judged on the 3 trials that have a grade"]
    table = next(line for line in out.splitlines() if line.strip().startswith("two "))
    assert "not run (not selected)" in table and "0/0" not in table
    assert "a (s, 3 trial(s) per case): ok" in out
    assert "have no grade" not in out
    junit = ET.parse(project.root / ".skillmake" / "reports" / "a" / "junit.xml").getroot()
    skipped = {c.get("name"): c.find("skipped") for c in junit.iter("testcase")}
    assert skipped["two"] is not None and skipped["two"].get("message") == "not run (not selected)"
    assert skipped["one"] is None and skipped["verdict"] is None
    html = (project.root / ".skillmake" / "reports" / "a" / "report.html").read_text()
    assert '<span class="tag">not run (not selected)</span>' in html and "0/3 graded" not in html


def test_grades_shared_within_the_run_are_not_said_to_come_from_the_store(
        selected: tuple[Project, int, str]) -> None:
    _, _, out = selected
    closing = next(line for line in out.splitlines() if line.startswith("skillmake: ran "))
    assert "ran 3 trials and 1 grade; reused 0 trials and 0 grades from the store; 2 grades shared within the run" \
        in closing, closing


def test_the_rest_then_runs_and_a_plain_run_without_it_would_fail(selected: tuple[Project, int, str],
                                                                  tmp_path: Path) -> None:
    project = copy_of(selected[0].root, tmp_path / "proj")
    report = project.run("report")  # no selection: the whole spec is judged, case two has no grade
    assert report.code == 1, report.out + report.err
    assert "3 of 6 trials have no grade" in report.out + report.err
    rest = project.run()
    assert rest.code == 0, rest.out + rest.err
    assert rest.trials == 3
    assert "not_selected" not in _report(project)["counts"]


def test_a_threshold_or_required_case_left_out_by_k_is_not_judged(tmp_path: Path) -> None:
    spec = SPEC.replace("trials: 3\n", "trials: 3\nthresholds: {min_pass_rate: 0.9}\n").replace(
        "  - id: two\n", "  - id: two\n    required: true\n")
    project = Project.empty(tmp_path / "proj", {"a.eval.yaml": spec, "skills/s/SKILL.md": SKILL})
    run = project.run("-k", "one")
    assert run.code == 0, run.out + run.err
    gates = {(t["metric"], t.get("case")): t for t in _report(project)["thresholds"]}
    assert gates[("min_pass_rate", None)]["passed"] is True  # judged on case one's 3 trials
    assert gates[("required", "two")] == {**gates[("required", "two")], "passed": True, "value": None}
    assert "not run under with_skill (not selected)" in gates[("required", "two")]["message"]
    none = project.run("-k", "two and not with_skill")  # selects nothing: exit 5, as before
    assert none.code == 5, none.out + none.err


def test_selecting_in_an_invalid_spec_says_it_is_invalid_with_validates_code(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "proj", {"a.eval.yaml": SPEC.replace("needle: hi}]", "needle: hi, bogus: 1}]"),
                                                "skills/s/SKILL.md": SKILL})
    run: Run = project.run("-k", "one")
    validate = project.run("validate", "a.eval.yaml")
    assert run.code == validate.code == 2, run.out + run.err
    assert "selects none of the 0 cells" not in run.err
    assert "a.eval.yaml:7:43 /cases/0/checks/0/bogus: unknown key 'bogus'" in run.err
    assert "1 spec is invalid" in run.err


def test_trigger_trials_left_out_by_k_are_not_run_not_missing(tmp_path: Path) -> None:
    spec = SPEC + ("trigger_tests:\n  agent: {kind: claude-code}\n  should_trigger: [say hi please]\n"
                   "  should_not_trigger: [compute pi]\n")
    project = Project.empty(tmp_path / "proj", {"a.eval.yaml": spec, "skills/s/SKILL.md": SKILL})
    run = project.run("-k", "one")
    assert run.code == 0, run.out + run.err
    section = _report(project)["triggers"]
    assert section["not_selected"] == 6
    assert "trigger trial(s) have not run" not in run.out
    rows = [line for line in run.out.splitlines() if "say-hi-please" in line or "compute-pi" in line]
    assert len(rows) == 2 and all(line.rstrip().endswith("not run (not selected)") for line in rows), rows
    assert "erred" not in run.out  # a trial that never ran did not err
