"""Result files from trial/grade records: report, thresholds, grading/timing, benchmark, history, JUnit, summary."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import orjson
import pytest

from skillmake.core.errors import RecordError
from skillmake.results import (
    append_history,
    benchmark_json,
    build_report,
    compare,
    evaluate_thresholds,
    grading_json,
    history_row,
    junit_xml,
    read_history,
    read_report,
    render_summary,
    report_digest,
    timing_json,
    write_benchmark,
    write_grading,
    write_junit,
    write_report,
    write_timing,
)
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Thresholds
from skillmake.spec.schema import validate_record

sys.path.insert(0, str(Path(__file__).parent))
from results_fixtures import grade_record, make_spec, scenario, trial_record

TS = "2026-11-22T20:10:00Z"


def report_for(**spec_kw: Any) -> dict[str, Any]:
    trials, grades = scenario()
    report = build_report(make_spec(**spec_kw), trials, grades, generated=TS)
    validate_record("report.schema.json", report, what="report")
    return report


def row(report: dict[str, Any], case: str, arm: str) -> dict[str, Any]:
    return next(r for r in report["rows"] if r["case"] == case and r["arm"] == arm)


# --- report -------------------------------------------------------------------------------------

def test_report_rows_and_aggregates() -> None:
    report = report_for()
    assert [(r["case"], r["arm"]) for r in report["rows"]] == [
        ("greeting", WITH_SKILL), ("greeting", WITHOUT_SKILL), ("question", WITH_SKILL), ("question", WITHOUT_SKILL)]
    q = row(report, "question", WITH_SKILL)
    assert (q["n"], q["passed"], q["k"], q["pass_rate"], q["pass_at_k"], q["pass_hat_k"]) == (2, 1, 2, 0.5, 1.0, 0.25)
    assert q["stability"] == 0.0  # 'bang' passed once and failed once
    assert q["outcomes"]["fail"] == 1
    assert q["failures"] == [{"k": 1, "id": "bang", "text": "check bang", "evidence": "ends with ?", "source": "check"}]
    with_skill = report["arms"][WITH_SKILL]
    assert (with_skill["n"], with_skill["passed"], with_skill["cases_passed"]) == (4, 3, 1)
    assert with_skill["pass_rate"] == 0.75
    assert report["arms"][WITHOUT_SKILL]["pass_rate"] == 0.0
    assert report["baseline"]["delta"]["pass_rate"] == 0.75
    assert report["counts"] == {"graded": 8, "expected": 8}


def test_report_numbers_trace_to_record_keys() -> None:
    trials, grades = scenario()
    report = build_report(make_spec(), trials, grades)
    for r in report["rows"]:
        mine = sorted((g for g in grades if (g["labels"]["case"], g["labels"]["arm"]) == (r["case"], r["arm"])),
                      key=lambda g: g["labels"]["k"])
        assert r["grade_keys"] == [g["key"] for g in mine]
        assert r["trial_keys"] == [g["trial_key"] for g in mine]
        assert r["passed"] == sum(g["outcome"] == "pass" for g in mine)


def test_report_usage_totals() -> None:
    trials, grades = scenario()
    grades[0]["usage"] = {"total_tokens": 50, "cost_usd": 0.5}
    report = build_report(make_spec(), trials, grades)
    with_agent = report["arms"][WITH_SKILL]["usage"]["agent"]
    assert (with_agent["total_tokens"], with_agent["cost_usd"], with_agent["records"]) == (4000, 0.04, 4)
    assert report["arms"][WITHOUT_SKILL]["usage"]["agent"]["total_tokens"] == 6000
    assert report["usage"]["judge"]["total_tokens"] == 50
    assert report["usage"]["total"]["total_tokens"] == 10050
    assert report["usage"]["total"]["cost_usd"] == pytest.approx(0.58)
    assert report["arms"][WITH_SKILL]["duration_ms"] == {"total": 8000.0, "mean": 2000.0}


def test_report_unknown_usage_is_null_and_missing_trials_counted() -> None:
    spec = make_spec(baseline=False)
    t = trial_record("greeting", WITH_SKILL, 0, tokens=None, cost=None)
    report = build_report(spec, [t], [grade_record(t, "error")])
    validate_record("report.schema.json", report, what="report")
    assert report["usage"]["agent"]["total_tokens"] is None
    assert report["usage"]["agent"]["cost_usd"] is None
    assert report["counts"] == {"graded": 1, "expected": 4}
    g = row(report, "greeting", WITH_SKILL)
    assert (g["n"], g["passed"], g["pass_rate"], g["outcomes"]["error"]) == (1, 0, 0.0, 1)
    assert g["failures"][0]["source"] == "outcome"
    empty = row(report, "question", WITH_SKILL)
    assert (empty["n"], empty["pass_rate"], empty["pass_at_k"]) == (0, None, None)
    assert report["baseline"] is None


def test_report_ignores_stale_cases_and_rejects_duplicate_grades() -> None:
    trials, grades = scenario()
    gone = trial_record("removed-case", WITH_SKILL, 0)
    report = build_report(make_spec(), [*trials, gone], [*grades, grade_record(gone, "pass")])
    assert {r["case"] for r in report["rows"]} == {"greeting", "question"}
    with pytest.raises(ValueError, match="two grades for shout/greeting/with_skill/0"):
        build_report(make_spec(), trials, [*grades, grade_record(trials[0], "fail", salt="old")])


def test_report_digest_ignores_timestamp() -> None:
    trials, grades = scenario()
    a = build_report(make_spec(), trials, grades, generated="2026-01-01T00:00:00Z")
    b = build_report(make_spec(), trials, grades, generated="2026-02-02T00:00:00Z")
    assert report_digest(a) == report_digest(b)
    c = build_report(make_spec(), *scenario(question_with=(True, True)))
    assert report_digest(a) != report_digest(c)


# --- thresholds ---------------------------------------------------------------------------------

def test_threshold_messages() -> None:
    report = report_for(thresholds=Thresholds(min_pass_rate=0.9, min_mean_score=0.5, min_baseline_delta=0.5,
                                              min_stability=0.8))
    by_metric = {t["metric"]: t for t in report["thresholds"]}
    assert by_metric["min_pass_rate"]["message"] == "shout: with_skill pass rate 0.75 < min_pass_rate 0.90"
    assert not by_metric["min_pass_rate"]["passed"]
    assert by_metric["min_mean_score"]["passed"]
    assert by_metric["min_baseline_delta"]["passed"]
    assert by_metric["min_baseline_delta"]["message"] == (
        "shout: with_skill pass-rate delta vs without_skill 0.75 >= min_baseline_delta 0.50")
    assert by_metric["min_stability"]["message"] == "shout: with_skill stability 0.50 < min_stability 0.80"
    assert report["passed"] is False


def test_thresholds_pass_exactly_at_the_bound() -> None:
    report = report_for(thresholds=Thresholds(min_pass_rate=0.75))
    assert report["passed"] is True
    assert report["thresholds"][0]["message"] == "shout: with_skill pass rate 0.75 >= min_pass_rate 0.75"


def test_required_case_and_missing_baseline() -> None:
    spec = make_spec(baseline=False, required=("question",), thresholds=Thresholds(min_baseline_delta=0.1))
    trials, grades = scenario()
    report = build_report(spec, trials, grades)
    verdicts = evaluate_thresholds(spec, report)
    messages = [v.message for v in verdicts if not v.passed]
    assert messages == [
        "shout: no baseline to compare with for min_baseline_delta 0.10; set baseline: true in the spec",
        "shout: required case 'question' failed under with_skill (1/2 trials passed)",
    ]
    assert [v.case for v in verdicts] == [None, "question"]
    ok = build_report(make_spec(required=("greeting",)), trials, grades)
    assert ok["passed"] and ok["thresholds"][0]["message"].endswith("passed under with_skill (2/2 trials)")


# --- grading.json / timing.json -----------------------------------------------------------------

def test_grading_json_exact_shape() -> None:
    t = trial_record("greeting", WITH_SKILL, 0)
    g = grade_record(t, "fail", ("a", True, "found"), ("b", False, "missing"))
    out = grading_json(g)
    assert out == {"expectations": [{"text": "check a", "passed": True, "evidence": "found"},
                                    {"text": "check b", "passed": False, "evidence": "missing"}],
                   "summary": {"passed": 1, "failed": 1, "total": 2, "pass_rate": 0.5}}
    validate_record("grading.schema.json", out, what="grading")
    timed = grading_json(g, t)
    assert timed["timing"] == {"executor_duration_seconds": 2.0, "grader_duration_seconds": 0.5,
                               "total_duration_seconds": 2.5}


def test_grading_json_of_an_error_trial_is_not_clean() -> None:
    t = trial_record("greeting", WITH_SKILL, 0)
    out = grading_json(grade_record(t, "error"))
    assert out["expectations"] == [{"text": "the trial ran to completion", "passed": False,
                                    "evidence": "error: boom"}]


def test_timing_json() -> None:
    t = trial_record("greeting", WITH_SKILL, 0, tokens=84852, ms=23332.4)
    assert timing_json(t) == {"total_tokens": 84852, "duration_ms": 23332, "total_duration_seconds": 23.3}
    assert timing_json(trial_record("greeting", WITH_SKILL, 0, tokens=None))["total_tokens"] is None


# --- benchmark.json -----------------------------------------------------------------------------

def test_benchmark_json() -> None:
    trials, grades = scenario()
    bench = benchmark_json(make_spec(), trials, grades, timestamp=TS)
    validate_record("benchmark.schema.json", bench, what="benchmark")
    assert bench["skill_name"] == "shout"
    it = bench["iterations"][0]
    assert (it["iteration"], it["timestamp"]) == (1, TS)
    with_skill, without = it["configurations"]
    assert (with_skill["name"], without["name"]) == (WITH_SKILL, WITHOUT_SKILL)
    test0 = with_skill["tests"][0]
    assert (test0["eval_id"], test0["eval_name"]) == (0, "greeting")
    assert test0["assertions"] == [{"name": "shouts", "pass_rate": 1.0, "details": "passed 2/2 runs"},
                                   {"name": "len", "pass_rate": 1.0, "details": "passed 2/2 runs"}]
    assert test0["tokens"] == {"mean": 1000.0, "stddev": 0.0, "min": 1000.0, "max": 1000.0}
    assert test0["duration_seconds"]["mean"] == 2.0
    assert with_skill["overall"] == {"pass_rate": 0.75, "avg_tokens": 1000.0, "avg_duration_seconds": 2.0}
    assert without["overall"]["pass_rate"] == 0.25  # skill-creator's rate: expectations passed per run
    assert it["deltas"] == {"pass_rate_improvement": "+0.50", "token_difference": "-500 (33.3% fewer)",
                            "duration_difference": "-1.0s (33.3% faster)"}


def test_benchmark_without_baseline_has_no_deltas() -> None:
    trials, grades = scenario()
    bench = benchmark_json(make_spec(baseline=False), trials, grades, timestamp=TS)
    validate_record("benchmark.schema.json", bench, what="benchmark")
    assert "deltas" not in bench["iterations"][0]


# --- history and compare ------------------------------------------------------------------------

def test_history_row() -> None:
    report = report_for()
    out = history_row(report, ts=TS)
    validate_record("history.schema.json", out, what="history")
    assert {k: out[k] for k in ("ts", "all_passed", "total", "passed", "failed_cases")} == {
        "ts": TS, "all_passed": False, "total": 2, "passed": 1, "failed_cases": ["question"]}
    assert out["digest"] == report_digest(report)


def test_compare_regressed_and_improved_with_key_changes() -> None:
    before = build_report(make_spec(), *scenario())
    after_trials, after_grades = scenario(salt="edit", question_with=(False, False))
    after = build_report(make_spec(), after_trials, after_grades)
    cmp = compare(before, after)
    [reg] = cmp.regressed
    assert (reg.case, reg.arm, reg.before, reg.after, reg.delta) == ("question", WITH_SKILL, 0.5, 0.0, -0.5)
    assert reg.trials_changed and reg.grades_changed
    same = next(c for c in cmp.changes if (c.case, c.arm) == ("greeting", WITHOUT_SKILL))
    assert same.status == "unchanged" and not same.trials_changed
    back = compare(after, before)
    assert [(c.case, c.arm) for c in back.improved] == [("question", WITH_SKILL)]
    assert compare(before, before).nothing_changed
    assert {c.status for c in compare(None, before).changes} == {"new"}


# --- JUnit --------------------------------------------------------------------------------------

def test_junit_xml() -> None:
    report = report_for(thresholds=Thresholds(min_pass_rate=0.9))
    root = ET.fromstring(junit_xml([report]))
    assert (root.get("tests"), root.get("failures")) == ("5", "2")
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "shout"
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    assert cases[("shout.with_skill", "greeting")].find("failure") is None
    failure = cases[("shout.with_skill", "question")].find("failure")
    assert failure is not None
    assert failure.get("message") == "1/2 trials passed (pass rate 0.50, 95% Wilson interval [0.09, 0.91])"
    assert failure.text == "trial 1: [bang] check bang — ends with ?"
    baseline = cases[("shout.without_skill", "greeting")]
    assert baseline.find("failure") is None
    assert baseline.findtext("system-out", "").startswith(
        "baseline: 0/2 trials passed (pass rate 0.00, 95% Wilson interval [0.00, 0.66])\ntrial 0: [shouts]")
    gate = cases[("shout.verdict", "verdict")].find("failure")
    assert gate is not None and gate.text == "shout: with_skill pass rate 0.75 < min_pass_rate 0.90"
    assert gate.get("message") == report["verdict"]["reasons"][0]
    ok = ET.fromstring(junit_xml([report_for(thresholds=Thresholds(min_pass_rate=0.75))]))
    assert ok.get("failures") == "1"  # question × with_skill only: the verdict testcase passes
    assert next(c for c in ok.iter("testcase") if c.get("name") == "verdict").find("failure") is None


# --- terminal summary ---------------------------------------------------------------------------

def test_summary_table() -> None:
    report = report_for(thresholds=Thresholds(min_pass_rate=0.9))
    text = render_summary([report], ran=8, reused=0, seconds=12.34)
    lines = text.splitlines()
    assert lines[0] == "shout (shout, 2 trial(s) per case): FAILED — with_skill pass rate 0.75 < min_pass_rate 0.90"
    assert lines[1].split() == ["case", "arm", "passed", "pass", "rate", "(95%", "CI)", "pass@2", "Δ", "base"]
    assert lines[2].split() == ["greeting", "with_skill", "2/2", "1.00", "[0.34,", "1.00]", "1.00", "+1.00"]
    assert lines[4].split() == ["question", "with_skill", "1/2", "0.50", "[0.09,", "0.91]", "1.00", "+0.50"]
    assert "baseline Δ +0.75" in lines[6]
    assert lines[7] == ("  95% intervals: with_skill [0.30, 0.95]; without_skill [0.00, 0.49]; "
                        "baseline Δ +0.75 [+0.26, +1.00] paired over 2 cases, se 0.25")
    assert lines[8] == "  ✗ shout: with_skill pass rate 0.75 < min_pass_rate 0.90"
    assert lines[9] == "ran 8, reused 0 · 12.3s · results cost: 10,000 tokens $0.0800"


def test_summary_against_previous_and_nothing_changed() -> None:
    before = build_report(make_spec(), *scenario())
    after = build_report(make_spec(), *scenario(salt="x", question_with=(True, True)))
    text = render_summary([after], previous={"shout": before}, ran=2, reused=6)
    q = next(line for line in text.splitlines() if "question" in line and WITH_SKILL in line)
    assert q.split()[-1] == "+0.50"
    one = render_summary([before], previous={"shout": before}, ran=0, reused=8)
    assert one == "nothing changed: 1 spec(s), 4 cell(s) up to date; 1 failing: shout"  # question 1/2, no gate set
    green = build_report(make_spec(thresholds=Thresholds(min_pass_rate=0.5)), *scenario())
    one = render_summary([green], previous={"shout": green}, ran=0, reused=8)
    assert one == "nothing changed: 1 spec(s), 4 cell(s) up to date; all gates pass"


def test_a_threshold_edit_that_turns_the_verdict_shows_the_reason_though_no_cell_changed() -> None:
    before = report_for(thresholds=Thresholds(min_pass_rate=0.5))
    after = report_for(thresholds=Thresholds(min_pass_rate=0.9))
    text = render_summary([after], previous={"shout": before})
    assert not text.startswith("nothing changed")
    assert "  ✗ shout: with_skill pass rate 0.75 < min_pass_rate 0.90" in text.splitlines()


# --- writers ------------------------------------------------------------------------------------

def test_writers_validate_then_write(tmp_path: Path) -> None:
    trials, grades = scenario()
    report = build_report(make_spec(), trials, grades, generated=TS)
    write_report(tmp_path / "r/report.json", report)
    assert read_report(tmp_path / "r/report.json") == report
    write_grading(tmp_path / "grading.json", grades[0], trials[0])
    write_timing(tmp_path / "timing.json", trials[0])
    write_benchmark(tmp_path / "benchmark.json", benchmark_json(make_spec(), trials, grades, timestamp=TS))
    write_junit(tmp_path / "junit.xml", junit_xml([report]))
    assert orjson.loads((tmp_path / "timing.json").read_bytes())["duration_ms"] == 2000
    assert ET.parse(tmp_path / "junit.xml").getroot().tag == "testsuites"
    broken = dict(report, rows="nope")
    with pytest.raises(RecordError, match=r"does not match report\.schema\.json at /rows"):
        write_report(tmp_path / "bad.json", broken)
    assert not (tmp_path / "bad.json").exists()


def test_read_report_treats_corrupt_files_as_missing(tmp_path: Path) -> None:
    assert read_report(tmp_path / "none.json") is None
    (tmp_path / "torn.json").write_bytes(b'{"schema": "skillmake/rep')
    assert read_report(tmp_path / "torn.json") is None
    (tmp_path / "wrong.json").write_bytes(b'{"schema": "other"}')
    assert read_report(tmp_path / "wrong.json") is None


def test_append_history(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    report = report_for()
    changed = report_for(thresholds=Thresholds(min_pass_rate=0.5))
    assert append_history(path, history_row(report, ts="t1"))
    with path.open("ab") as f:
        f.write(b'{"torn": ')  # a crash mid-append elsewhere
    assert not append_history(path, history_row(report, ts="t2"))  # the last readable row has its digest
    assert append_history(path, history_row(changed, ts="t3"))
    assert append_history(path, history_row(report, ts="t4"))  # back again is a change too
    rows = read_history(path.read_bytes())
    assert [r["ts"] for r in rows] == ["t1", "t3", "t4"]
    with pytest.raises(RecordError):
        append_history(path, {"ts": "x"})


def test_publish_writes_files_and_compares_with_previous(tmp_path: Path) -> None:
    from skillmake.results.publish import publish

    folder = tmp_path / "reports/shout"
    first = publish(folder, make_spec(), *scenario(), now="t1")
    assert first.previous is None
    assert {p.name for p in folder.iterdir()} == {"report.json", "benchmark.json", "history.jsonl", "snapshots",
                                                  "archive"}
    second = publish(folder, make_spec(), *scenario(salt="x", question_with=(False, False)), now="t2")
    assert second.previous == first.report
    assert [(c.case, c.arm) for c in second.comparison.regressed] == [("question", WITH_SKILL)]
    assert [r["ts"] for r in read_history((folder / "history.jsonl").read_bytes())] == ["t1", "t2"]


def test_publish_appends_a_history_row_only_when_the_report_changed(tmp_path: Path) -> None:
    """`skillmake report` twice, or a failing spec's no-op run, adds nothing; each changed run adds one row."""
    from skillmake.results.publish import publish

    folder = tmp_path / "reports/shout"
    history = folder / "history.jsonl"
    first = publish(folder, make_spec(), *scenario(), now="t1", run_id="run-1")
    assert first.appended and not first.report["verdict"]["passed"]  # question fails 1 of 2: no gate set
    again = publish(folder, make_spec(), *scenario(), now="t2", run_id="run-2")
    assert not again.appended
    assert [r["ts"] for r in read_history(history.read_bytes())] == ["t1"]
    changed = publish(folder, make_spec(), *scenario(question_with=(True, True)), now="t3", run_id="run-3")
    assert changed.appended
    rows = read_history(history.read_bytes())
    assert [(r["ts"], r["gates_passed"]) for r in rows] == [("t1", False), ("t3", True)]
    assert rows[-1]["digest"] == report_digest(changed.report)
    history.write_bytes(history.read_bytes() + b'{"schema": "skillmake/hist')  # torn last line
    assert not publish(folder, make_spec(), *scenario(question_with=(True, True)), now="t4").appended


