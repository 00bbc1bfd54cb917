"""Agreement between repeated judgings (skillmake/run/judges/agreement.py): Fleiss' kappa against published worked
examples, its degenerate cases, flip rate, minority share and the score's spread."""

from __future__ import annotations

import pytest

from skillmake.run.judges.agreement import (
    NO_SUBJECTS,
    NO_VARIANCE,
    agreement,
    fleiss_kappa,
    flips,
    minority_share,
    pass_fail_table,
    score_sd,
)

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters each, 5 categories.
# p_j = 0.143, 0.200, 0.279, 0.150, 0.229; P̄ = 0.378; P̄e = 0.213; κ = 0.210.
WIKIPEDIA = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_wikipedias_worked_example() -> None:
    k = fleiss_kappa(WIKIPEDIA)
    assert k.observed == pytest.approx(0.378, abs=5e-4)
    assert k.expected == pytest.approx(0.213, abs=5e-4)
    assert k.value == pytest.approx(0.210, abs=5e-4)
    assert k.note is None


def test_the_example_by_hand_in_exact_arithmetic() -> None:
    # P̄ = 0.37802…, P̄e = 0.21337…: κ = (P̄ − P̄e) / (1 − P̄e) = 0.20993…
    k = fleiss_kappa(WIKIPEDIA)
    assert k.value == pytest.approx((k.observed - k.expected) / (1 - k.expected), rel=1e-12)
    assert k.value == pytest.approx(0.20993, abs=1e-5)


def test_row_order_and_category_order_do_not_matter() -> None:
    shuffled = [list(reversed(row)) for row in reversed(WIKIPEDIA)]
    assert fleiss_kappa(shuffled).value == pytest.approx(fleiss_kappa(WIKIPEDIA).value, rel=1e-12)


def test_every_verdict_the_same_is_undefined_not_a_division_error() -> None:
    for table in ([[6, 0]] * 4, [[0, 6]] * 4, [[3, 0]]):
        k = fleiss_kappa(table)
        assert k.value is None and k.note == NO_VARIANCE and k.expected == 1.0 and k.observed == 1.0


def test_unanimous_cells_that_differ_from_each_other_agree_perfectly() -> None:
    # Every cell judged the same every time, some pass and some fail: the judge is perfectly consistent.
    assert fleiss_kappa([[6, 0], [0, 6], [6, 0]]).value == pytest.approx(1.0)


def test_worst_case_agreement_is_negative() -> None:
    # Two raters who always split: P̄ = 0, P̄e = 0.5, κ = −1 (the minimum for n = 2 is −1/(n−1)).
    assert fleiss_kappa([[1, 1], [1, 1]]).value == pytest.approx(-1.0)


def test_an_even_split_in_every_cell_is_below_chance() -> None:
    # 3 pass, 3 fail everywhere: P_i = (3·2 + 3·2) / (6·5) = 0.4, P̄e = 0.5, κ = (0.4 − 0.5) / 0.5 = −0.2.
    k = fleiss_kappa([[3, 3]] * 10)
    assert k.value == pytest.approx(-0.2)


def test_no_subjects_is_undefined_too() -> None:
    k = fleiss_kappa([])
    assert k.value is None and k.note == NO_SUBJECTS


@pytest.mark.parametrize("table", [[[1, 0]], [[2, 0], [1, 0]], [[2, 0], [1, 1, 0]], [[3, -1]]])
def test_malformed_tables_are_refused(table: list[list[int]]) -> None:
    with pytest.raises(ValueError, match=r"Fleiss|negative"):
        fleiss_kappa(table)


def test_flip_rate_minority_share_and_kappa_over_cells() -> None:
    cells = [[True] * 6, [True, True, True, True, True, False], [False, True, False, True, False, True],
             [False] * 6]
    result = agreement(cells)
    assert result.cells == 4
    assert result.flip_rate == 0.5  # two of four cells are not unanimous
    assert result.minority_share == pytest.approx((0 + 1 / 6 + 3 / 6 + 0) / 4)
    assert pass_fail_table(cells) == [[6, 0], [5, 1], [3, 3], [0, 6]]
    expected = fleiss_kappa([[6, 0], [5, 1], [3, 3], [0, 6]]).value
    assert result.kappa.value == pytest.approx(expected)
    assert result.noisy(0.0) and result.noisy(0.4) and not result.noisy(0.5)


def test_a_stable_criterion() -> None:
    result = agreement([[True] * 3, [True] * 3])
    assert result.flip_rate == 0 and result.minority_share == 0
    assert result.kappa.value is None and result.kappa.note == NO_VARIANCE
    assert not result.noisy(0.0)


def test_no_cells() -> None:
    result = agreement([])
    assert result.cells == 0 and result.flip_rate is None and result.kappa.value is None
    assert not result.noisy(0.0)


def test_flips_and_minority_share_of_one_cell() -> None:
    assert not flips([True, True]) and flips([True, False])
    assert minority_share([True, True, False, False]) == 0.5
    assert minority_share([False, False, False, True]) == 0.25
    assert minority_share([]) == 0.0


def test_score_spread() -> None:
    assert score_sd([4, 4, 4]) == 0
    assert score_sd([3, 5]) == pytest.approx(2 ** 0.5)  # the sample standard deviation
    assert score_sd([4]) is None and score_sd([None, 4]) is None
    result = agreement([[True, True], [True, False]], [[4, 4], [3, 5]])
    assert result.sd_mean == pytest.approx(2 ** 0.5 / 2) and result.sd_max == pytest.approx(2 ** 0.5)
