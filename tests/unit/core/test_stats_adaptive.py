"""The adaptive stopping rule (stats.stop_points, adaptive_stop, trial_needed), against hand-worked cases."""

from __future__ import annotations

from typing import Any

import pytest

from skillmake.core.stats import adaptive_stop, sequential_decision, stop_points, trial_needed

RULE: dict[str, Any] = {"least": 3, "most": 12, "batch": 3, "threshold": 0.5, "alpha": 0.05}


def test_looks_start_at_min_step_by_batch_and_end_at_max() -> None:
    assert stop_points(3, 12, 3) == [3, 6, 9, 12]
    assert stop_points(3, 10, 4) == [3, 7, 10]
    assert stop_points(5, 5, 1) == [5]
    assert stop_points(40, 30, 3) == [30]  # min above max: one look, at max


def test_the_first_deciding_look_is_the_answer() -> None:
    # at 0.5 seven equal outcomes decide (M = B(7.5, .5)/B(.5, .5) / 0.5^7 >= 20); six do not
    assert sequential_decision(6, 6, 0.5) is None and sequential_decision(7, 7, 0.5) == "above"
    stop = adaptive_stop([True] * 12, **RULE)
    assert (stop.used, stop.decision, stop.inconclusive) == (9, "above", False)
    stop = adaptive_stop([False] * 12, **RULE)
    assert (stop.used, stop.decision) == (9, "below")


def test_undecided_at_max_is_inconclusive() -> None:
    stop = adaptive_stop([k % 2 == 0 for k in range(12)], **RULE)
    assert (stop.used, stop.decision, stop.inconclusive) == (12, None, True)


def test_an_unknown_outcome_stops_the_walk_at_the_look_that_needs_it() -> None:
    stop = adaptive_stop([True, True, True, None, True, True], **RULE)
    assert (stop.used, stop.decision, stop.needed) == (None, None, 6)
    assert adaptive_stop([True, True], **RULE).needed == 3
    # outcomes after the deciding look are never read
    assert adaptive_stop([True] * 9 + [None, False, False], **RULE).used == 9


@pytest.mark.parametrize(("k", "passes", "needed"), [
    (0, [], True),  # before the first look every trial runs
    (2, [], True),
    (3, [True, True, True], True),  # undecided after 3: the next batch runs
    (8, [True] * 6, True),
    (9, [True] * 9, False),  # decided at the look after 9: trial 9 is not needed
    (11, [True] * 9, False),
    (9, [True] * 8 + [False], True),  # 8 of 9 at 0.5 does not decide
    (12, [True] * 12, False),  # past max
])
def test_a_trial_is_needed_only_while_no_earlier_look_decided(k: int, passes: list[bool], needed: bool) -> None:
    assert trial_needed(k, passes, **RULE) is needed


def test_whether_a_trial_is_needed_reads_only_indices_below_its_last_look() -> None:
    # trial 7 sits between looks 6 and 9: only trials 0-5 matter, whatever trials 6-8 say
    assert trial_needed(7, [True] * 6 + [False, False, False], **RULE) is True
    assert trial_needed(7, [True] * 6 + [None, None], **RULE) is True
