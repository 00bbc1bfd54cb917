"""grading.json and timing.json, per trial, in Anthropic skill-creator's exact shapes."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from skillmake.results.records import Record, tokens_of

_OUTCOME_TEXT = {
    "error": "the trial ran to completion",
    "timeout": "the trial finished within its timeout",
    "judge_error": "the judge returned a usable verdict",
    "cheat": "the agent did not touch forbidden files",
}


def run_expectations(grade: Record) -> list[dict[str, Any]]:
    """One run's expectations as skill-creator shows them: {name, text, passed, evidence}, in order.

    `name` (the check's id, else its text) is what benchmark.json groups by; grading.json writes
    only text/passed/evidence. A grade whose outcome is not a plain pass/fail gets one failed
    expectation saying why, so neither file shows a clean sheet for a trial that did not run or
    could not be judged. grading.json and benchmark.json are both built from this list.
    """
    items = [{"name": str(e.get("id") or e["text"]), "text": e["text"], "passed": bool(e["passed"]),
              "evidence": e["evidence"]} for e in grade.get("expectations", ())]
    outcome = grade["outcome"]
    if outcome in _OUTCOME_TEXT:
        why = grade.get("error") or outcome
        items.append({"name": _OUTCOME_TEXT[outcome], "text": _OUTCOME_TEXT[outcome], "passed": False,
                      "evidence": f"{outcome}: {why}"})
    return items


def run_summary(grade: Record, items: list[dict[str, Any]]) -> dict[str, Any]:
    """{passed, failed, total, pass_rate} of one run's expectations (`items` from run_expectations).

    pass_rate is the fraction of expectations that passed; a run with none has the rate of its
    outcome (1.0 for pass, else 0.0), so a passing grade with no expectations is not a 0.
    """
    passed = sum(1 for i in items if i["passed"])
    total = len(items)
    rate = passed / total if total else (1.0 if grade["outcome"] == "pass" else 0.0)
    return {"passed": passed, "failed": total - passed, "total": total, "pass_rate": round(rate, 4)}


def grading_json(grade: Record, trial: Record | None = None, *, names: Collection[str] = ()) -> dict[str, Any]:
    """{"expectations": [{text, passed, evidence}], "summary": {...}} from one grade record.

    With the trial record it grades, a "timing" block (executor / grader / total seconds) is
    added, as skill-creator's grader writes it. The viewer depends on exactly text/passed/evidence;
    an expectation the spec named (one of `names`, e.g. skill-creator's assertion name) also carries
    its `name`, the one benchmark.json's assertions use, so the two files can be joined.
    """
    items = run_expectations(grade)
    out: dict[str, Any] = {"expectations": [_shown(i, names) for i in items], "summary": run_summary(grade, items)}
    if trial is not None:
        executor = float(trial["timing"]["duration_ms"]) / 1000
        grader = float(grade["timing"]["duration_ms"]) / 1000
        out["timing"] = {"executor_duration_seconds": round(executor, 1), "grader_duration_seconds": round(grader, 1),
                         "total_duration_seconds": round(executor + grader, 1)}
    return out


def _shown(item: dict[str, Any], names: Collection[str]) -> dict[str, Any]:
    shown = {k: item[k] for k in ("text", "passed", "evidence")}
    if item["name"] in names:
        shown["name"] = item["name"]
    return shown


def timing_json(trial: Record) -> dict[str, Any]:
    """{"total_tokens", "duration_ms", "total_duration_seconds"} of one trial (tokens null when unknown)."""
    ms = float(trial["timing"]["duration_ms"])
    return {"total_tokens": tokens_of(trial.get("usage", {})), "duration_ms": round(ms),
            "total_duration_seconds": round(ms / 1000, 1)}
