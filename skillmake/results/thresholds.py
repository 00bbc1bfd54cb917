"""Threshold gates: min_pass_rate, min_mean_score, min_baseline_delta, min_stability, required cases; and clauditor's
gate for a spec read from clauditor (the share of its criteria a run passes)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Spec

_EPS = 1e-9  # 9/10 must meet 0.9 whatever the float rounding


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """One gate: which metric of which arm, its value, the threshold, and a readable message."""

    spec: str
    metric: str  # min_pass_rate | min_mean_score | min_baseline_delta | min_stability | required
    arm: str
    value: float | None
    threshold: float
    passed: bool
    message: str
    case: str | None = None
    bound: str = "point"  # which value was compared: the point estimate, or the lower/upper end of its 95% interval

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_LABELS = {"min_pass_rate": "pass rate", "min_mean_score": "mean score", "min_stability": "stability"}
_FIELDS = {"min_pass_rate": "pass_rate", "min_mean_score": "mean_score", "min_stability": "stability"}


def _fmt(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.2f}"


def gate(spec: str, metric: str, arm: str, value: float | None, threshold: float, what: str) -> Verdict:
    passed = value is not None and value + _EPS >= threshold
    op = ">=" if passed else "<"
    message = f"{spec}: {arm} {what} {_fmt(value)} {op} {metric} {threshold:.2f}"
    if value is None:
        message = f"{spec}: {arm} {what} is unknown (no graded trials), {metric} is {threshold:.2f}"
    return Verdict(spec=spec, metric=metric, arm=arm, value=value, threshold=threshold, passed=passed,
                   message=message)


def bound_gate(spec: str, arm: str, block: Mapping[str, Any], threshold: float, bound: str) -> Verdict:
    """min_pass_rate on an end of the arm's 95% Wilson interval (`on: lower` or `on: upper`); the message names
    the bound, its value, the point and the interval."""
    ci: Mapping[str, float] | None = block.get("pass_rate_ci")
    verdict = gate(spec, "min_pass_rate", arm, None if not ci else float(ci["low" if bound == "lower" else "high"]),
                   threshold, f"pass rate {bound} bound")
    if not ci:
        return dataclasses.replace(verdict, bound=bound)
    point = block.get("pass_rate")
    message = (f"{verdict.message} (pass rate {_fmt(point)}, 95% Wilson interval [{ci['low']:.2f}, {ci['high']:.2f}]"
               f" over {block.get('n', 0)} trials)")
    return dataclasses.replace(verdict, bound=bound, message=message)


def evaluate_thresholds(spec: Spec, report: Mapping[str, Any]) -> list[Verdict]:
    """Every gate the spec declares, evaluated on its report, passing ones included.

    Rate gates apply to every arm that uses the skill (with_skill and skill variants); the
    baseline delta is with_skill − without_skill pass rate; a required case must pass in every
    trial of every arm that uses the skill.
    """
    if spec.format == "clauditor" and any(case.criteria for case in spec.cases):
        return clauditor_gates(spec, report.get("grades", ()))
    name = spec.name
    arms = report.get("arms", {})
    skill_arms = [a.name for a in spec.arms if a.skill and a.name in arms]
    out: list[Verdict] = []
    th = spec.thresholds
    rows = report.get("rows", ())
    for metric in ("min_pass_rate", "min_mean_score", "min_stability"):
        threshold = getattr(th, metric)
        if threshold is None:
            continue
        for arm in skill_arms:
            if _unselected(rows, arm):
                out.append(_not_judged(name, metric, arm, threshold))
                continue
            if metric == "min_pass_rate" and th.min_pass_rate_on != "point":
                out.append(bound_gate(name, arm, arms[arm], threshold, th.min_pass_rate_on))
                continue
            out.append(gate(name, metric, arm, arms[arm].get(_FIELDS[metric]), threshold, _LABELS[metric]))
    if th.min_baseline_delta is not None:
        delta = (report.get("baseline") or {}).get("delta", {}).get("pass_rate")
        verdict = gate(name, "min_baseline_delta", WITH_SKILL, delta, th.min_baseline_delta,
                        f"pass-rate delta vs {WITHOUT_SKILL}")
        if delta is None and (_unselected(rows, WITH_SKILL) or _unselected(rows, WITHOUT_SKILL)):
            verdict = _not_judged(name, "min_baseline_delta", WITH_SKILL, th.min_baseline_delta)
        elif delta is None:
            # The spec may have the baseline arm and no graded trial of it yet (a run interrupted, or `-k`).
            has_baseline = any(a.name == WITHOUT_SKILL for a in spec.arms)
            fix = ("run `skillmake` to run its trials" if has_baseline else "set baseline: true in the spec")
            what = f"no graded {WITHOUT_SKILL} trial" if has_baseline else "no baseline"
            verdict = Verdict(spec=name, metric="min_baseline_delta", arm=WITH_SKILL, value=None,
                              threshold=th.min_baseline_delta, passed=False,
                              message=f"{name}: {what} to compare with for min_baseline_delta "
                                      f"{th.min_baseline_delta:.2f}; {fix}")
        out.append(verdict)
    for case in spec.cases:
        if not case.required:
            continue
        for arm in skill_arms:
            row = next((r for r in report.get("rows", ()) if r["case"] == case.id and r["arm"] == arm), None)
            n, passed = (row["n"], row["passed"]) if row else (0, 0)
            if row and not n and row.get("not_selected"):
                out.append(Verdict(spec=name, metric="required", arm=arm, case=case.id, value=None, threshold=1.0,
                                   passed=True, message=f"{name}: required case {case.id!r} not run under {arm} "
                                                        "(not selected): not judged"))
                continue
            ok = n > 0 and passed == n
            message = (f"{name}: required case {case.id!r} passed under {arm} ({passed}/{n} trials)" if ok else
                       f"{name}: required case {case.id!r} failed under {arm} ({passed}/{n} trials passed)")
            out.append(Verdict(spec=name, metric="required", arm=arm, case=case.id,
                               value=passed / n if n else None, threshold=1.0, passed=ok, message=message))
    return out


def _unselected(rows: Sequence[Mapping[str, Any]], arm: str) -> bool:
    """No trial of `arm` has a grade and this run's selection left all of them out: its gates are not judged."""
    mine = [r for r in rows if r["arm"] == arm]
    return bool(mine) and all(not r["n"] and r.get("not_selected") for r in mine)