def test_last_history_row_reads_the_tail_and_passes_over_a_torn_line(tmp_path: Path) -> None:
    from skillmake.results.files import last_history_row

    path = tmp_path / "history.jsonl"
    assert last_history_row(path) is None
    rows = [history_row(report_for(), ts=f"t{i}") for i in range(400)]  # ~120 KB: more than the tail read
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows) + b'{"ts": "torn')
    last = last_history_row(path)
    assert last is not None and last["ts"] == "t399"


def test_report_digest_ignores_run_id_and_what_was_spent() -> None:
    trials, grades = scenario()
    for r in [*trials, *grades]:
        r["run_id"] = "run-1"
    a = build_report(make_spec(), trials, grades, generated="2026-01-01T00:00:00Z", run_id="run-1")
    b = build_report(make_spec(), trials, grades, generated="2026-02-02T00:00:00Z", run_id="run-2")
    c = build_report(make_spec(), trials, grades)
    assert a["usage"]["spent"] != b["usage"]["spent"] and c["usage"]["spent"] is None
    assert report_digest(a) == report_digest(b) == report_digest(c)


# --- one number, one source: grading.json and benchmark.json ------------------------------------

def test_grading_pass_rate_of_a_pass_without_expectations_is_one() -> None:
    t = trial_record("greeting", WITH_SKILL, 0)
    out = grading_json(grade_record(t, "pass"))
    assert out["summary"] == {"passed": 0, "failed": 0, "total": 0, "pass_rate": 1.0}
    assert grading_json(grade_record(t, "fail"))["summary"]["pass_rate"] == 0.0


