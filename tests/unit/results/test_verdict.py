"""One verdict per spec: the header, the reasons, the history row, JUnit and the HTML banner all show it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from skillmake.results import build_report, history_row, junit_xml, render_summary
from skillmake.results.html import html_report
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Thresholds
from skillmake.spec.schema import validate_record

sys.path.insert(0, str(Path(__file__).parent))
from results_fixtures import grade_record, make_spec, scenario, trial_record

HEADER = "shout (shout, 1 trial(s) per case): "


def one_case(trial_outcome: str = "completed", grade_outcome: str | None = "pass", *, error: str | None = None,
             grade_error: str | None = None, **spec_kw: Any) -> dict[str, Any]:
    """The report of a spec with one case, one trial, no baseline; grade_outcome None: not graded."""
    spec = make_spec(trials=1, baseline=False, cases=("case-a",), **spec_kw)
    t = trial_record("case-a", WITH_SKILL, 0, outcome=trial_outcome, error=error)
    grades = [] if grade_outcome is None else [
        grade_record(t, grade_outcome, *([("shouts", grade_outcome == "pass", "evidence")]
                                         if grade_outcome in ("pass", "fail") else []), error=grade_error)]
    report = build_report(spec, [t], grades, generated="t")
    validate_record("report.schema.json", report, what="report")
    return report


def assert_everything_agrees(report: dict[str, Any]) -> None:
    """Header, reasons under the table, history row, JUnit and HTML: all the verdict, none recomputed."""
    verdict = report["verdict"]
    assert report["passed"] is verdict["passed"] and verdict["passed"] is (not verdict["reasons"])
    for reason in verdict["reasons"]:
        assert reason.startswith("shout: ") and "\n" not in reason
    lines = render_summary([report]).splitlines()
    if verdict["passed"]:
        assert lines[0].endswith("): ok")
    else:
        first = verdict["reasons"][0].removeprefix("shout: ")
        more = f" (and {len(verdict['reasons']) - 1} more)" if len(verdict["reasons"]) > 1 else ""
        assert lines[0].endswith(f"): FAILED — {first}{more}")
    assert [line.removeprefix("  ✗ ") for line in lines if line.startswith("  ✗ ")] == verdict["reasons"]
    assert history_row(report, ts="t")["gates_passed"] is verdict["passed"]
    junit = next(c for c in ET.fromstring(junit_xml([report])).iter("testcase") if c.get("name") == "verdict")
    assert (junit.find("failure") is None) is verdict["passed"]
    assert ('class="verdict pass"' in html_report(report)) is verdict["passed"]


def test_a_passing_trial_is_ok() -> None:
    report = one_case()
    assert report["verdict"] == {"passed": True, "reasons": []}
    assert render_summary([report]).splitlines()[0] == HEADER + "ok"
    assert_everything_agrees(report)


def test_no_thresholds_means_every_trial_must_pass() -> None:
    report = one_case("completed", "fail")
    assert report["thresholds"] == []
    assert report["verdict"]["reasons"] == [
        "shout: no thresholds set, so every trial must pass: 1 of 1 with_skill trials failed (case-a)"]
    assert render_summary([report]).splitlines()[0] == (
        HEADER + "FAILED — no thresholds set, so every trial must pass: 1 of 1 with_skill trials failed (case-a)")
    assert_everything_agrees(report)


def test_error_trial_fails_with_its_error() -> None:
    report = one_case("error", "error", error="API 500: overloaded\nTraceback (most recent call last): …")
    reasons = report["verdict"]["reasons"]
    assert reasons[0] == ("shout: 1 trial(s) ended in error or timeout (1 error); "
                          "first error, case-a/with_skill trial 0: API 500: overloaded")
    assert len(reasons) == 2 and reasons[1].startswith("shout: no thresholds set")
    assert render_summary([report]).splitlines()[0] == (
        HEADER + "FAILED — 1 trial(s) ended in error or timeout (1 error); first error, case-a/with_skill trial 0: "
        "API 500: overloaded (and 1 more)")
    assert_everything_agrees(report)


def test_timeout_fails_even_when_thresholds_are_met() -> None:
    report = one_case("timeout", "timeout", error="no answer within 30s", thresholds=Thresholds(min_pass_rate=0.0))
    assert report["thresholds"][0]["passed"]
    assert report["verdict"]["reasons"] == [
        "shout: 1 trial(s) ended in error or timeout (1 timeout); first error, case-a/with_skill trial 0: "
        "no answer within 30s"]
    assert_everything_agrees(report)


def test_missing_grade_fails() -> None:
    report = one_case("completed", None, thresholds=Thresholds(min_pass_rate=0.0))
    assert report["verdict"]["reasons"] == [
        "shout: 1 of 1 trials have no grade",
        "shout: with_skill pass rate is unknown (no graded trials), min_pass_rate is 0.00"]
    assert render_summary([report]).splitlines()[0] == HEADER + "FAILED — 1 of 1 trials have no grade (and 1 more)"
    assert_everything_agrees(report)


@pytest.mark.parametrize("outcome", ["judge_error", "error"])
def test_grade_that_could_not_be_judged_fails(outcome: str) -> None:
    report = one_case("completed", outcome, grade_error="judge reply had no SCORE=",
                      thresholds=Thresholds(min_pass_rate=0.0))
    assert report["verdict"]["reasons"] == [
        f"shout: 1 trial(s) could not be graded (1 {outcome}); first error, case-a/with_skill trial 0: "
        "judge reply had no SCORE="]
    assert_everything_agrees(report)


def test_failing_required_case_fails() -> None:
    report = one_case("completed", "fail", required=("case-a",))
    assert report["verdict"]["reasons"] == ["shout: required case 'case-a' failed under with_skill (0/1 trials passed)"]
    assert render_summary([report]).splitlines()[0] == (
        HEADER + "FAILED — required case 'case-a' failed under with_skill (0/1 trials passed)")
    assert_everything_agrees(report)


def test_a_declared_gate_replaces_the_default_one() -> None:
    """With a threshold set, a failed trial is judged by the threshold, not by the every-trial default."""
    report = build_report(make_spec(thresholds=Thresholds(min_pass_rate=0.75)), *scenario())
    assert report["verdict"] == {"passed": True, "reasons": []}
    assert_everything_agrees(report)
    default = build_report(make_spec(), *scenario())
    assert default["verdict"]["reasons"] == [
        "shout: no thresholds set, so every trial must pass: 1 of 4 with_skill trials failed (question)"]
    assert_everything_agrees(default)


def test_the_baseline_is_measured_not_gated_but_its_errors_count() -> None:
    trials, grades = scenario(question_with=(True, True))
    assert build_report(make_spec(), trials, grades)["verdict"]["passed"]  # without_skill fails every trial
    broken = trial_record("greeting", WITHOUT_SKILL, 0, outcome="timeout", error="killed after 30s")
    grades = [g for g in grades if g["trial_key"] != trials[1]["key"]] + [grade_record(broken, "timeout")]
    report = build_report(make_spec(), [trials[0], broken, *trials[2:]], grades)
    assert report["verdict"]["reasons"] == [
        "shout: 1 trial(s) ended in error or timeout (1 timeout); first error, greeting/without_skill trial 0: "
        "killed after 30s"]
    assert_everything_agrees(report)


def test_reasons_come_root_cause_first_and_in_spec_order() -> None:
    spec = make_spec(trials=2, baseline=False, thresholds=Thresholds(min_pass_rate=0.9))
    late = trial_record("question", WITH_SKILL, 1, outcome="error", error="second")
    early = trial_record("greeting", WITH_SKILL, 1, outcome="timeout", error="first")
    judged = trial_record("greeting", WITH_SKILL, 0)
    grades = [grade_record(late, "error"), grade_record(early, "timeout"),
              grade_record(judged, "judge_error", error="no verdict")]
    report = build_report(spec, [late, early, judged], grades)
    assert report["verdict"]["reasons"] == [
        "shout: 2 trial(s) ended in error or timeout (1 error, 1 timeout); first error, "
        "greeting/with_skill trial 1: first",
        "shout: 1 trial(s) could not be graded (1 judge_error); first error, greeting/with_skill trial 0: no verdict",
        "shout: 1 of 4 trials have no grade",
        "shout: with_skill pass rate 0.00 < min_pass_rate 0.90",
    ]
    assert_everything_agrees(report)


def test_unchanged_one_liner_names_the_failing_spec() -> None:
    report = one_case("completed", "fail")
    assert render_summary([report], previous={"shout": report}, ran=0) == (
        "nothing changed: 1 spec(s), 1 cell(s) up to date; 1 failing: shout")
