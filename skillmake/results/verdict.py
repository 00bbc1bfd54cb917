"""A spec's one verdict: passed or not, and every reason why not, each one line starting with the spec's name.

The header, the history row, the summary, JUnit, the HTML banner and the exit code all read this
verdict, so they cannot disagree. A spec fails when any of these holds:

- a trial ended in error or timeout (it did not produce a result; it is retried on the next run);
- a grade ended in error or judge_error while its trial did run (the trial could not be judged);
- a trial the spec asks for has no grade (unless this run's selection left it out: "not run (not selected)");
- a declared threshold or required case is not met;
- the spec declares no threshold and no required case, and a graded trial of an arm that uses the
  skill did not pass (the default gate: with nothing declared, every trial must pass);
- with adaptive trials (`trials: {min, max, decide}`), a case under an arm that uses the skill is surely below
  `decide`, or is inconclusive at max under `inconclusive: fail` (results/adaptive.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from skillmake.results import adaptive
from skillmake.results.records import Record, cell_name
from skillmake.results.triggers import trigger_reasons
from skillmake.spec.model import Spec

TRIAL_ERRORS = ("error", "timeout")
GRADE_ERRORS = ("error", "timeout", "judge_error")
_TEXT_LIMIT = 200
_CASES_LISTED = 5


def _first_line(text: str) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= _TEXT_LIMIT else line[:_TEXT_LIMIT - 1] + "…"


def _counts(records: Sequence[Record]) -> str:
    counts: dict[str, int] = {}
    for record in records:
        counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
    return ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))


def _broken(name: str, records: Sequence[Record], what: str) -> list[str]:
    """One reason for records that did not produce a result: how many, of which outcome, the first error."""
    if not records:
        return []
    first = records[0]
    text = _first_line(str(first.get("error") or "")) or f"no error text ({first['outcome']})"
    return [f"{name}: {len(records)} {what} ({_counts(records)}); first error, {cell_name(first)}: {text}"]


def _default_gate(spec: Spec, report: Mapping[str, Any]) -> list[str]:
    th = spec.thresholds
    declared = any(v is not None for v in (th.min_pass_rate, th.min_mean_score, th.min_baseline_delta,
                                            th.min_stability))
    if declared or spec.adaptive is not None or any(c.required for c in spec.cases):
        return []  # adaptive trials gate each case on `decide` (results/adaptive.py)
    out = []
    for arm in spec.arms:
        if not arm.skill:
            continue
        rows = [r for r in report["rows"] if r["arm"] == arm.name]
        graded = sum(r["n"] for r in rows)
        failed = sum(r["n"] - r["passed"] for r in rows)
        if failed:
            cases = [r["case"] for r in rows if r["passed"] < r["n"]]
            listed = ", ".join(cases[:_CASES_LISTED]) + (", …" if len(cases) > _CASES_LISTED else "")
            out.append(f"{spec.name}: no thresholds set, so every trial must pass: {failed} of {graded} "
                       f"{arm.name} trials failed ({listed})")
    return out


def spec_verdict(spec: Spec, report: Mapping[str, Any], trials: Sequence[Record],
                 grades: Sequence[Record]) -> dict[str, Any]:
    """{"passed", "reasons"} of one spec from its report (rows, counts, thresholds) and its records.

    `trials` and `grades` are the spec's current records, one per cell that has one, in the
    spec's order (see records.of_spec). Reasons come root cause first: what could not run or be
    judged, what is missing, then the gates.
    """
    name = spec.name
    errored = [t for t in trials if t["outcome"] in TRIAL_ERRORS]
    errored_keys = {str(t["key"]) for t in errored}
    # A grade of a trial that errored carries the trial's error: reported once, with the trial.
    unjudged = [g for g in grades if g["outcome"] in GRADE_ERRORS
                and not (g["outcome"] in TRIAL_ERRORS and str(g["trial_key"]) in errored_keys)]
    reasons = [*_broken(name, errored, "trial(s) ended in error or timeout"),
               *_broken(name, unjudged, "trial(s) could not be graded")]
    expected, graded = report["counts"]["expected"], report["counts"]["graded"]
    skipped = int(report["counts"].get("not_selected", 0))
    if graded + skipped < expected:
        missing = expected - graded - skipped
        reasons.append(adaptive.missing_reason(spec, missing, expected)
                       or f"{name}: {missing} of {expected} trials have no grade")
    reasons += trigger_reasons(spec, report.get("triggers"))
    reasons += [str(t["message"]) for t in report["thresholds"] if not t["passed"]]
    reasons += _default_gate(spec, report)
    verdict: dict[str, Any] = {"passed": not reasons, "reasons": reasons}
    # Adaptive trials: a case the sequence could not decide by max is the third verdict, inconclusive; under
    # `inconclusive: warn` it passes, and is said as a warning.
    undecided = adaptive.inconclusive(spec, report["rows"])
    if undecided:
        verdict["inconclusive"] = undecided
    warned = adaptive.warnings(spec, report["rows"])
    if skipped:  # a gate over the whole spec saw only part of it: say so
        warned = [f"{name}: {skipped} of {expected} trials not run (not selected); its gates are judged on the "
                  f"{graded} trials that have a grade", *warned]
    if warned:
        verdict["warnings"] = warned
    return verdict
