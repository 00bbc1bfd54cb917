"""Statistics: estimator properties (hypothesis) and worked examples."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillmake.core.stats import (
    OUTCOMES,
    arm_stats,
    baseline_delta,
    cell_stats,
    delta,
    mean_score,
    pass_at_k,
    pass_hat_k,
    stability,
)


@st.composite
def nck(draw: Any) -> tuple[int, int, int]:
    n = draw(st.integers(min_value=1, max_value=60))
    c = draw(st.integers(min_value=0, max_value=n))
    k = draw(st.integers(min_value=1, max_value=n))
    return n, c, k


@given(nck())
def test_bounds(args: tuple[int, int, int]) -> None:
    n, c, k = args
    assert 0.0 <= pass_at_k(n, c, k) <= 1.0
    assert 0.0 <= pass_hat_k(n, c, k) <= 1.0


@given(nck())
def test_pass_hat_le_pass_rate_le_pass_at(args: tuple[int, int, int]) -> None:
    n, c, k = args
    assert pass_hat_k(n, c, k) <= c / n + 1e-12
    assert c / n <= pass_at_k(n, c, k) + 1e-12


@given(nck())
def test_monotone_in_c(args: tuple[int, int, int]) -> None:
    n, c, k = args
    if c < n:
        assert pass_at_k(n, c + 1, k) >= pass_at_k(n, c, k) - 1e-12
        assert pass_hat_k(n, c + 1, k) >= pass_hat_k(n, c, k)


@given(nck())
def test_monotone_in_k(args: tuple[int, int, int]) -> None:
    n, c, k = args
    if k < n:
        assert pass_at_k(n, c, k + 1) >= pass_at_k(n, c, k) - 1e-12
        assert pass_hat_k(n, c, k + 1) <= pass_hat_k(n, c, k) + 1e-12


@given(nck())
def test_k_equals_one_is_pass_rate(args: tuple[int, int, int]) -> None:
    n, c, _ = args
    assert math.isclose(pass_at_k(n, c, 1), c / n, abs_tol=1e-12)
    assert math.isclose(pass_hat_k(n, c, 1), c / n, abs_tol=1e-12)


@given(nck())
def test_pass_at_n_iff_any_passed(args: tuple[int, int, int]) -> None:
    n, c, _ = args
    assert (pass_at_k(n, c, n) == 1.0) == (c > 0)
    assert pass_at_k(n, 0, n) == 0.0


@given(nck())
def test_extremes(args: tuple[int, int, int]) -> None:
    n, _, k = args
    assert pass_at_k(n, n, k) == 1.0 and pass_hat_k(n, n, k) == 1.0
    assert pass_at_k(n, 0, k) == 0.0 and pass_hat_k(n, 0, k) == 0.0


def test_worked_values() -> None:
    # n=3, c=2, k=2: 1 - C(1,2)/C(3,2) = 1; k=1: 2/3; pass^2 = 4/9.
    assert pass_at_k(3, 2, 2) == 1.0
    assert math.isclose(pass_at_k(10, 3, 2), 1 - math.comb(7, 2) / math.comb(10, 2))
    assert math.isclose(pass_hat_k(3, 2, 2), 4 / 9)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4), (0, 0, 1)])
def test_invalid_counts_raise(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="need"):
        pass_at_k(n, c, k)


def g(outcome: str, *verdicts: tuple[str, bool], score: float | None = None) -> dict[str, Any]:
    return {"outcome": outcome, "score": score,
            "expectations": [{"id": i, "text": i, "passed": p, "evidence": ""} for i, p in verdicts]}


def test_stability_definition() -> None:
    same = [g("pass", ("a", True), ("b", True)), g("fail", ("a", True), ("b", False)),
            g("pass", ("a", True), ("b", True))]
    assert stability(same) == 0.5  # a agrees, b flips
    assert stability([g("pass", ("a", True))]) == 1.0
    assert stability([g("error"), g("timeout")]) is None
    # errors are not verdicts: they do not lower agreement
    assert stability([g("pass", ("a", True)), g("error"), g("pass", ("a", True))]) == 1.0
    # an expectation missing from one trial disagrees
    assert stability([g("pass", ("a", True), ("b", True)), g("pass", ("a", True))]) == 0.5
    # no expectations at all: compare outcomes
    assert stability([g("pass"), g("pass")]) == 1.0
    assert stability([g("pass"), g("fail")]) == 0.0


@given(st.lists(st.tuples(st.sampled_from(["pass", "fail"]), st.lists(st.booleans(), min_size=3, max_size=3)),
                min_size=1, max_size=8))
def test_stability_bounds(trials: list[tuple[str, list[bool]]]) -> None:
    grades = [g(o, *[(str(i), v) for i, v in enumerate(vs)]) for o, vs in trials]
    value = stability(grades)
    assert value is not None and 0.0 <= value <= 1.0
    if len(trials) == 1:
        assert value == 1.0


def test_cell_and_arm_stats() -> None:
    cell = cell_stats([g("pass", score=1.0), g("fail", score=0.5), g("error")], k=2)
    assert (cell.n, cell.passed, cell.k) == (3, 1, 2)
    assert cell.pass_rate == pytest.approx(1 / 3)
    assert cell.pass_at_k == pytest.approx(1 - math.comb(2, 2) / math.comb(3, 2))
    assert cell.mean_score == 0.75
    assert cell.outcomes == {"pass": 1, "fail": 1, "error": 1, "timeout": 0, "judge_error": 0, "cheat": 0}
    assert not cell.all_passed
    full = cell_stats([g("pass", score=1.0), g("pass", score=1.0)])
    assert full.k == 2 and full.pass_at_k == 1.0 and full.all_passed
    empty = cell_stats([])
    assert empty.pass_rate is None and empty.mean_score is None and not empty.all_passed
    arm = arm_stats([cell, full, empty])
    assert (arm.cases, arm.n, arm.passed, arm.cases_passed) == (3, 5, 3, 1)
    assert arm.pass_rate == pytest.approx((1 / 3 + 1) / 2)
    base = arm_stats([cell_stats([g("fail", score=0.0)])])
    d = baseline_delta(arm, base)
    assert d["pass_rate"] == pytest.approx(arm.pass_rate)
    assert d["mean_score"] == pytest.approx(arm.mean_score)
    assert delta(None, 0.5) is None
    assert mean_score([g("error")]) is None


# Pins from the mutation run (bench/mutation.py): the parts of stats.py's definitions no other test reached.
def g_pin(outcome: str, *verdicts: tuple[str, str, bool], score: float | None = None) -> dict[str, Any]:
    """A grade whose expectations are (id, text, passed)."""
    return {"outcome": outcome, "score": score,
            "expectations": [{"id": i, "text": t, "passed": p, "evidence": ""} for i, t, p in verdicts]}


def test_a_cheat_is_a_verdict_that_counts_towards_stability() -> None:
    assert stability([g_pin("pass", ("a", "a", True)), g_pin("cheat", ("a", "a", False))]) == 0.0
    assert stability([g_pin("pass"), g_pin("cheat")]) == 0.0
    assert stability([g_pin("cheat"), g_pin("cheat")]) == 1.0


def test_stability_keys_an_expectation_by_its_id_before_its_text() -> None:
    reworded = [g_pin("pass", ("a", "the old wording", True)), g_pin("pass", ("a", "the new wording", True))]
    assert stability(reworded) == 1.0
    by_text = [g_pin("pass", ("", "same text", True)), g_pin("pass", ("", "same text", True))]
    assert stability(by_text) == 1.0


def test_k_is_capped_to_one_through_n_and_an_empty_cell_keeps_the_k_asked_for() -> None:
    three = [g_pin("pass"), g_pin("fail"), g_pin("fail")]
    one = cell_stats(three, k=1)
    assert one.k == 1 and one.pass_at_k == pytest.approx(1 / 3) and one.pass_hat_k == pytest.approx(1 / 3)
    assert cell_stats(three, k=9).k == 3
    assert cell_stats(three).k == 3
    assert cell_stats([]).k == 1
    assert cell_stats([], k=5).k == 5
    assert cell_stats([], k=5).pass_at_k is None and cell_stats([], k=5).pass_hat_k is None


def test_every_outcome_is_counted_and_only_pass_passes() -> None:
    cell = cell_stats([g_pin(o) for o in OUTCOMES])
    assert cell.outcomes == dict.fromkeys(OUTCOMES, 1)
    assert cell.passed == 1 and cell.pass_rate == pytest.approx(1 / len(OUTCOMES))


def test_baseline_delta_covers_pass_rate_pass_at_k_pass_hat_k_and_mean_score() -> None:
    better = arm_stats([cell_stats([g_pin("pass", score=1.0), g_pin("pass", score=1.0)], k=2)])
    worse = arm_stats([cell_stats([g_pin("pass", score=0.5), g_pin("fail", score=0.0)], k=2)])
    d = baseline_delta(better, worse)
    assert d == pytest.approx({"pass_rate": 0.5, "pass_at_k": 0.0, "pass_hat_k": 0.75, "mean_score": 0.75})
    assert baseline_delta(better, arm_stats([cell_stats([])])) == dict.fromkeys(d)


def test_the_estimators_at_their_boundaries() -> None:
    assert pass_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)  # n - c == k: not yet certain
    assert pass_at_k(4, 3, 2) == 1.0  # n - c < k: certain
    assert pass_hat_k(4, 2, 3) == pytest.approx(0.125)
    arm = arm_stats([cell_stats([g_pin("pass")]), cell_stats([g_pin("pass"), g_pin("fail")])])
    assert arm.cases_passed == 1 and arm.n == 3 and arm.passed == 2


def test_a_cell_reports_every_outcome_even_those_that_never_happened() -> None:
    assert cell_stats([g_pin("pass")]).outcomes == {"pass": 1, "fail": 0, "error": 0, "timeout": 0, "judge_error": 0,
                                                "cheat": 0}


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_pass_hat_k_rejects_impossible_counts_too(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="need"):
        pass_hat_k(n, c, k)
