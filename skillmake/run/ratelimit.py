"""How many model requests a run has in flight: one cap per provider and model, shared by every thread of the process,
adaptive (AIMD) on push-back (429, 529), and a pause for everyone when the provider says how long to wait.

The contract a backend keeps (the local one below; a distributed one, e.g. a cluster-wide semaphore, is installed
with `install` and must keep it too):

    with limiter.slot(provider, model, deadline=...) as slot:   # blocks until one more request may start
        status, headers = <exactly one HTTP attempt>
        slot.report(status, retry_after(headers))                # what the provider answered

- `slot` returns only when fewer than the cap's requests to (provider, model) are in flight and no pause the provider
  asked for is running; past `deadline` (time.monotonic) it raises NoSlot instead (the caller's budget is spent).
- `report(status, retry_after)`: `status` is the HTTP status of the attempt, or None when there was no answer
  (connection failure, timeout): neutral. 429 and 529 are push-back: every caller waits `retry_after` seconds (when
  given) before its next request to that key, and an adaptive cap shrinks (×0.9 on 429, ×0.5 on 529); a clean
  window (as many successes as the cap, since the last push-back) grows it by one, up to the configured maximum. A
  slot left without a report is neutral.
- The slot is released when the block ends, whatever happens inside it.
- `deadline` is this process's time.monotonic(); a backend that waits elsewhere turns it into seconds left.

Inspect AI's adaptive connections are the model: a per-model cap that scales up while the provider keeps up and backs
off on rate-limit retries. The local backend holds its state in this process: under `-P process` each worker has its
own (docs/costs.md says so); a cap shared across processes or machines is a backend's job.
"""

from __future__ import annotations

import contextlib
import email.utils
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

PUSH_BACK = frozenset({429, 529})  # rate limited, overloaded
DEFAULT_MAX_CONNECTIONS = 32  # per provider and model; `[limits] max_connections`, --max-connections
MIN_CONNECTIONS = 1
# The cap's factor on push-back, once per window (answers to requests sent before the last decrease do not count):
# gentle on a rate limit, whose retry-after pause already holds the rate; sharp on an overload, which is about load.
DECREASE = {429: 0.9, 529: 0.5}
MAX_PAUSE_S = 600.0  # a retry-after past this is a broken header, not a plan: the callers' own budgets decide


class NoSlot(Exception):
    """No slot could be had before the caller's deadline (a long pause, or every slot busy until then)."""


class Slot(Protocol):
    def report(self, status: int | None, retry_after: float | None = None) -> None: ...


class Limiter(Protocol):
    def slot(self, provider: str, model: str, *,
             deadline: float | None = None) -> contextlib.AbstractContextManager[Slot]: ...


@dataclass(slots=True)
class GateStats:
    """What one (provider, model) cap saw: for the bench and for tests."""

    cap: float
    requests: int = 0
    push_backs: int = 0
    peak_in_flight: int = 0
    waited_s: float = 0.0  # summed over callers: time spent waiting for a slot or a pause


class _Gate:
    """The cap of one (provider, model): in-flight count, the adaptive cap, a pause until a moment."""

    def __init__(self, maximum: int, *, adaptive: bool, clock: Callable[[], float]) -> None:
        self.maximum = maximum
        self.adaptive = adaptive
        self.clock = clock
        self.cond = threading.Condition()
        self.in_flight = 0
        self.paused_until = 0.0
        self.epoch = 0  # bumped by each decrease: a push-back from an older slot does not shrink the cap again
        self.clean = 0  # successes since the cap last changed
        self.stats = GateStats(cap=float(maximum))

    def acquire(self, deadline: float | None) -> int:
        started = self.clock()
        with self.cond:
            while True:
                now = self.clock()
                if now >= self.paused_until and self.in_flight < int(self.stats.cap):
                    self.in_flight += 1
                    self.stats.requests += 1
                    self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.in_flight)
                    self.stats.waited_s += now - started
                    return self.epoch
                # A pause that outlasts the caller's deadline ends the wait now, rather than sleeping into a certain
                # failure (the judges' retry loop does the same with a retry-after it cannot afford).
                if deadline is not None and (now >= deadline or self.paused_until >= deadline):
                    self.stats.waited_s += now - started
                    raise NoSlot(f"no request slot before the deadline ({self.in_flight} in flight, cap "
                                 f"{int(self.stats.cap)}, paused {max(0.0, self.paused_until - now):.1f}s more)")
                wake = [self.paused_until - now] if now < self.paused_until else []
                if deadline is not None:
                    wake.append(deadline - now)
                self.cond.wait(timeout=min(wake) if wake else None)

    def release(self, epoch: int, status: int | None, retry_after: float | None) -> None:
        with self.cond:
            self.in_flight -= 1
            now = self.clock()
            if status in PUSH_BACK:
                self.stats.push_backs += 1
                if retry_after is not None and retry_after > 0:
                    self.paused_until = max(self.paused_until, now + min(retry_after, MAX_PAUSE_S))
                if self.adaptive and epoch == self.epoch:
                    self.stats.cap = max(float(MIN_CONNECTIONS), self.stats.cap * DECREASE[status])
                    self.epoch += 1
                    self.clean = 0
            elif status is not None and status < 400 and epoch == self.epoch and self.adaptive:
                self.clean += 1
                if self.clean >= int(self.stats.cap) and self.stats.cap < self.maximum:
                    self.stats.cap = min(float(self.maximum), float(int(self.stats.cap) + 1))
                    self.clean = 0
            self.cond.notify_all()


