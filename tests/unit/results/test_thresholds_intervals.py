"""Intervals against worked examples computed independently: Wilson by its formula written out here (and published
values), the paired baseline delta by hand, and a threshold on the bound of the interval."""

from __future__ import annotations

import math
from typing import Any

import pytest

from skillmake.compare.winrate import win_rate
from skillmake.core.stats import mixture_log_wealth, paired_delta, sequential_decision, wilson, wilson_interval
from skillmake.results.report import ci_text, paired_baseline, rate_ci
from skillmake.results.thresholds import bound_gate, evaluate_thresholds
from skillmake.results.triggers import _ci as trigger_ci
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Thresholds

Z = 1.959963984540054  # Φ⁻¹(0.975), written here rather than imported


def by_hand(successes: int, n: int) -> tuple[float, float]:
    """Wilson (1927): (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n), with p = successes / n."""
    p = successes / n
    denominator = 1 + Z**2 / n
    centre = p + Z**2 / (2 * n)
    spread = Z * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2))
    return (centre - spread) / denominator, (centre + spread) / denominator


def test_wilson_four_of_four_is_n_over_n_plus_z_squared_to_one() -> None:
    # At p = 1 the formula reduces to [n / (n + z²), 1]: 4 / 7.8415 = 0.5101.
    low, high = wilson(1.0, 4)
    assert low == pytest.approx(4 / (4 + Z**2), abs=1e-12) == pytest.approx(0.5101, abs=1e-4)
    assert high == 1.0
    assert (low, high) == pytest.approx(by_hand(4, 4))


def test_wilson_zero_of_four_is_zero_to_z_squared_over_n_plus_z_squared() -> None:
    low, high = wilson(0.0, 4)
    assert low == 0.0
    assert high == pytest.approx(Z**2 / (4 + Z**2), abs=1e-12) == pytest.approx(0.4899, abs=1e-4)


def test_wilson_seven_of_ten_matches_the_published_interval() -> None:
    low, high = wilson(0.7, 10)
    assert (round(low, 4), round(high, 4)) == (0.3968, 0.8922)
    assert (low, high) == pytest.approx(by_hand(7, 10))


def test_wilson_is_wider_than_the_normal_interval_at_the_edges() -> None:
    # The normal (Wald) interval of 4/4 is [1, 1]: no uncertainty at all, which is what the Wilson interval fixes.
    wald_half = Z * math.sqrt(1.0 * 0.0 / 4)
    assert wald_half == 0.0
    low, _ = wilson(1.0, 4)
    assert 1.0 - low > 0.48


@pytest.mark.parametrize(("successes", "n"), [(1, 3), (2, 3), (5, 6), (3, 10), (16, 20)])
def test_wilson_matches_the_formula_written_out(successes: int, n: int) -> None:
    assert wilson(successes / n, n) == pytest.approx(by_hand(successes, n), abs=1e-12)


def test_no_trial_has_no_interval_and_bad_input_is_refused() -> None:
    assert wilson_interval(None, 3) is None and wilson_interval(0.5, 0) is None
    assert rate_ci(None, 0) is None
    with pytest.raises(ValueError, match="n must be at least 1"):
        wilson(0.5, 0)
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
        wilson(1.5, 4)


def test_the_report_and_compares_win_rate_use_one_wilson() -> None:
    assert rate_ci(0.7, 10) == {"low": pytest.approx(0.3968, abs=5e-5), "high": pytest.approx(0.8922, abs=5e-5)}
    rate = win_rate(7, 3, 0)
    assert (rate.low, rate.high) == pytest.approx(by_hand(7, 10))
    assert ci_text(rate_ci(0.7, 10)) == "[0.40, 0.89]"


def test_trigger_rates_and_precision_recall_have_wilson_intervals_and_none_over_nothing() -> None:
    assert trigger_ci(7, 10) == rate_ci(0.7, 10)
    assert trigger_ci(0, 0) is None


# --- the paired baseline delta ------------------------------------------------------------------------------------

