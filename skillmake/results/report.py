"""report.json: skillmake's own per-spec report, every number traceable to the records behind it."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from skillmake.core.canonical import digest_json
from skillmake.core.stats import (
    ArmStats,
    CellStats,
    Interval,
    arm_stats,
    baseline_delta,
    cell_stats,
    delta,
    paired_delta,
    wilson_interval,
)
from skillmake.results.adaptive import gates as adaptive_gates
from skillmake.results.adaptive import row_block
from skillmake.results.records import Record, add_usage, durations_ms, group_grades, of_spec, sum_usage, unique
from skillmake.results.thresholds import evaluate_thresholds
from skillmake.results.triggers import trigger_gates
from skillmake.results.verdict import spec_verdict
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Spec

REPORT_SCHEMA = "skillmake/report@1"
# What differs between two runs over the same records: when, which run, and so what it spent vs reused.
_RUN_FIELDS = frozenset({"generated", "run_id"})
_RUN_USAGE = frozenset({"spent", "reused"})
_EVIDENCE_LIMIT = 300
_METRICS = ("pass_rate", "pass_at_k", "pass_at_k_caliper", "pass_hat_k", "stability", "mean_score")


def _rounded(value: float | None) -> float | None:
    # Rounded so a report's digest does not flip on the last bit of a float sum.
    return None if value is None else round(value, 6)


def _ci(interval: Interval | None) -> dict[str, float] | None:
    return None if interval is None else interval.to_dict()


def rate_ci(rate: float | None, n: int) -> dict[str, float] | None:
    """The 95% Wilson interval of a pass rate over n trials, as report.json writes it ({low, high}, or None)."""
    return _ci(wilson_interval(rate, n))


def ci_text(ci: Mapping[str, float] | None, *, signed: bool = False) -> str:
    """An interval as every rendering shows it: "[0.34, 1.00]" ("[-0.12, +0.50]" signed); "" for none."""
    if not ci:
        return ""
    fmt = "{:+.2f}" if signed else "{:.2f}"
    return f"[{fmt.format(ci['low'])}, {fmt.format(ci['high'])}]"


def paired_text(paired: Mapping[str, Any] | None) -> str:
    """The paired baseline delta's interval and where it comes from: "[+0.26, +1.00] paired over 2 cases, se
    0.25"; with fewer than two cases, why there is none."""
    if not paired or not paired.get("cases"):
        return ""
    if not paired.get("ci"):
        return f"no interval ({paired['cases']} case paired; it needs two)"
    return f"{ci_text(paired['ci'], signed=True)} paired over {paired['cases']} cases, se {paired['se']:.2f}"


def paired_baseline(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The baseline delta as a paired difference over the cases graded in both arms: its mean, its standard
    error clustered by case and its 95% interval (stats.paired_delta)."""
    without = {r["case"]: r["pass_rate"] for r in rows if r["arm"] == WITHOUT_SKILL and r["pass_rate"] is not None}
    pairs = [(r["pass_rate"], without[r["case"]]) for r in rows
             if r["arm"] == WITH_SKILL and r["pass_rate"] is not None and r["case"] in without]
    paired = paired_delta(pairs)
    return {"cases": paired.cases, "mean": _rounded(paired.mean), "se": _rounded(paired.se),
            "ci": _ci(paired.interval)}


def seed_format(spec: Spec) -> str | None:
    """The other tool's format the spec was read from (caliper, eva, …), None for a native spec. Renderings lead
    with that tool's own numbers (caliper's pass@k for a caliper spec)."""
    return spec.format


def headline_pass_at_k(report: Mapping[str, Any]) -> tuple[str, ...]:
    """The pass@k fields a rendering shows, first the one it leads with: caliper's for a spec read from caliper,
    else the unbiased estimator alone. A report written before caliper's pass@k was added has only the unbiased."""
    if report["spec"].get("format") == "caliper" and any("pass_at_k_caliper" in r for r in report["rows"]):
        return ("pass_at_k_caliper", "pass_at_k")
    return ("pass_at_k",)


def _failures(grades: Sequence[Record]) -> list[dict[str, Any]]:
    out = []
    for grade in grades:
        k = int(grade["labels"]["k"])
        if grade["outcome"] not in ("pass", "fail"):
            out.append({"k": k, "id": f"outcome:{grade['outcome']}", "text": f"trial outcome {grade['outcome']}",
                        "evidence": (grade.get("error") or "")[:_EVIDENCE_LIMIT], "source": "outcome"})
        for item in grade.get("expectations", ()):
            if not item["passed"]:
                out.append({"k": k, "id": str(item.get("id") or ""), "text": item["text"],
                            "evidence": item["evidence"][:_EVIDENCE_LIMIT], "source": item.get("source", "judge")})
    return out


