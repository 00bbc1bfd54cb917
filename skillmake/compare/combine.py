"""The combining rules: two ordered verdicts make a pair's verdict, a case's pairs make its winner.

Each pair (trial k of A against trial k of B) is judged twice, A shown first and then B shown first, and each
verdict is mapped back from positions to sides before combining:

- both verdicts name the same side → that side wins the pair;
- they contradict each other (each order prefers whatever it showed in one position), or either is a tie → tie.

So a judge that always prefers the output it sees first (or second) gives a tie on every pair: the swap cancels
position bias instead of letting it pick a winner. A case's winner is the side that won a strict majority of the
case's judged pairs; anything else (an even split, mostly ties) is a tie.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

A, B, TIE = "A", "B", "TIE"  # skill-creator comparator's words for the two outputs and a draw
SIDES = (A, B)


def from_position(winner: str, shown: Sequence[str]) -> str:
    """A verdict given in positions ("1", "2", "tie") as a side: `shown` names the side shown first and second."""
    if winner == "tie":
        return TIE
    if winner not in ("1", "2"):
        raise ValueError(f"not a positional verdict: {winner!r}")
    return shown[int(winner) - 1]


def pair_winner(first: str, second: str) -> str:
    """The pair's verdict from its two orders' verdicts (sides): agreement wins, anything else is a tie."""
    for value in (first, second):
        if value not in (A, B, TIE):
            raise ValueError(f"not a side or a tie: {value!r}")
    return first if first == second else TIE


def case_winner(pairs: Iterable[str]) -> str | None:
    """The side that won more than half of the judged pairs, else a tie; None when no pair was judged."""
    judged = list(pairs)
    if not judged:
        return None
    for side in SIDES:
        if judged.count(side) * 2 > len(judged):
            return side
    return TIE
