"""benchmark.json in Anthropic skill-creator's shape: configurations, per-test assertions, deltas, and the history
of iterations."""

from __future__ import annotations

import datetime as dt
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from skillmake.results.grading import run_expectations, run_summary
from skillmake.results.records import Record, durations_ms, group_grades, tokens_of, trials_by_key
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Spec


def _spread(values: Sequence[float], *, digits: int) -> dict[str, float | None]:
    """mean / sample stddev / min / max; stddev 0 for one value; all null for none."""
    if not values:
        return {"mean": None, "stddev": None, "min": None, "max": None}
    return {"mean": round(statistics.fmean(values), digits),
            "stddev": round(statistics.stdev(values), digits) if len(values) > 1 else 0.0,
            "min": round(min(values), digits), "max": round(max(values), digits)}


def _assertions(runs: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per-test assertions from each run's expectations (the ones its grading.json shows), by name."""
    order: dict[str, list[bool]] = {}
    for items in runs:
        for item in items:
            order.setdefault(item["name"], []).append(item["passed"])
    return [{"name": name, "pass_rate": round(sum(v) / len(v), 4), "details": f"passed {sum(v)}/{len(v)} runs"}
            for name, v in order.items()]


def _configuration(spec: Spec, arm: str, cells: dict[tuple[str, str], list[Record]],
                   trials: dict[str, Record]) -> tuple[dict[str, Any], dict[str, float | None]]:
    tests = []
    runs: list[float] = []
    all_tokens: list[float] = []
    all_secs: list[float] = []
    for case in spec.cases:
        grades = cells.get((case.id, arm), [])
        matched = [trials[str(g["trial_key"])] for g in grades if str(g["trial_key"]) in trials]
        tokens = [float(t) for t in (tokens_of(r.get("usage", {})) for r in matched) if t is not None]
        secs = [ms / 1000 for ms in durations_ms(matched)]
        items = [run_expectations(g) for g in grades]
        # skill-creator's per-run pass rate is its grading.json summary.pass_rate: one number, one source.
        runs.extend(float(run_summary(g, i)["pass_rate"]) for g, i in zip(grades, items, strict=True))
        all_tokens.extend(tokens)
        all_secs.extend(secs)
        tests.append({"eval_id": case.result_id, "eval_name": case.id, "assertions": _assertions(items),
                      "tokens": _spread(tokens, digits=1), "duration_seconds": _spread(secs, digits=2)})
    overall = {"pass_rate": round(statistics.fmean(runs), 4) if runs else None,
               "avg_tokens": round(statistics.fmean(all_tokens), 1) if all_tokens else None,
               "avg_duration_seconds": round(statistics.fmean(all_secs), 2) if all_secs else None}
    return {"name": arm, "tests": tests, "overall": overall}, overall


def _signed(value: float, digits: int) -> str:
    return f"{value:+.{digits}f}"


def deltas(with_skill: dict[str, float | None], without_skill: dict[str, float | None]) -> dict[str, str]:
    """The seed's delta strings: "+0.05", "-1200 (2.7% fewer)", "-0.5s (3.9% faster)"; "n/a" when unknown."""
    out = {"pass_rate_improvement": "n/a", "token_difference": "n/a", "duration_difference": "n/a"}
    a, b = with_skill.get("pass_rate"), without_skill.get("pass_rate")
    if a is not None and b is not None:
        out["pass_rate_improvement"] = _signed(a - b, 2)
    a, b = with_skill.get("avg_tokens"), without_skill.get("avg_tokens")
    if a is not None and b is not None:
        diff = a - b
        rel = f" ({abs(diff) / b * 100:.1f}% {'fewer' if diff < 0 else 'more'})" if b else ""
        out["token_difference"] = f"{diff:+.0f}{rel}"
    a, b = with_skill.get("avg_duration_seconds"), without_skill.get("avg_duration_seconds")
    if a is not None and b is not None:
        diff = a - b
        rel = f" ({abs(diff) / b * 100:.1f}% {'faster' if diff < 0 else 'slower'})" if b else ""
        out["duration_difference"] = f"{diff:+.1f}s{rel}"
    return out


def _extension(report: Mapping[str, Any], arm: str) -> dict[str, Any] | None:
    """The `skillmake` key of a configuration: report.json's trial pass rate of the arm and its 95% Wilson interval
    (skill-creator's overall.pass_rate is the mean share of expectations, another number; the seed has no
    interval, so ours goes under our own key)."""
    block = (report.get("arms") or {}).get(arm)
    if block is None:
        return None
    out = {"n": block["n"], "passed": block["passed"], "pass_rate": block["pass_rate"],
           "pass_rate_ci": block.get("pass_rate_ci")}
    decided = [r["adaptive"] for r in report.get("rows", ()) if r["arm"] == arm and r.get("adaptive")]
    if decided:  # adaptive trials: each case's decision, and what stopping early saved
        out["adaptive"] = {**{d: sum(1 for b in decided if b["decision"] == d)
                              for d in ("pass", "fail", "inconclusive", "undecided")},
                           "trials_saved": sum(int(b["saved"]) for b in decided)}
    return out


def benchmark_json(spec: Spec, trials: Sequence[Record], grades: Sequence[Record], *, timestamp: str,
                   iteration: int = 1, report: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One iteration of skill-creator's benchmark.json for this spec (every arm is a configuration).

    With `report` (the spec's report.json built from the same records), each configuration and the iteration carry
    a `skillmake` key with the report's pass rates, their 95% intervals and the paired baseline delta: the same
    numbers every other rendering shows."""
    cells = group_grades(spec, grades)
    by_key = trials_by_key(trials)
    configurations = []
    overall: dict[str, dict[str, float | None]] = {}
    for arm in spec.arms:
        config, overall[arm.name] = _configuration(spec, arm.name, cells, by_key)
        extension = _extension(report, arm.name) if report is not None else None
        if extension is not None:
            config["skillmake"] = extension
        configurations.append(config)
    entry: dict[str, Any] = {"iteration": iteration, "timestamp": skill_creator_time(timestamp),
                             "configurations": configurations}
    if WITH_SKILL in overall and WITHOUT_SKILL in overall:
        entry["deltas"] = deltas(overall[WITH_SKILL], overall[WITHOUT_SKILL])
    baseline = (report or {}).get("baseline")
    if baseline:
        entry["skillmake"] = {"baseline": {"pass_rate_delta": baseline["delta"]["pass_rate"],
                                           "paired": baseline.get("paired")}}
    return {"skill_name": spec.skill.name, "iterations": [entry]}


def skill_creator_time(timestamp: str) -> str:
    """An ISO timestamp in skill-creator's form, UTC to the second with a Z: "2025-02-26T12:34:56Z".

    A naive time is taken as UTC; text that is not an ISO time is kept as given."""
    try:
        when = dt.datetime.fromisoformat(timestamp)
    except ValueError:
        return timestamp
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def with_history(previous: Mapping[str, Any] | None, current: Mapping[str, Any]) -> dict[str, Any]:
    """benchmark.json keeping skill-creator's iteration history: `current` (one iteration, from benchmark_json)
    added to the `previous` file's iterations as the next one, when its results differ from the last iteration's.

    A run that changed no result leaves the file as it was, timestamp included (as history.jsonl adds no row),
    so `iterations[]` grows once per change of results. A previous file of another skill, or none (missing,
    unreadable or invalid: the caller reads it validated), starts the history again at iteration 1.
    """
    entry = dict(current["iterations"][-1])
    past = list(previous.get("iterations", ())) if previous else []
    if not past or previous is None or previous.get("skill_name") != current["skill_name"]:
        return {"skill_name": current["skill_name"], "iterations": [dict(entry, iteration=1)]}
    last = past[-1]
    if _results(last) == _results(entry):
        return dict(previous)
    entry["iteration"] = int(last["iteration"]) + 1
    return {**previous, "skill_name": current["skill_name"], "iterations": [*past, entry]}


def _results(entry: Mapping[str, Any]) -> dict[str, Any]:
    """What an iteration found, without when and which one it was."""
    return {k: v for k, v in entry.items() if k not in ("iteration", "timestamp")}