def _row(spec: Spec, case_id: str, arm: str, grades: Sequence[Record], *, required: bool,
         sampled: Mapping[tuple[str, str, int], str | None],
         unselected: Collection[tuple[str, str, int]] = ()) -> dict[str, Any]:
    stats: CellStats = cell_stats(grades, k=spec.trials)
    block, expected = row_block(spec.adaptive, grades) if spec.adaptive is not None else (None, spec.trials)
    graded = {int(g["labels"]["k"]) for g in grades}
    # Trials this run's selection left out that have no grade: not run, not missing (pytest's -k: a deselected
    # test neither passes nor fails).
    skipped = min(sum(1 for k in range(expected) if k not in graded and (case_id, arm, k) in unselected),
                  max(expected - stats.n, 0))
    return {
        "case": case_id, "arm": arm, "required": required, "expected": expected,
        "n": stats.n, "passed": stats.passed, "k": stats.k,
        "pass_rate": _rounded(stats.pass_rate), "pass_rate_ci": rate_ci(stats.pass_rate, stats.n),
        "pass_at_k": _rounded(stats.pass_at_k), "pass_at_k_caliper": _rounded(stats.pass_at_k_caliper),
        "pass_hat_k": _rounded(stats.pass_hat_k), "stability": _rounded(stats.stability),
        "mean_score": _rounded(stats.mean_score), "outcomes": stats.outcomes,
        "failures": _failures(grades),
        "trial_keys": [str(g["trial_key"]) for g in grades], "grade_keys": [str(g["key"]) for g in grades],
        # Which run drew each sample: a row whose ids equal the report's run_id was sampled fresh (--resample).
        "trial_runs": [sampled.get((case_id, arm, int(g["labels"]["k"]))) for g in grades],
        **({"adaptive": block} if block is not None else {}),
        **({"not_selected": skipped} if skipped else {}),
    }


def _cell_from_row(row: Mapping[str, Any]) -> CellStats:
    return CellStats(n=row["n"], passed=row["passed"], k=row["k"], pass_rate=row["pass_rate"],
                     pass_at_k=row["pass_at_k"], pass_hat_k=row["pass_hat_k"], stability=row["stability"],
                     mean_score=row["mean_score"], outcomes=dict(row["outcomes"]),
                     pass_at_k_caliper=row.get("pass_at_k_caliper"))


def _arm_block(uses_skill: bool, rows: Sequence[Mapping[str, Any]], trials: Sequence[Record],
               grades: Sequence[Record]) -> dict[str, Any]:
    """`trials` and `grades`: the arm's records, one per key (a shared record ran and cost once)."""
    stats: ArmStats = arm_stats([_cell_from_row(r) for r in rows])
    times = durations_ms(trials)
    agent, judge = sum_usage(trials), sum_usage(grades)
    return {
        "skill": uses_skill,
        "cases": stats.cases, "n": stats.n, "passed": stats.passed, "cases_passed": stats.cases_passed,
        **{m: _rounded(getattr(stats, m)) for m in _METRICS},
        # The arm's rate is the mean of its cases' rates; its interval treats its n trials as one sample.
        "pass_rate_ci": rate_ci(stats.pass_rate, stats.n),
        "usage": {"agent": agent, "judge": judge, "total": add_usage(agent, judge)},
        "duration_ms": {"total": round(sum(times), 3), "mean": round(sum(times) / len(times), 3) if times else None},
    }


def _usage(trials: Sequence[Record], grades: Sequence[Record], run_id: str | None) -> dict[str, Any]:
    """Agent, judge and total usage of the records behind the report; with `run_id`, what this run spent
    (records it produced) apart from what it reused (records of earlier runs)."""
    records = [*unique(trials), *unique(grades)]
    agent, judge = sum_usage(unique(trials)), sum_usage(unique(grades))
    usage: dict[str, Any] = {"agent": agent, "judge": judge, "total": add_usage(agent, judge),
                             "spent": None, "reused": None}
    if run_id is not None:
        usage["spent"] = sum_usage([r for r in records if r.get("run_id") == run_id])
        usage["reused"] = sum_usage([r for r in records if r.get("run_id") != run_id])
    return usage


