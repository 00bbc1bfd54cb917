"""Pins from the mutation run (bench/mutation.py): the parts of stats.py's definitions no other test reached."""

from __future__ import annotations

from typing import Any

import pytest

from skillmake.core.stats import OUTCOMES, arm_stats, baseline_delta, cell_stats, pass_at_k, pass_hat_k, stability


def g(outcome: str, *verdicts: tuple[str, str, bool], score: float | None = None) -> dict[str, Any]:
    """A grade whose expectations are (id, text, passed)."""
    return {"outcome": outcome, "score": score,
            "expectations": [{"id": i, "text": t, "passed": p, "evidence": ""} for i, t, p in verdicts]}


def test_a_cheat_is_a_verdict_that_counts_towards_stability() -> None:
    assert stability([g("pass", ("a", "a", True)), g("cheat", ("a", "a", False))]) == 0.0
    assert stability([g("pass"), g("cheat")]) == 0.0
    assert stability([g("cheat"), g("cheat")]) == 1.0


def test_stability_keys_an_expectation_by_its_id_before_its_text() -> None:
    reworded = [g("pass", ("a", "the old wording", True)), g("pass", ("a", "the new wording", True))]
    assert stability(reworded) == 1.0
    by_text = [g("pass", ("", "same text", True)), g("pass", ("", "same text", True))]
    assert stability(by_text) == 1.0


def test_k_is_capped_to_one_through_n_and_an_empty_cell_keeps_the_k_asked_for() -> None:
    three = [g("pass"), g("fail"), g("fail")]
    one = cell_stats(three, k=1)
    assert one.k == 1 and one.pass_at_k == pytest.approx(1 / 3) and one.pass_hat_k == pytest.approx(1 / 3)
    assert cell_stats(three, k=9).k == 3
    assert cell_stats(three).k == 3
    assert cell_stats([]).k == 1
    assert cell_stats([], k=5).k == 5
    assert cell_stats([], k=5).pass_at_k is None and cell_stats([], k=5).pass_hat_k is None


def test_every_outcome_is_counted_and_only_pass_passes() -> None:
    cell = cell_stats([g(o) for o in OUTCOMES])
    assert cell.outcomes == dict.fromkeys(OUTCOMES, 1)
    assert cell.passed == 1 and cell.pass_rate == pytest.approx(1 / len(OUTCOMES))


def test_baseline_delta_covers_pass_rate_pass_at_k_pass_hat_k_and_mean_score() -> None:
    better = arm_stats([cell_stats([g("pass", score=1.0), g("pass", score=1.0)], k=2)])
    worse = arm_stats([cell_stats([g("pass", score=0.5), g("fail", score=0.0)], k=2)])
    d = baseline_delta(better, worse)
    assert d == pytest.approx({"pass_rate": 0.5, "pass_at_k": 0.0, "pass_hat_k": 0.75, "mean_score": 0.75})
    assert baseline_delta(better, arm_stats([cell_stats([])])) == dict.fromkeys(d)


def test_the_estimators_at_their_boundaries() -> None:
    assert pass_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)  # n - c == k: not yet certain
    assert pass_at_k(4, 3, 2) == 1.0  # n - c < k: certain
    assert pass_hat_k(4, 2, 3) == pytest.approx(0.125)
    arm = arm_stats([cell_stats([g("pass")]), cell_stats([g("pass"), g("fail")])])
    assert arm.cases_passed == 1 and arm.n == 3 and arm.passed == 2


def test_a_cell_reports_every_outcome_even_those_that_never_happened() -> None:
    assert cell_stats([g("pass")]).outcomes == {"pass": 1, "fail": 0, "error": 0, "timeout": 0, "judge_error": 0,
                                                "cheat": 0}


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_pass_hat_k_rejects_impossible_counts_too(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="need"):
        pass_hat_k(n, c, k)
