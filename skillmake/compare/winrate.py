"""A's win rate over the judged pairs, ties counted as half a win, with a Wilson score interval.

The interval is stats.wilson, the one every pass rate in a report uses.
"""

from __future__ import annotations

from dataclasses import dataclass

from skillmake.core.stats import Z95, wilson

__all__ = ["Z95", "WinRate", "wilson", "win_rate"]


@dataclass(frozen=True, slots=True, kw_only=True)
class WinRate:
    a_wins: int
    b_wins: int
    ties: int
    rate: float | None  # (a_wins + ties / 2) / pairs; None with no judged pair
    low: float | None  # the 95% Wilson interval around `rate`
    high: float | None

    @property
    def pairs(self) -> int:
        return self.a_wins + self.b_wins + self.ties


def win_rate(a_wins: int, b_wins: int, ties: int, *, z: float = Z95) -> WinRate:
    """A's win rate = (A wins + ties / 2) / (A wins + B wins + ties), and its Wilson score interval.

    Ties count as half a win for each side, so a judge that cannot tell the two apart gives 0.5. The interval
    treats the score as a proportion over the pairs (Wilson 1927); trials of one case share a prompt, so with
    several trials per case it is somewhat narrower than the truth."""
    for name, count in (("a_wins", a_wins), ("b_wins", b_wins), ("ties", ties)):
        if count < 0:
            raise ValueError(f"{name} must not be negative, got {count}")
    n = a_wins + b_wins + ties
    if n == 0:
        return WinRate(a_wins=0, b_wins=0, ties=0, rate=None, low=None, high=None)
    rate = (a_wins + ties / 2) / n
    low, high = wilson(rate, n, z=z)
    return WinRate(a_wins=a_wins, b_wins=b_wins, ties=ties, rate=rate, low=low, high=high)

