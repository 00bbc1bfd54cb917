"""Adaptive trials, simulated: for each true pass rate p, draw Bernoulli(p) trials one batch at a time and stop at the
first batch after which the anytime-valid confidence sequence (stats.sequential_decision) lies above or below the
threshold; at `max` trials undecided, the case is inconclusive. Reports, over N simulated cases per p, the mean
trials used, the share decided, and the rate of wrong decisions (above when p < threshold, below when p >
threshold, either when p equals it), which must stay at most alpha.

    python bench/adaptive.py [--cases 10000] [--threshold 0.8] [--min 3] [--max 30] [--batch N] [--alpha 0.05]

The batch defaults to min, as in the engine (`trials: {min, max, decide}` without `batch`). Each row sets the
adaptive side (mean trials used) beside the fixed-count plan's (max trials, always) and their ratio.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from skillmake.core.stats import sequential_decision  # noqa: E402

RATES = (0.5, 0.7, 0.8, 0.9, 0.99)


def simulate(p: float, *, cases: int, threshold: float, least: int, most: int, batch: int, alpha: float,
             seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    used = decided = wrong = 0
    for _ in range(cases):
        n = s = 0
        verdict = None
        while n < most:
            step = max(least - n, batch) if n < least else batch
            step = min(step, most - n)
            s += sum(rng.random() < p for _ in range(step))
            n += step
            verdict = sequential_decision(s, n, threshold, alpha=alpha)
            if verdict is not None:
                break
        used += n
        if verdict is not None:
            decided += 1
            truth = "above" if p > threshold else "below" if p < threshold else None
            wrong += verdict != truth
    return {"p": p, "mean_trials": used / cases, "decided": decided / cases, "wrong": wrong / cases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--threshold", type=float, default=0.8)
    parser.add_argument("--min", dest="least", type=int, default=3)
    parser.add_argument("--max", dest="most", type=int, default=30)
    parser.add_argument("--batch", type=int, default=None, help="trials between looks (default: min)")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=20241101)
    opts = parser.parse_args()
    opts.batch = opts.batch or opts.least
    print(f"threshold {opts.threshold}, trials {opts.least}..{opts.most} in batches of {opts.batch}, "
          f"alpha {opts.alpha}, {opts.cases:,} simulated cases per p")
    print(f"{'p':>5}  {'mean trials':>11}  {'fixed':>5}  {'ratio':>5}  {'saved':>6}  {'decided':>7}  "
          f"{'inconclusive':>12}  {'wrong':>6}")
    for i, p in enumerate(RATES):
        row = simulate(p, cases=opts.cases, threshold=opts.threshold, least=opts.least, most=opts.most,
                       batch=opts.batch, alpha=opts.alpha, seed=opts.seed + i)
        saved = 1 - row["mean_trials"] / opts.most
        print(f"{p:>5}  {row['mean_trials']:>11.2f}  {opts.most:>5}  {row['mean_trials'] / opts.most:>5.2f}  "
              f"{saved:>6.1%}  {row['decided']:>7.1%}  {1 - row['decided']:>12.1%}  {row['wrong']:>6.2%}")


if __name__ == "__main__":
    main()
