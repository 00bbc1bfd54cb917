"""Statistics: estimator properties (hypothesis) and worked examples."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillmake.core.stats import (
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