def test_paired_delta_worked_example() -> None:
    # Per-case pass rates (with_skill, without_skill): d = 0.5, 0.0, 1.0, 0.5.
    pairs = [(1.0, 0.5), (0.5, 0.5), (1.0, 0.0), (0.75, 0.25)]
    # mean 0.5; deviations 0, −0.5, 0.5, 0 → sample variance 0.5 / 3; se = √(0.5/3 / 4) = 0.204124.
    se = math.sqrt((0.5 / 3) / 4)
    assert se == pytest.approx(0.204124, abs=1e-6)
    result = paired_delta(pairs)
    assert (result.cases, result.mean, result.se) == (4, 0.5, pytest.approx(se))
    assert result.interval is not None
    assert (result.interval.low, result.interval.high) == pytest.approx((0.5 - Z * se, 0.5 + Z * se))
    assert (round(result.interval.low, 4), round(result.interval.high, 4)) == (0.0999, 0.9001)


def test_pairing_removes_the_difficulty_both_arms_share() -> None:
    # Cases differ a lot in difficulty, but the skill adds exactly 0.1 to each: the paired difference is known
    # exactly, where treating the arms as independent samples would give a wide interval.
    with_skill, without_skill = [0.9, 0.5, 0.1], [0.8, 0.4, 0.0]
    result = paired_delta(list(zip(with_skill, without_skill, strict=True)))
    assert result.mean == pytest.approx(0.1) and result.se == pytest.approx(0.0, abs=1e-12)
    unpaired_se = math.sqrt(0.16 / 3 + 0.16 / 3)  # each arm's sample variance is 0.16 over 3 cases
    assert unpaired_se > 0.3


def test_paired_delta_needs_two_cases_for_an_interval_and_is_clipped() -> None:
    assert paired_delta([]).mean is None
    one = paired_delta([(1.0, 0.0)])
    assert (one.cases, one.mean, one.se, one.interval) == (1, 1.0, None, None)
    wide = paired_delta([(1.0, 0.0), (0.0, 0.0)])  # mean 0.5, se 0.5: ±0.98 clipped at 1
    assert wide.interval is not None and wide.interval.high == 1.0
    assert wide.interval.low == pytest.approx(0.5 - Z * 0.5)


def row(case: str, arm: str, rate: float | None) -> dict[str, Any]:
    return {"case": case, "arm": arm, "pass_rate": rate}


def test_the_reports_paired_baseline_pairs_by_case_and_skips_ungraded_cases() -> None:
    rows = [row("a", WITH_SKILL, 1.0), row("a", WITHOUT_SKILL, 0.5), row("b", WITH_SKILL, 0.5),
            row("b", WITHOUT_SKILL, 0.5), row("c", WITH_SKILL, 1.0), row("c", WITHOUT_SKILL, None),
            row("d", WITH_SKILL, 1.0), row("d", WITHOUT_SKILL, 0.0), row("e", WITH_SKILL, 0.75),
            row("e", WITHOUT_SKILL, 0.25)]
    paired = paired_baseline(rows)
    assert paired["cases"] == 4 and paired["mean"] == 0.5 and paired["se"] == pytest.approx(0.204124, abs=1e-6)
    assert paired["ci"] == {"low": pytest.approx(0.099924, abs=1e-6), "high": pytest.approx(0.900076, abs=1e-6)}


# --- thresholds on the bound --------------------------------------------------------------------------------------

def _arm(passed: int, n: int) -> dict[str, Any]:
    return {"n": n, "passed": passed, "pass_rate": passed / n, "pass_rate_ci": rate_ci(passed / n, n)}


def test_a_lower_bound_threshold_fails_where_the_point_passes() -> None:
    block = _arm(9, 10)  # point 0.90; Wilson [0.5958, 0.9821]
    lower = bound_gate("s", WITH_SKILL, block, 0.8, "lower")
    assert not lower.passed and lower.bound == "lower"
    assert lower.value == pytest.approx(by_hand(9, 10)[0], abs=1e-6) == pytest.approx(0.5958, abs=1e-4)
    assert lower.message == ("s: with_skill pass rate lower bound 0.60 < min_pass_rate 0.80 "
                             "(pass rate 0.90, 95% Wilson interval [0.60, 0.98] over 10 trials)")