def build_report(spec: Spec, trials: Sequence[Record], grades: Sequence[Record], *,
                 generated: str | None = None, run_id: str | None = None,
                 triggers: Mapping[str, Any] | None = None,
                 unselected: Collection[tuple[str, str, int]] = ()) -> dict[str, Any]:
    """The report of one spec from its current trial and grade records (pure: no I/O).

    `grades` are the current grade records of this spec (one per trial that has been graded);
    `trials` the current trial records (one per trial that has one, whatever its outcome: an
    error or timeout is part of the verdict). Records of cases or arms the spec no longer has
    are left out. `generated` (an ISO timestamp) and `run_id` (the id of the run building the
    report, which splits usage into spent and reused) are left out of the report digest. `triggers` is the
    trigger section (results/triggers.py), None for a spec without trigger tests. `unselected`: the cells
    (case, arm, k) this run's selection (-k, --tag, --spec) left out; those with no grade are "not run (not
    selected)", not missing, and the gates are judged on the trials that have a grade.
    """
    cells = group_grades(spec, grades)
    spec_trials, spec_grades = of_spec(spec, trials), of_spec(spec, grades)
    rows: list[dict[str, Any]] = []
    arms: dict[str, Any] = {}
    sampled = {(t["labels"]["case"], t["labels"]["arm"], int(t["labels"]["k"])): t.get("run_id") for t in spec_trials}
    for arm in spec.arms:
        arm_rows = []
        arm_grades: list[Record] = []
        for case in spec.cases:
            graded = cells.get((case.id, arm.name), [])
            arm_grades.extend(graded)
            arm_rows.append(_row(spec, case.id, arm.name, graded, required=case.required, sampled=sampled,
                                 unselected=unselected))
        arm_trials = [t for t in spec_trials if t["labels"]["arm"] == arm.name]
        arms[arm.name] = _arm_block(arm.skill, arm_rows, unique(arm_trials), unique(arm_grades))
        rows.extend(arm_rows)
    # Case-major order: a case's arms sit next to each other in every rendering.
    case_order = {c.id: i for i, c in enumerate(spec.cases)}
    arm_order = {a.name: i for i, a in enumerate(spec.arms)}
    rows.sort(key=lambda r: (case_order[r["case"]], arm_order[r["arm"]]))
    baseline = None
    if WITH_SKILL in arms and WITHOUT_SKILL in arms:
        with_skill = arm_stats([_cell_from_row(r) for r in rows if r["arm"] == WITH_SKILL])
        without_skill = arm_stats([_cell_from_row(r) for r in rows if r["arm"] == WITHOUT_SKILL])
        deltas = {**baseline_delta(with_skill, without_skill),
                  "pass_at_k_caliper": delta(with_skill.pass_at_k_caliper, without_skill.pass_at_k_caliper)}
        baseline = {"arm": WITH_SKILL, "against": WITHOUT_SKILL,
                    "delta": {m: _rounded(v) for m, v in deltas.items()}, "paired": paired_baseline(rows)}
    report: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "spec": {"name": spec.name, "path": spec.relpath, "skill": spec.skill.name, "trials": spec.trials,
                 "arms": [a.name for a in spec.arms], "cases": [c.id for c in spec.cases],
                 "format": seed_format(spec),
                 **({"adaptive": spec.adaptive.to_json()} if spec.adaptive is not None else {})},
        "generated": generated,
        "run_id": run_id,
        "rows": rows,
        "arms": arms,
        "baseline": baseline,
        "usage": _usage(spec_trials, spec_grades, run_id),
        "counts": {"graded": sum(len(v) for v in cells.values()),
                   "expected": sum(int(r["expected"]) for r in rows),
                   **({"not_selected": skipped} if (skipped := sum(r.get("not_selected", 0) for r in rows)) else {})},
        "thresholds": [v.to_dict() for v in [*evaluate_thresholds(spec, {"arms": arms, "rows": rows,
                                                                         "baseline": baseline,
                                                                         "grades": spec_grades}),
                                             *trigger_gates(spec, triggers)]] + adaptive_gates(spec, rows),
    }
    if triggers is not None:  # only then: a spec without trigger tests keeps its report (and digest) as it was
        report["triggers"] = dict(triggers)
    report["verdict"] = spec_verdict(spec, report, spec_trials, spec_grades)
    report["passed"] = report["verdict"]["passed"]  # kept for readers of the first report format
    return report


def report_digest(report: Mapping[str, Any]) -> str:
    """sha256 of the report's results: equal digests, equal results.

    Leaves out what only says which run built it (timestamp, run id, spent vs reused), so a run
    that changed nothing gives the digest of the run before it.
    """
    content = {k: v for k, v in report.items() if k not in _RUN_FIELDS}
    if isinstance(content.get("usage"), Mapping):
        content["usage"] = {k: v for k, v in content["usage"].items() if k not in _RUN_USAGE}
    return digest_json(content)


def settled(report: dict[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    """The report to publish: `report`, or, when its results are those of `previous` (the report.json it replaces),
    `report` with the previous one's run fields (when, by which run, and so what that run spent and reused).

    Same results, same file: a re-render (`skillmake report`) or a run that changed nothing leaves report.json as
    it was, and so every page and file built from it (the static site stamps its pages by what they show)."""
    if previous is None or report_digest(previous) != report_digest(report):
        return report
    earlier: Mapping[str, Any] = previous["usage"] if isinstance(previous.get("usage"), Mapping) else {}
    usage = {**report["usage"], **{k: earlier.get(k) for k in _RUN_USAGE}}
    return {**report, **{k: previous.get(k) for k in _RUN_FIELDS}, "usage": usage}


def row_of(report: Mapping[str, Any], case: str, arm: str) -> Mapping[str, Any] | None:
    return next((r for r in report.get("rows", ()) if r["case"] == case and r["arm"] == arm), None)
