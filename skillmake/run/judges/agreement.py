"""Agreement between repeated judgings of the same outputs: flip rate, minority share, Fleiss' kappa, score spread.

Pure arithmetic over verdicts, no I/O. Subjects are cells (one trial's outputs), raters are the repeats of the
judge, categories are pass and fail. Fleiss' kappa is computed exactly (fractions), so "all verdicts identical"
is recognised as such and never divided by a zero that rounding made 1e-17.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

NO_VARIANCE = "perfect agreement, no variance"  # why kappa is undefined when every verdict is the same
NO_SUBJECTS = "no cell has all its verdicts"


@dataclass(frozen=True, slots=True, kw_only=True)
class Kappa:
    """Fleiss' kappa and its parts; `value` is None when it is undefined, and `note` says why."""

    value: float | None
    observed: float | None  # P̄: the mean agreement within subjects
    expected: float | None  # P̄e: the agreement expected by chance from the category shares
    note: str | None = None


def fleiss_kappa(table: Sequence[Sequence[int]]) -> Kappa:
    """Fleiss' kappa (Fleiss 1971) of a subjects × categories table of counts: row i says how many raters put
    subject i in each category. Every row must have the same number of ratings n ≥ 2.

    P_i = Σ_j n_ij (n_ij − 1) / (n (n − 1)), P̄ = mean P_i, p_j = Σ_i n_ij / (N n), P̄e = Σ_j p_j²,
    κ = (P̄ − P̄e) / (1 − P̄e). When every rating falls in one category P̄e = 1 and κ is 0/0: undefined, reported
    as None with the note "perfect agreement, no variance". No subjects: None too.
    """
    rows = [list(row) for row in table]
    if not rows:
        return Kappa(value=None, observed=None, expected=None, note=NO_SUBJECTS)
    n = sum(rows[0])
    if n < 2:
        raise ValueError(f"Fleiss' kappa needs at least 2 ratings per subject, got {n}")
    if any(sum(row) != n for row in rows) or any(len(row) != len(rows[0]) for row in rows):
        raise ValueError("Fleiss' kappa needs the same number of ratings and categories for every subject")
    if any(c < 0 for row in rows for c in row):
        raise ValueError("counts must not be negative")
    subjects = len(rows)
    observed = sum((Fraction(sum(c * (c - 1) for c in row), n * (n - 1)) for row in rows), Fraction(0)) / subjects
    totals = [sum(row[j] for row in rows) for j in range(len(rows[0]))]
    expected = sum((Fraction(t, subjects * n) ** 2 for t in totals), Fraction(0))
    if expected == 1:
        return Kappa(value=None, observed=float(observed), expected=1.0, note=NO_VARIANCE)
    return Kappa(value=float((observed - expected) / (1 - expected)), observed=float(observed),
                 expected=float(expected))


def pass_fail_table(cells: Sequence[Sequence[bool]]) -> list[list[int]]:
    """Each cell's verdicts as a row of counts [passed, failed] (Fleiss' table for two categories)."""
    return [[sum(1 for v in verdicts if v), sum(1 for v in verdicts if not v)] for verdicts in cells]


def flips(verdicts: Sequence[bool]) -> bool:
    """Whether a cell's verdicts are not unanimous."""
    return len(set(verdicts)) > 1


def minority_share(verdicts: Sequence[bool]) -> float:
    """The share of a cell's verdicts that disagree with its majority: 0 when unanimous, at most 0.5."""
    passed = sum(1 for v in verdicts if v)
    return min(passed, len(verdicts) - passed) / len(verdicts) if verdicts else 0.0


def score_sd(scores: Sequence[float | None]) -> float | None:
    """The sample standard deviation of one cell's scores over its repeats; None with fewer than two scores."""
    values = [s for s in scores if s is not None and math.isfinite(s)]
    return statistics.stdev(values) if len(values) >= 2 else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Agreement:
    """How one criterion's verdicts agree over its cells, each judged the same number of times."""

    cells: int
    flip_rate: float | None  # share of cells whose verdicts are not unanimous
    minority_share: float | None  # mean over cells of the minority's share of the verdicts
    kappa: Kappa
    sd_mean: float | None = None  # mean over cells of the score's standard deviation (scored judges)
    sd_max: float | None = None

    def noisy(self, max_flip_rate: float) -> bool:
        return self.flip_rate is not None and self.flip_rate > max_flip_rate


def agreement(cells: Sequence[Sequence[bool]], scores: Sequence[Sequence[float | None]] | None = None) -> Agreement:
    """Agreement over `cells` (each a list of pass/fail verdicts, one per repeat, all of one length), and, given
    `scores` (each cell's scores in the same order), the spread of the scores."""
    if not cells:
        return Agreement(cells=0, flip_rate=None, minority_share=None, kappa=fleiss_kappa([]))
    count = len(cells)
    sds = [sd for row in (scores or ()) if (sd := score_sd(row)) is not None]
    return Agreement(cells=count, flip_rate=sum(1 for v in cells if flips(v)) / count,
                     minority_share=sum(minority_share(v) for v in cells) / count,
                     kappa=fleiss_kappa(pass_fail_table(cells)),
                     sd_mean=sum(sds) / len(sds) if sds else None, sd_max=max(sds) if sds else None)
