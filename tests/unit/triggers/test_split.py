"""The optimiser's train/test split: seeded, stratified by should_trigger, at least one of each class in train, and
the same split skill-creator's run_loop makes for the same eval set and seed."""

from __future__ import annotations

import random

import pytest

from skillmake.spec.model import TriggerQuery
from skillmake.triggers.split import held_out, split


def queries(positive: int, negative: int) -> list[TriggerQuery]:
    out = [TriggerQuery(id=f"p{i}", query=f"yes {i}", should_trigger=True, index=i) for i in range(positive)]
    return out + [TriggerQuery(id=f"n{i}", query=f"no {i}", should_trigger=False, index=positive + i)
                  for i in range(negative)]


@pytest.mark.parametrize(("size", "holdout", "expected"), [
    (0, 0.4, 0), (1, 0.4, 0), (1, 0.9, 0),  # a class of one stays in train
    (2, 0.4, 1), (3, 0.1, 1),  # at least one held out …
    (10, 0.4, 4), (7, 0.5, 3), (5, 0.99, 4),  # … int(size × holdout), never the whole class
])
def test_held_out_counts(size: int, holdout: float, expected: int) -> None:
    assert held_out(size, holdout) == expected


def test_stratified_each_class_keeps_one_in_train() -> None:
    parts = split(queries(10, 6), holdout=0.4, seed=42)
    assert (sum(q.should_trigger for q in parts.test), sum(not q.should_trigger for q in parts.test)) == (4, 2)
    assert (sum(q.should_trigger for q in parts.train), sum(not q.should_trigger for q in parts.train)) == (6, 4)
    assert sorted(q.id for q in parts.queries) == sorted(q.id for q in queries(10, 6))  # nothing lost, nothing twice
    lonely = split(queries(1, 5), holdout=0.9, seed=42)
    assert [q.id for q in lonely.train if q.should_trigger] == ["p0"] and len(lonely.test) == 4


def test_seeded_the_same_seed_gives_the_same_split_and_another_seed_another() -> None:
    one = split(queries(10, 10), holdout=0.4, seed=42)
    assert one == split(queries(10, 10), holdout=0.4, seed=42)
    others = {tuple(q.id for q in split(queries(10, 10), holdout=0.4, seed=s).test) for s in range(5)}
    assert len(others) > 1


def test_it_is_skill_creators_split() -> None:
    """run_loop seeds Python's generator, shuffles the should-trigger queries then the others (each in eval-set
    order), and holds out the first of each: the same generator calls give the same queries here."""
    qs = queries(6, 5)
    random.seed(7)
    positive = [q.id for q in qs if q.should_trigger]
    negative = [q.id for q in qs if not q.should_trigger]
    random.shuffle(positive)
    random.shuffle(negative)
    parts = split(qs, holdout=0.4, seed=7)
    assert [q.id for q in parts.test] == positive[:2] + negative[:2]
    assert [q.id for q in parts.train] == positive[2:] + negative[2:]


def test_holdout_zero_keeps_every_query_in_train() -> None:
    parts = split(queries(3, 3), holdout=0, seed=42)
    assert [q.id for q in parts.train] == ["p0", "p1", "p2", "n0", "n1", "n2"] and parts.test == ()
