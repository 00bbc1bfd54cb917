"""Pins from the mutation run (bench/mutation.py): threshold gates on hand-made reports."""

from __future__ import annotations

from typing import Any

import pytest

from skillmake.results.thresholds import evaluate_thresholds, failing
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, AgentConfig, Arm, Case, Skill, Spec, Thresholds

AGENT = AgentConfig(kind="command", command=("python3", "agent.py"))


def spec(thresholds: Thresholds, *, required: tuple[str, ...] = ()) -> Spec:
    arms = (Arm(name=WITH_SKILL, agent=AGENT), Arm(name="variant", agent=AGENT),
            Arm(name=WITHOUT_SKILL, agent=AGENT, skill=False))
    return Spec(name="s", path="/p/s.eval.yaml", relpath="s.eval.yaml",
                skill=Skill(name="s", path="/p/skills/s", kind="folder"), agent=AGENT, arms=arms,
                cases=tuple(Case(id=c, index=i, prompt=c, required=c in required) for i, c in enumerate(("a", "b"))),
                trials=2, thresholds=thresholds)


def report(**arms: dict[str, Any]) -> dict[str, Any]:
    return {"arms": arms, "rows": [], "baseline": None}


def test_every_rate_gate_applies_to_every_arm_with_the_skill_and_never_to_the_baseline() -> None:
    gates = Thresholds(min_pass_rate=0.5, min_mean_score=0.5, min_stability=0.5)
    values = {"pass_rate": 1.0, "mean_score": 1.0, "stability": 1.0}
    verdicts = evaluate_thresholds(spec(gates), report(**{WITH_SKILL: values, "variant": values,
                                                          WITHOUT_SKILL: dict.fromkeys(values, 0.0)}))
    assert sorted((v.metric, v.arm) for v in verdicts) == sorted(
        (m, a) for m in ("min_pass_rate", "min_mean_score", "min_stability") for a in (WITH_SKILL, "variant"))
    assert all(v.passed for v in verdicts) and failing(verdicts) == []


def test_a_gate_forgives_float_rounding_but_not_a_real_shortfall() -> None:
    gate = Thresholds(min_pass_rate=0.9)
    just_under = evaluate_thresholds(spec(gate), report(**{WITH_SKILL: {"pass_rate": 0.9 - 1e-12}}))
    assert just_under[0].passed and just_under[0].message == "s: with_skill pass rate 0.90 >= min_pass_rate 0.90"
    short = evaluate_thresholds(spec(gate), report(**{WITH_SKILL: {"pass_rate": 0.899}}))
    assert not short[0].passed and short[0].message == "s: with_skill pass rate 0.90 < min_pass_rate 0.90"
    assert failing(short) == short


def test_an_unknown_value_fails_its_gate_and_says_why() -> None:
    verdicts = evaluate_thresholds(spec(Thresholds(min_mean_score=0.1)), report(**{WITH_SKILL: {"mean_score": None}}))
    assert not verdicts[0].passed and verdicts[0].value is None
    assert verdicts[0].message == "s: with_skill mean score is unknown (no graded trials), min_mean_score is 0.10"


def test_the_baseline_delta_gate_reads_the_pass_rate_delta() -> None:
    gate = spec(Thresholds(min_baseline_delta=0.2))
    ok = evaluate_thresholds(gate, {"arms": {}, "rows": [], "baseline": {"delta": {"pass_rate": 0.25}}})
    assert [(v.metric, v.arm, v.value, v.passed) for v in ok] == [("min_baseline_delta", WITH_SKILL, 0.25, True)]
    low = evaluate_thresholds(gate, {"arms": {}, "rows": [], "baseline": {"delta": {"pass_rate": 0.1}}})
    assert not low[0].passed


@pytest.mark.parametrize(("n", "passed", "ok", "value"),
                         [(2, 2, True, 1.0), (1, 1, True, 1.0), (2, 1, False, 0.5), (0, 0, False, None)])
def test_a_required_case_must_pass_every_trial_of_every_arm_with_the_skill(n: int, passed: int, ok: bool,
                                                                           value: float | None) -> None:
    rows = [{"case": "b", "arm": arm, "n": n, "passed": passed} for arm in (WITH_SKILL, "variant", WITHOUT_SKILL)]
    arms: dict[str, Any] = {arm: {} for arm in (WITH_SKILL, "variant", WITHOUT_SKILL)}
    verdicts = evaluate_thresholds(spec(Thresholds(), required=("b",)), {"arms": arms, "rows": rows})
    assert [(v.arm, v.case, v.passed, v.value) for v in verdicts] == [
        (WITH_SKILL, "b", ok, value), ("variant", "b", ok, value)]
    assert all(v.threshold == 1.0 and v.metric == "required" for v in verdicts)


def test_a_required_case_with_no_row_fails() -> None:
    verdicts = evaluate_thresholds(spec(Thresholds(), required=("a",)), {"arms": {WITH_SKILL: {}}, "rows": []})
    assert [(v.passed, v.value) for v in verdicts] == [(False, None)]
    assert verdicts[0].message == "s: required case 'a' failed under with_skill (0/0 trials passed)"