class SlotReport:
    """A Slot as the limiters here make it: what one attempt reports back (its HTTP status, None for no answer, and
    the retry-after it got), read by the limiter once the attempt is over."""

    __slots__ = ("retry_after", "status")

    def __init__(self) -> None:
        self.status: int | None = None
        self.retry_after: float | None = None

    def report(self, status: int | None, retry_after: float | None = None) -> None:
        self.status, self.retry_after = status, retry_after


class LocalLimiter:
    """The caps of this process, one per (provider, model), made on first use."""

    def __init__(self, *, max_connections: int = DEFAULT_MAX_CONNECTIONS, adaptive: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, not {max_connections}")
        self.max_connections = max_connections
        self.adaptive = adaptive
        self.clock = clock
        self._gates: dict[tuple[str, str], _Gate] = {}
        self._lock = threading.Lock()

    def _gate(self, provider: str, model: str) -> _Gate:
        key = (provider, model)
        gate = self._gates.get(key)
        if gate is None:
            with self._lock:
                gate = self._gates.setdefault(key, _Gate(self.max_connections, adaptive=self.adaptive,
                                                         clock=self.clock))
        return gate

    @contextlib.contextmanager
    def slot(self, provider: str, model: str, *, deadline: float | None = None) -> Iterator[Slot]:
        gate = self._gate(provider, model)
        epoch = gate.acquire(deadline)
        handle = SlotReport()
        try:
            yield handle
        finally:
            gate.release(epoch, handle.status, handle.retry_after)

    def stats(self) -> dict[tuple[str, str], GateStats]:
        with self._lock:
            return {key: gate.stats for key, gate in self._gates.items()}


_current: Limiter | None = None
_settings: dict[str, Any] = {"max_connections": DEFAULT_MAX_CONNECTIONS, "adaptive": True}
_current_lock = threading.Lock()


def current() -> Limiter:
    """The limiter of this process: the installed one, else a local one with the configured settings."""
    global _current
    limiter = _current
    if limiter is None:
        with _current_lock:
            if _current is None:
                _current = LocalLimiter(**_settings)
            limiter = _current
    return limiter


def slot(provider: str, model: str, *, deadline: float | None = None) -> contextlib.AbstractContextManager[Slot]:
    """A slot of the current limiter (see the module's docstring)."""
    return current().slot(provider, model, deadline=deadline)


def configure(*, max_connections: int | None = None, adaptive: bool | None = None) -> None:
    """Set the local limiter's settings (None: the default) for this process; a new local limiter takes them (an
    installed backend is left alone). Called when a project opens, so every run and worker process follows its
    configuration and command line."""
    global _current
    wanted = {"max_connections": max_connections or DEFAULT_MAX_CONNECTIONS,
              "adaptive": True if adaptive is None else adaptive}
    with _current_lock:
        if wanted == _settings and _current is not None:
            return
        _settings.update(wanted)
        if _current is None or isinstance(_current, LocalLimiter):
            _current = None  # made again on first use, with these settings


def reset() -> None:
    """Back to a fresh local limiter with the default settings (a test's isolation; a new run's start)."""
    global _current
    with _current_lock:
        _settings.update(max_connections=DEFAULT_MAX_CONNECTIONS, adaptive=True)
        _current = None


def install(limiter: Limiter | None) -> None:
    """Use `limiter` for every request of this process (a distributed backend); None: back to a local one."""
    global _current
    with _current_lock:
        _current = limiter


def _after_fork_in_child() -> None:
    """A worker forked from the run (`-P process`) starts with caps of its own: the parent's locks may have been held
    by a thread that does not exist in the child."""
    global _current, _current_lock
    _current_lock = threading.Lock()
    if isinstance(_current, LocalLimiter):
        _current = None


os.register_at_fork(after_in_child=_after_fork_in_child)


def retry_after(headers: Mapping[str, str] | Any, *, now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asked us to wait: retry-after-ms, else retry-after in seconds or as an HTTP date; None
    when it says nothing readable. A past date or a negative number is 0."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
        if name == "retry-after":
            try:
                when = email.utils.parsedate_to_datetime(str(value))
            except (TypeError, ValueError, IndexError):
                continue
            if when.tzinfo is None:  # RFC 9110 dates are GMT
                return None
            return max(0.0, when.timestamp() - now())
    return None