@pytest.mark.parametrize("outcome", ["pass", "fail", "judge_error", "error", "cheat"])
def test_benchmark_and_grading_agree_on_every_run(outcome: str) -> None:
    """benchmark.json's assertions and per-run pass rates are grading.json's, whatever the outcome."""
    t = trial_record("greeting", WITH_SKILL, 0)
    verdicts = [("shouts", True, "HELLO"), ("len", outcome == "pass", "12 chars")] if outcome != "error" else []
    why = "judge reply had no verdict" if outcome == "judge_error" else None
    grade = grade_record(t, outcome, *verdicts, error=why)
    grading = grading_json(grade)
    spec = make_spec(trials=1, baseline=False, cases=("greeting",))
    bench = benchmark_json(spec, [t], [grade], timestamp=TS)
    validate_record("benchmark.schema.json", bench, what="benchmark")
    config = bench["iterations"][0]["configurations"][0]
    assertions = config["tests"][0]["assertions"]
    assert [a["pass_rate"] == 1.0 for a in assertions] == [e["passed"] for e in grading["expectations"]]
    assert config["overall"]["pass_rate"] == grading["summary"]["pass_rate"]
    if outcome == "judge_error":
        assert grading["expectations"][-1] == {"text": "the judge returned a usable verdict", "passed": False,
                                               "evidence": "judge_error: judge reply had no verdict"}
        assert assertions[-1] == {"name": "the judge returned a usable verdict", "pass_rate": 0.0,
                                  "details": "passed 0/1 runs"}


