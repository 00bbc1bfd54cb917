"""The statistics of a report: pass rate, pass@k, pass^k, stability and mean score, per cell and per arm.

A *cell* is one case under one arm over its n trials (one grade record each). Definitions:

- pass rate = c / n, where c counts grades whose outcome is ``pass``. Every other outcome
  (fail, cheat, error, timeout, judge_error) counts as not passed: an eval that could not run
  has not shown that the skill works.
- pass@k = 1 − C(n−c, k) / C(n, k), the unbiased estimator of "at least one of k samples
  passes" (Chen et al. 2021, HumanEval), for 1 ≤ k ≤ n.
- caliper's pass@k = 1 − (1 − c/n)^k, the plug-in estimator of the same chance (caliper's own formula,
  which it uses with k = n: 1 − (1 − successes/k)^k). It reads low (with n = k = 3, one pass gives 0.704 and
  two 0.963, where the unbiased estimator gives 1.0 for both), but it is the number a caliper user knows, so
  every report carries it beside the unbiased one, each under its own name.
- pass^k = (c / n)^k, the plug-in estimator of "all of k samples pass" (τ-bench's pass^k).
  It is not the unbiased C(c, k) / C(n, k); the plug-in form is defined for any k ≥ 1 and is
  what the report shows.
- stability = the fraction of expectations (checks and judge verdicts, keyed by id, else text)
  whose verdict is unanimous across the cell's verdict-bearing trials (outcome pass, fail or
  cheat), clauditor's cross-run agreement. An expectation missing from some of those trials
  counts as disagreeing. When no trial has expectations, the trial outcomes themselves are
  compared (1.0 if all agree, else 0.0). With one verdict-bearing trial it is 1.0; with none,
  None.
- mean score = the mean of the grades' ``score`` over grades that have one (None if none).

Per arm, each metric is the mean over the arm's cells that have a value (every case weighs the
same, whatever its n); ``n`` and ``passed`` are summed. The baseline delta is
with_skill − without_skill for each metric.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

OUTCOMES = ("pass", "fail", "error", "timeout", "judge_error", "cheat")
VERDICT_OUTCOMES = frozenset({"pass", "fail", "cheat"})


def _check_counts(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k = 1 − C(n−c, k) / C(n, k): the chance at least one of k draws passes."""
    _check_counts(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k_caliper(n: int, c: int, k: int) -> float:
    """caliper's pass@k = 1 − (1 − c / n)^k (plug-in estimator; caliper's own formula with k = n)."""
    _check_counts(n, c, k)
    return 1.0 - (1.0 - c / n) ** k


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k = (c / n)^k (plug-in estimator): the chance all of k independent draws pass."""
    _check_counts(n, c, k)
    return (c / n) ** k


def _expectation_key(item: Mapping[str, Any]) -> str:
    return str(item.get("id") or item.get("text", ""))


def stability(grades: Sequence[Mapping[str, Any]]) -> float | None:
    """Cross-trial agreement of verdicts in [0, 1] (see the module docstring for the definition)."""
    scored = [g for g in grades if g.get("outcome") in VERDICT_OUTCOMES]
    if not scored:
        return None
    if len(scored) == 1:
        return 1.0
    verdicts: list[dict[str, bool]] = []
    for grade in scored:
        verdicts.append({_expectation_key(e): bool(e["passed"]) for e in grade.get("expectations", ())})
    keys = set().union(*verdicts)
    if not keys:
        return 1.0 if len({g["outcome"] == "pass" for g in scored}) == 1 else 0.0
    agree = sum(1 for key in keys if all(key in v for v in verdicts) and len({v[key] for v in verdicts}) == 1)
    return agree / len(keys)


def mean_score(grades: Sequence[Mapping[str, Any]]) -> float | None:
    scores = [float(g["score"]) for g in grades if g.get("score") is not None]
    return sum(scores) / len(scores) if scores else None


@dataclass(frozen=True, slots=True, kw_only=True)
class CellStats:
    """One case under one arm over its n trials."""

    n: int
    passed: int
    k: int  # the k of pass@k and pass^k (the trials asked for, capped at n)
    pass_rate: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    stability: float | None
    mean_score: float | None
    outcomes: dict[str, int] = field(default_factory=dict)
    pass_at_k_caliper: float | None = None

    @property
    def all_passed(self) -> bool:
        return self.n > 0 and self.passed == self.n


def cell_stats(grades: Sequence[Mapping[str, Any]], *, k: int | None = None) -> CellStats:
    """Statistics of one cell's grades; k defaults to n (caliper's pass@k over all trials)."""
    n = len(grades)
    outcomes = dict.fromkeys(OUTCOMES, 0)
    for grade in grades:
        outcomes[grade["outcome"]] = outcomes.get(grade["outcome"], 0) + 1
    c = outcomes["pass"]
    kk = max(1, min(k if k is not None else n, n))
    return CellStats(n=n, passed=c, k=kk if n else (k or 1),
                     pass_rate=c / n if n else None,
                     pass_at_k=pass_at_k(n, c, kk) if n else None,
                     pass_hat_k=pass_hat_k(n, c, kk) if n else None,
                     pass_at_k_caliper=pass_at_k_caliper(n, c, kk) if n else None,
                     stability=stability(grades), mean_score=mean_score(grades), outcomes=outcomes)


@dataclass(frozen=True, slots=True, kw_only=True)
class ArmStats:
    """Aggregates of one arm over its cases (means over cases that have a value)."""

    cases: int
    n: int
    passed: int
    cases_passed: int  # cells where every trial passed
    pass_rate: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    stability: float | None
    mean_score: float | None
    pass_at_k_caliper: float | None = None


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def arm_stats(cells: Sequence[CellStats]) -> ArmStats:
    return ArmStats(cases=len(cells), n=sum(c.n for c in cells), passed=sum(c.passed for c in cells),
                    cases_passed=sum(1 for c in cells if c.all_passed),
                    pass_rate=_mean([c.pass_rate for c in cells]), pass_at_k=_mean([c.pass_at_k for c in cells]),
                    pass_hat_k=_mean([c.pass_hat_k for c in cells]), stability=_mean([c.stability for c in cells]),
                    mean_score=_mean([c.mean_score for c in cells]),
                    pass_at_k_caliper=_mean([c.pass_at_k_caliper for c in cells]))


def delta(with_value: float | None, without_value: float | None) -> float | None:
    """with − without, or None when either is unknown."""
    if with_value is None or without_value is None:
        return None
    return with_value - without_value


DELTA_METRICS = ("pass_rate", "pass_at_k", "pass_hat_k", "mean_score")


def baseline_delta(with_skill: ArmStats, without_skill: ArmStats) -> dict[str, float | None]:
    """with_skill − without_skill for pass rate, pass@k, pass^k and mean score (caliper's pass@k: delta())."""
    return {m: delta(getattr(with_skill, m), getattr(without_skill, m)) for m in DELTA_METRICS}


# --- intervals (docs/statistics.md) ---------------------------------------------------------------------------

Z95 = 1.959963984540054  # the two-sided 95% standard normal quantile


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """A 95% interval [low, high] around a point estimate."""

    low: float
    high: float

    def to_dict(self, digits: int = 6) -> dict[str, float]:
        return {"low": round(self.low, digits), "high": round(self.high, digits)}


def wilson(p: float, n: int, *, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval (Wilson 1927) of a proportion `p` observed over `n` trials, clipped to [0, 1].

    centre = (p + z²/2n) / (1 + z²/n); half-width = z·√(p(1−p)/n + z²/4n²) / (1 + z²/n). Unlike the normal
    (Wald) interval it stays inside [0, 1] and is not zero-width at 0/n or n/n, which matters at 3–10 trials."""
    if n <= 0:
        raise ValueError(f"n must be at least 1, got {n}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson_interval(p: float | None, n: int) -> Interval | None:
    """The 95% Wilson interval of `p` over `n` trials; None with no trial or no rate."""
    if p is None or n <= 0:
        return None
    low, high = wilson(p, n)
    return Interval(low=low, high=high)


@dataclass(frozen=True, slots=True, kw_only=True)
class PairedDelta:
    """The mean of paired per-case differences d_i = with_i − without_i, its standard error clustered by case
    (sd(d) / √n, Miller 2024) and the 95% normal interval mean ± z·se (None below two cases: no spread to
    measure)."""

    cases: int
    mean: float | None
    se: float | None
    interval: Interval | None


def paired_delta(pairs: Sequence[tuple[float, float]], *, z: float = Z95) -> PairedDelta:
    """The paired difference over cases from (with, without) per-case pass rates (Miller 2024, "Adding Error
    Bars to Evals", paired differences): with the same cases in both arms, the variance of the mean difference
    is that of the per-case differences over n, so the difficulty both arms share cancels. sd is the sample
    standard deviation (n − 1); the interval is clipped to [−1, 1]."""
    diffs = [a - b for a, b in pairs]
    n = len(diffs)
    if n == 0:
        return PairedDelta(cases=0, mean=None, se=None, interval=None)
    mean = sum(diffs) / n
    if n < 2:
        return PairedDelta(cases=1, mean=mean, se=None, interval=None)
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    se = math.sqrt(var / n)
    return PairedDelta(cases=n, mean=mean, se=se,
                       interval=Interval(low=max(-1.0, mean - z * se), high=min(1.0, mean + z * se)))


# --- anytime-valid decisions (adaptive trials, docs/statistics.md) ----------------------------------------------

def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


JEFFREYS = (0.5, 0.5)  # the mixing prior: neutral, and quicker than the uniform one to decide a rate near 0 or 1


def mixture_log_wealth(successes: int, n: int, p: float, *, prior: tuple[float, float] = JEFFREYS) -> float:
    """log M_n(p): the Beta(a, b) mixture martingale against "the pass rate is p" after `successes` of `n` trials,
    M_n(p) = [B(a + s, b + n − s) / B(a, b)] / [p^s (1 − p)^(n − s)] (Robbins 1970). Under the true p it is a
    nonnegative martingale with mean 1, so by Ville's inequality it ever reaches 1/α with chance at most α,
    however often it is looked at: {p : M_n(p) < 1/α} is an anytime-valid 1 − α confidence sequence."""
    if not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}, {n}")
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    a, b = prior
    return (_log_beta(a + successes, b + n - successes) - _log_beta(a, b)
            - successes * math.log(p) - (n - successes) * math.log1p(-p))


def sequential_decision(successes: int, n: int, threshold: float, *, alpha: float = 0.05,
                        prior: tuple[float, float] = JEFFREYS) -> str | None:
    """"above" when the confidence sequence lies entirely above `threshold`, "below" when entirely below, else
    None (keep sampling). The likelihood p^s(1 − p)^(n − s) rises up to s/n and falls after it, so M_n(p) is
    smallest at the end of a side nearest s/n: the sequence clears the threshold exactly when s/n is on one side
    of it and M_n(threshold) ≥ 1/α. Stopping at the first decision is wrong with chance at most α."""
    if n == 0 or successes == threshold * n:
        return None
    if mixture_log_wealth(successes, n, threshold, prior=prior) < math.log(1 / alpha):
        return None
    return "above" if successes > threshold * n else "below"


def stop_points(least: int, most: int, batch: int) -> list[int]:
    """The trial counts after which an adaptive cell looks: least, then every `batch` more, and most."""
    points, n = [], min(max(1, least), most)
    while True:
        points.append(n)
        if n >= most:
            return points
        n = min(n + max(1, batch), most)


@dataclass(frozen=True, slots=True, kw_only=True)
class Stop:
    """Where an adaptive cell stands, from its outcomes in trial-index order. `used`: the trials it counts — the
    look at which it was decided, or `most` (undecided there: inconclusive); None while an outcome it needs is
    unknown, and then `needed` trials must be known before the next look."""

    used: int | None
    decision: str | None  # above | below | None
    needed: int

    @property
    def inconclusive(self) -> bool:
        return self.used is not None and self.decision is None


def adaptive_stop(passes: Sequence[bool | None], *, least: int, most: int, batch: int, threshold: float,
                  alpha: float = 0.05) -> Stop:
    """Walk the looks in order (stop_points) over `passes` (index k: trial k passed, failed, or None: not known),
    stopping at the first look where the confidence sequence decides (sequential_decision). Only the outcomes of
    indices below a look are read at it, so the answer never depends on which trials finished first."""
    for n in stop_points(least, most, batch):
        head = passes[:n]
        if len(head) < n or any(p is None for p in head):
            return Stop(used=None, decision=None, needed=n)
        decision = sequential_decision(sum(1 for p in head if p), n, threshold, alpha=alpha)
        if decision is not None or n >= most:
            return Stop(used=n, decision=decision, needed=n)
    raise AssertionError("stop_points always ends at most")


def trial_needed(k: int, passes: Sequence[bool | None], *, least: int, most: int, batch: int, threshold: float,
                 alpha: float = 0.05) -> bool:
    """Whether trial k of an adaptive cell must run: no look before it decided. Reads only indices below the last
    look before k (None for a look it cannot make yet counts as undecided)."""
    before = [n for n in stop_points(least, most, batch) if n <= k]
    if k >= most:
        return False
    if not before:
        return True
    known = list(passes[:before[-1]])
    stop = adaptive_stop(known, least=least, most=most, batch=batch, threshold=threshold, alpha=alpha)
    return stop.used is None or stop.used > k
