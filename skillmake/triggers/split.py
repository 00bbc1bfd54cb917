"""The train/test split of a trigger set for the description optimiser: seeded, stratified by should_trigger, and
keeping at least one query of each class in train — skill-creator's `split_eval_set`, so the same eval set and seed
hold out the same queries here as there."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from skillmake.spec.model import TriggerQuery


@dataclass(frozen=True, slots=True, kw_only=True)
class Split:
    """Which queries the improver learns from (train) and which only judge the result (test)."""

    train: tuple[TriggerQuery, ...]
    test: tuple[TriggerQuery, ...]
    holdout: float
    seed: int

    @property
    def queries(self) -> tuple[TriggerQuery, ...]:
        """Every query, train first (the order they are evaluated and shown in)."""
        return self.train + self.test


def held_out(size: int, holdout: float) -> int:
    """How many queries of a class of `size` go to test: none for a class of one (a stratified holdout needs two),
    else int(size × holdout) but at least one, and never the whole class."""
    if size <= 1:
        return 0
    return min(size - 1, max(1, int(size * holdout)))


def split(queries: Sequence[TriggerQuery], *, holdout: float, seed: int) -> Split:
    """Shuffle each class with a generator seeded by `seed` (should_trigger first, then should_not_trigger, each in
    spec order: the order skill-creator's eval set lists them), and hold out `held_out` of each. holdout 0: no test
    set. The queries keep their order within train and within test as shuffled."""
    if holdout <= 0:
        return Split(train=tuple(queries), test=(), holdout=holdout, seed=seed)
    rng = random.Random(seed)
    positive = [q for q in queries if q.should_trigger]
    negative = [q for q in queries if not q.should_trigger]
    rng.shuffle(positive)
    rng.shuffle(negative)
    n_pos, n_neg = held_out(len(positive), holdout), held_out(len(negative), holdout)
    return Split(train=tuple(positive[n_pos:] + negative[n_neg:]), test=tuple(positive[:n_pos] + negative[:n_neg]),
                 holdout=holdout, seed=seed)