# --- cost: spent this run vs reused ---------------------------------------------------------------

def runs_of(trials: list[dict[str, Any]], grades: list[dict[str, Any]], *, now: str) -> None:
    """question's records were produced by run `now`; greeting's by an earlier run."""
    for r in [*trials, *grades]:
        r["run_id"] = now if r["labels"]["case"] == "question" else "run-0"


def test_report_splits_usage_into_spent_and_reused() -> None:
    trials, grades = scenario()
    grades[0]["usage"] = {"total_tokens": 50, "cost_usd": 0.005}  # greeting, reused
    runs_of(trials, grades, now="run-1")
    report = build_report(make_spec(), trials, grades, run_id="run-1")
    validate_record("report.schema.json", report, what="report")
    usage = report["usage"]
    assert (usage["spent"]["total_tokens"], usage["spent"]["cost_usd"], usage["spent"]["records"]) == (5000, 0.04, 8)
    assert (usage["reused"]["total_tokens"], usage["reused"]["cost_usd"]) == (5050, 0.045)
    assert usage["total"]["total_tokens"] == usage["spent"]["total_tokens"] + usage["reused"]["total_tokens"]
    assert report["run_id"] == "run-1"


def test_footer_shows_spent_apart_from_reused() -> None:
    trials, grades = scenario()
    runs_of(trials, grades, now="run-1")
    report = build_report(make_spec(), trials, grades, run_id="run-1")
    footer = render_summary([report], ran=4, reused=4, seconds=3.0, run_id="run-1").splitlines()[-1]
    assert footer == ("ran 4, reused 4 · 3.0s · spent this run: 5,000 tokens $0.0400 · "
                      "reused: 5,000 tokens $0.0400 saved")
    noop = build_report(make_spec(), trials, grades, run_id="run-2")
    footer = render_summary([noop], ran=0, reused=8, run_id="run-2").splitlines()[-1]
    assert footer == "ran 0, reused 8 · reused: 10,000 tokens $0.0800 saved"
    assert render_summary([report]).splitlines()[-1] == "results cost: 10,000 tokens $0.0800"
    # A report built for another run cannot say what this one spent: the total only.
    assert render_summary([noop], run_id="run-1").splitlines()[-1] == "results cost: 10,000 tokens $0.0800"


