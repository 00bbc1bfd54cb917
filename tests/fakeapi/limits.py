"""The fake API's provider limits: N model requests per second (then 429 with retry-after), and overload past M
requests in flight (529); it counts what it saw, the most requests it had in flight at once among them.

    api.limit(rate=50)                      # a sliding one-second window of 50 requests, then 429 + retry-after
    api.limit(rate=5, retry_after="date")   # the wait as an HTTP date (RFC 9110), or "seconds" (whole, rounded up)
    api.limit(overload=4)                   # a fifth request in flight at once is answered 529 overloaded_error
    api.limit(rate=50, latency=0.3)         # each admitted request takes 0.3 s to answer (a model's think time)
    api.limits.peak, api.limits.limited, api.limits.overloaded, api.limits.admitted
"""

from __future__ import annotations

import collections
import email.utils
import math
import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    message: str
    headers: dict[str, str]


class Limits:
    """Applied to requests to the model endpoints, before any scripted reply is chosen."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.rate: float | None = None
        self.window = 1.0
        self.retry_after = "ms"  # "ms": retry-after-ms and retry-after (seconds, fractional); "seconds"; "date"
        self.overload: int | None = None
        self.latency = 0.0
        self._times: collections.deque[float] = collections.deque()
        self.in_flight = 0
        self.peak = 0
        self.admitted = 0
        self.limited = 0
        self.overloaded = 0
        self.log: list[tuple[float, int, float]] = []  # (time.monotonic() at arrival, status given, wait asked)

    def set(self, *, rate: float | None, overload: int | None, retry_after: str, window: float,
            latency: float) -> None:
        if retry_after not in ("ms", "seconds", "date"):
            raise ValueError(f"retry_after must be ms, seconds or date, not {retry_after!r}")
        with self._lock:
            self.rate, self.overload, self.retry_after, self.window = rate, overload, retry_after, window
            self.latency = latency
            self._times.clear()
            self.in_flight = self.peak = self.admitted = self.limited = self.overloaded = 0
            self.log.clear()

    def enter(self) -> Refusal | None:
        """Count a request in flight; the refusal it gets, if the limits refuse it (it still counts until `leave`).
        An admitted request is held `latency` seconds first."""
        refusal = self._admit()
        if refusal is None and self.latency > 0:
            time.sleep(self.latency)
        return refusal

    def _admit(self) -> Refusal | None:
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            now = time.monotonic()
            if self.overload is not None and self.in_flight > self.overload:
                self.overloaded += 1
                self.log.append((now, 529, 0.0))
                return Refusal(529, f"fakeapi: overloaded ({self.in_flight} requests in flight, at most "
                                    f"{self.overload})", {})
            if self.rate is not None:
                while self._times and self._times[0] <= now - self.window:
                    self._times.popleft()
                if len(self._times) >= self.rate:
                    self.limited += 1
                    wait = self._times[0] + self.window - now
                    self.log.append((now, 429, wait))
                    return Refusal(429, f"fakeapi: rate limited ({self.rate:g} requests per {self.window:g}s)",
                                   self._wait_headers(wait))
                self._times.append(now)
            self.admitted += 1
            self.log.append((now, 200, 0.0))
            return None

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _wait_headers(self, wait: float) -> dict[str, str]:
        if self.retry_after == "date":
            # An HTTP date has whole seconds: the next whole second after the window frees a place.
            return {"retry-after": email.utils.formatdate(math.ceil(time.time() + wait), usegmt=True)}
        if self.retry_after == "seconds":
            return {"retry-after": str(max(1, math.ceil(wait)))}
        return {"retry-after-ms": str(max(1, math.ceil(wait * 1000))), "retry-after": f"{wait:.3f}"}
