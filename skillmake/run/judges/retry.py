"""Retrying a judge call: bounded attempts and a bounded total time, honouring retry-after."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from skillmake.run.judges.base import JudgeCallError, TransientError

T = TypeVar("T")

# The SDKs' own retries are turned off (max_retries=0): they honour any retry-after, however long, and
# know nothing of a total budget. These bounds keep one grade from hanging a build.
MAX_ATTEMPTS = 5
TOTAL_BUDGET_S = 300.0  # every attempt and every wait of one call, together
REQUEST_TIMEOUT_S = 120.0  # one HTTP attempt (a hung connection costs at most this)
BACKOFF_BASE_S = 0.5  # 0.5, 1, 2, 4 … with jitter, when the server gives no retry-after
BACKOFF_MAX_S = 16.0


def with_retries(attempt: Callable[[float], T], *, sleep: Callable[[float], None] | None = None,
                 clock: Callable[[], float] = time.monotonic, key: tuple[str, str] | None = None) -> tuple[T, int]:
    """Run `attempt(timeout)` until it succeeds; return its value and how many attempts were made.

    `attempt` raises TransientError to ask for another try, JudgeCallError to stop. A wait the budget
    cannot afford ends the call at once rather than sleeping into a certain failure. With `key` (provider, model),
    each attempt holds a slot of the run's rate limiter (ratelimit.py) and tells it what the server answered: a 429 or
    529 with a retry-after pauses every caller of that model, not only this one.
    """
    start = clock()
    for n in range(1, MAX_ATTEMPTS + 1):
        remaining = TOTAL_BUDGET_S - (clock() - start)
        try:
            if key is None:
                return attempt(max(0.1, min(REQUEST_TIMEOUT_S, remaining))), n
            return _limited(attempt, key, deadline=start + TOTAL_BUDGET_S, clock=clock, made=n - 1), n
        except TransientError as err:
            if n == MAX_ATTEMPTS:
                raise JudgeCallError(f"{err.message} (gave up after {n} attempts)", requests=n) from err
            wait = err.retry_after if err.retry_after is not None and err.retry_after >= 0 else _backoff(n)
            remaining = TOTAL_BUDGET_S - (clock() - start)
            if wait >= remaining:
                raise JudgeCallError(f"{err.message} (gave up after {n} attempts: waiting {wait:.1f}s more would "
                                     f"exceed the {TOTAL_BUDGET_S:.0f}s retry budget; run the build again later)",
                                     requests=n) from err
            (sleep or _sleep)(wait)
        except JudgeCallError as err:
            if err.requests is None:
                err.requests = n
            raise
    raise AssertionError("unreachable")  # the loop returns or raises on its last attempt


def _limited(attempt: Callable[[float], T], key: tuple[str, str], *, deadline: float,
             clock: Callable[[], float], made: int) -> T:
    """One attempt inside a slot of the rate limiter, its answer reported. The wait for a slot is the budget's."""
    from skillmake.run import ratelimit

    try:
        with ratelimit.slot(*key, deadline=time.monotonic() + max(0.0, deadline - clock())) as slot:
            remaining = deadline - clock()
            try:
                value = attempt(max(0.1, min(REQUEST_TIMEOUT_S, remaining)))
            except TransientError as err:
                slot.report(err.status, err.retry_after)
                raise
            slot.report(200)
            return value
    except ratelimit.NoSlot as err:
        raise JudgeCallError(f"gave up waiting for a request slot within the {TOTAL_BUDGET_S:.0f}s retry budget "
                             f"({err}); run the build again later, or lower -j", requests=made) from err


def _sleep(seconds: float) -> None:
    time.sleep(seconds)  # a module-level hook, so tests can record the waits instead of sleeping


def _backoff(n: int) -> float:
    return min(BACKOFF_BASE_S * 2 ** (n - 1), BACKOFF_MAX_S) * (0.75 + 0.25 * random.random())