def test_footer_with_nothing_spent_or_known() -> None:
    t = trial_record("greeting", WITH_SKILL, 0, tokens=None, cost=None, run_id="run-1")
    spec = make_spec(trials=1, baseline=False, cases=("greeting",))
    report = build_report(spec, [t], [grade_record(t, "pass", run_id="run-1")], run_id="run-1")
    assert render_summary([report], ran=1, reused=0, run_id="run-1").splitlines()[-1] == "ran 1, reused 0"


def test_a_record_shared_by_two_cells_costs_once() -> None:
    """Cells with identical inputs share one record: it ran once, so it is spent (and counted) once."""
    spec = make_spec(trials=1, baseline=False)
    shared = trial_record("greeting", WITH_SKILL, 0, run_id="run-1")
    relabelled = dict(shared, labels=dict(shared["labels"], case="question"))
    grades = [grade_record(shared, "pass", run_id="run-1"), grade_record(relabelled, "pass", run_id="run-1")]
    report = build_report(spec, [shared, relabelled], grades, run_id="run-1")
    assert report["counts"]["graded"] == 2
    assert report["usage"]["agent"]["records"] == 1 and report["usage"]["spent"]["total_tokens"] == 1000
    assert report["arms"][WITH_SKILL]["usage"]["agent"]["total_tokens"] == 1000


def test_ungraded_and_stale_trials_in_usage() -> None:
    """A trial that ran but has no grade yet still cost; a trial of a case the spec no longer has did not."""
    spec = make_spec(trials=1, baseline=False)
    ran = trial_record("greeting", WITH_SKILL, 0, run_id="run-1")
    gone = trial_record("removed", WITH_SKILL, 0, run_id="run-1")
    report = build_report(spec, [ran, gone], [], run_id="run-1")
    assert report["usage"]["spent"]["total_tokens"] == 1000 and report["usage"]["agent"]["records"] == 1
