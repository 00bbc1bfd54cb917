"""Threshold gates: min_pass_rate, min_mean_score, min_baseline_delta, min_stability, required cases."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..model import WITH_SKILL, WITHOUT_SKILL, Spec

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


def evaluate_thresholds(spec: Spec, report: Mapping[str, Any]) -> list[Verdict]:
    """Every gate the spec declares, evaluated on its report, passing ones included.

    Rate gates apply to every arm that uses the skill (with_skill and skill variants); the
    baseline delta is with_skill − without_skill pass rate; a required case must pass in every
    trial of every arm that uses the skill.
    """
    name = spec.name
    arms = report.get("arms", {})
    skill_arms = [a.name for a in spec.arms if a.skill and a.name in arms]
    out: list[Verdict] = []
    th = spec.thresholds
    for metric in ("min_pass_rate", "min_mean_score", "min_stability"):
        threshold = getattr(th, metric)
        if threshold is None:
            continue
        for arm in skill_arms:
            out.append(gate(name, metric, arm, arms[arm].get(_FIELDS[metric]), threshold, _LABELS[metric]))
    if th.min_baseline_delta is not None:
        delta = (report.get("baseline") or {}).get("delta", {}).get("pass_rate")
        verdict = gate(name, "min_baseline_delta", WITH_SKILL, delta, th.min_baseline_delta,
                        f"pass-rate delta vs {WITHOUT_SKILL}")
        if delta is None:
            verdict = Verdict(spec=name, metric="min_baseline_delta", arm=WITH_SKILL, value=None,
                              threshold=th.min_baseline_delta, passed=False,
                              message=f"{name}: no baseline to compare with for min_baseline_delta "
                                      f"{th.min_baseline_delta:.2f}; set baseline: true in the spec")
        out.append(verdict)
    for case in spec.cases:
        if not case.required:
            continue
        for arm in skill_arms:
            row = next((r for r in report.get("rows", ()) if r["case"] == case.id and r["arm"] == arm), None)
            n, passed = (row["n"], row["passed"]) if row else (0, 0)
            ok = n > 0 and passed == n
            message = (f"{name}: required case {case.id!r} passed under {arm} ({passed}/{n} trials)" if ok else
                       f"{name}: required case {case.id!r} failed under {arm} ({passed}/{n} trials passed)")
            out.append(Verdict(spec=name, metric="required", arm=arm, case=case.id,
                               value=passed / n if n else None, threshold=1.0, passed=ok, message=message))
    return out


def failing(verdicts: list[Verdict]) -> list[Verdict]:
    return [v for v in verdicts if not v.passed]