def _not_judged(spec: str, metric: str, arm: str, threshold: float) -> Verdict:
    return Verdict(spec=spec, metric=metric, arm=arm, value=None, threshold=threshold, passed=True,
                   message=f"{spec}: {arm} not run (not selected): {metric} {threshold:.2f} not judged")


# --- clauditor's gate -----------------------------------------------------------------------------------------

def _criteria_share(grade: Mapping[str, Any], ids: frozenset[str]) -> tuple[int, float] | None:
    """(criteria passed, mean criterion score) of one graded trial; None when it has no grade of its criteria."""
    if grade.get("outcome") not in ("pass", "fail"):
        return None
    found = {str(e.get("id")): e for e in grade.get("expectations", ()) if e.get("source") == "judge"
             and e.get("id") in ids}
    if len(found) != len(ids):
        return None
    passed = sum(1 for e in found.values() if e["passed"])
    return passed, sum(float(e.get("score") or 0.0) for e in found.values()) / len(ids)


def clauditor_gates(spec: Spec, grades: Sequence[Mapping[str, Any]]) -> list[Verdict]:
    """clauditor's `grade` gate (quality_grader.GradingReport.passed): a run passes when the share of its
    grading_criteria passed reaches min_pass_rate and their mean score reaches min_mean_score (clauditor's defaults
    0.7 and 0.5 apply when the spec sets none; assertions and sections do not gate). The primary run (trial 0)
    decides; with more runs (`--variance N`), the share of runs that pass must also reach min_stability."""
    th = spec.thresholds
    rate_min, score_min = th.min_pass_rate or 0.0, th.min_mean_score or 0.0
    out: list[Verdict] = []
    for case in spec.cases:
        ids = frozenset(c.id for c in case.criteria)
        if not ids:
            continue
        mine = sorted((g for g in grades if g["labels"]["case"] == case.id and g["labels"]["arm"] == WITH_SKILL),
                      key=lambda g: int(g["labels"]["k"]))
        runs = [(int(g["labels"]["k"]), _criteria_share(g, ids)) for g in mine]
        primary = next((share for k, share in runs if k == 0), None)
        label = f"{spec.name}: run 1's criteria"
        if primary is None:
            out.append(Verdict(spec=spec.name, metric="min_pass_rate", arm=WITH_SKILL, value=None,
                               threshold=rate_min, passed=False, case=case.id,
                               message=f"{label} are not graded; min_pass_rate is {rate_min:.2f}"))
            continue
        passed, mean = primary
        rate = passed / len(ids)
        out.append(Verdict(spec=spec.name, metric="min_pass_rate", arm=WITH_SKILL, value=rate, threshold=rate_min,
                           passed=rate + _EPS >= rate_min, case=case.id,
                           message=f"{label}: {passed} of {len(ids)} passed ({rate:.2f}), min_pass_rate "
                                   f"{rate_min:.2f}"))
        out.append(Verdict(spec=spec.name, metric="min_mean_score", arm=WITH_SKILL, value=mean, threshold=score_min,
                           passed=mean + _EPS >= score_min, case=case.id,
                           message=f"{label}: mean score {mean:.2f}, min_mean_score {score_min:.2f}"))
        if spec.trials > 1:
            ok = [share is not None and share[0] / len(ids) + _EPS >= rate_min and share[1] + _EPS >= score_min
                  for _, share in runs]
            stability = sum(ok) / spec.trials
            need = th.min_stability if th.min_stability is not None else 0.8
            out.append(Verdict(spec=spec.name, metric="min_stability", arm=WITH_SKILL, value=stability,
                               threshold=need, passed=stability + _EPS >= need, case=case.id,
                               message=f"{spec.name}: {sum(ok)} of {spec.trials} runs passed their criteria "
                                       f"(stability {stability:.2f}), min_stability {need:.2f}"))
    return out


def failing(verdicts: list[Verdict]) -> list[Verdict]:
    return [v for v in verdicts if not v.passed]