def test_an_upper_bound_threshold_passes_where_the_point_fails() -> None:
    block = _arm(6, 10)  # point 0.60; Wilson upper 0.8312
    upper = bound_gate("s", WITH_SKILL, block, 0.8, "upper")
    assert upper.passed and upper.value == pytest.approx(by_hand(6, 10)[1], abs=1e-6)
    assert upper.message.startswith("s: with_skill pass rate upper bound 0.83 >= min_pass_rate 0.80")


def test_a_bound_gate_with_no_trial_fails_and_says_unknown() -> None:
    verdict = bound_gate("s", WITH_SKILL, {"n": 0, "passed": 0, "pass_rate": None, "pass_rate_ci": None}, 0.8,
                         "lower")
    assert not verdict.passed and verdict.value is None and "unknown" in verdict.message


class _Spec:
    """The parts of a Spec evaluate_thresholds reads."""

    def __init__(self, thresholds: Thresholds) -> None:
        self.name, self.format, self.thresholds, self.cases = "s", None, thresholds, ()
        arm = type("Arm", (), {"name": WITH_SKILL, "skill": True})
        self.arms = (arm,)


def test_evaluate_thresholds_keeps_the_point_by_default_and_uses_the_bound_when_asked() -> None:
    report: dict[str, Any] = {"arms": {WITH_SKILL: _arm(9, 10)}, "rows": [], "baseline": None}
    point = evaluate_thresholds(_Spec(Thresholds(min_pass_rate=0.8)), report)  # type: ignore[arg-type]
    assert [(v.passed, v.bound, v.value) for v in point] == [(True, "point", 0.9)]
    assert point[0].message == "s: with_skill pass rate 0.90 >= min_pass_rate 0.80"
    lower = evaluate_thresholds(_Spec(Thresholds(min_pass_rate=0.8, min_pass_rate_on="lower")),  # type: ignore[arg-type]
                                report)
    assert [(v.passed, v.bound) for v in lower] == [(False, "lower")]


# --- the anytime-valid confidence sequence (adaptive trials' decision rule) ----------------------------------------

def test_mixture_wealth_by_hand() -> None:
    # Jeffreys Beta(1/2, 1/2) mixture after 10 passes of 10, against p = 0.8:
    # B(10.5, 0.5) / B(0.5, 0.5) / 0.8^10, with B(x, y) = Γ(x)Γ(y)/Γ(x + y) and B(1/2, 1/2) = π.
    beta = math.gamma(10.5) * math.gamma(0.5) / math.gamma(11.0)
    wealth = beta / math.pi / 0.8**10
    assert mixture_log_wealth(10, 10, 0.8) == pytest.approx(math.log(wealth))
    assert wealth == pytest.approx(1.64, abs=0.01)  # 10/10 is far from clearing 0.8 at α = 0.05 (wealth 20) …
    assert sequential_decision(10, 10, 0.8) is None

    def all_pass(n: int) -> float:  # B(n + 1/2, 1/2) / π / 0.8^n
        return math.gamma(n + 0.5) * math.gamma(0.5) / math.gamma(n + 1.0) / math.pi / 0.8**n

    # … 23/23 is not enough (19.8), 24/24 is (24.3): the price of being allowed to look after every trial.
    assert all_pass(23) < 20 <= all_pass(24)
    assert sequential_decision(23, 23, 0.8) is None and sequential_decision(24, 24, 0.8) == "above"
    assert sequential_decision(0, 8, 0.8) == "below"
    assert sequential_decision(8, 10, 0.8) is None  # on the threshold: never decided
    assert sequential_decision(0, 0, 0.8) is None


def test_stopping_at_the_first_decision_is_wrong_at_most_alpha_of_the_time() -> None:
    # At p = threshold every decision is wrong: checked after every trial up to 60, the share decided stays ≤ α,
    # where stopping as soon as a 95% Wilson interval clears the threshold ("peeking") goes well past it.
    import random

    rng = random.Random(7)
    runs, wrong, peeked = 2000, 0, 0
    for _ in range(runs):
        s = 0
        decided = peeking = False
        for n in range(1, 61):
            s += rng.random() < 0.8
            decided = decided or sequential_decision(s, n, 0.8) is not None
            low, high = wilson(s / n, n)
            peeking = peeking or (n >= 3 and (low > 0.8 or high < 0.8))
        wrong += decided
        peeked += peeking
    assert wrong / runs <= 0.05
    assert peeked / runs > 0.1
