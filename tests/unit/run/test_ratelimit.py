"""The run's rate limiter (run/ratelimit.py) on its own: the cap holds under many threads, push-back shrinks it once
per window and a clean window grows it back, a retry-after pauses every caller, a deadline ends a wait the pause
would outlast, and retry-after is read in milliseconds, seconds and as an HTTP date."""

from __future__ import annotations

import contextlib
import email.utils
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from skillmake.run import ratelimit
from skillmake.run.ratelimit import LocalLimiter, NoSlot


def test_never_more_in_flight_than_the_cap_under_many_threads() -> None:
    limiter = LocalLimiter(max_connections=3)
    lock = threading.Lock()
    now = peak = 0

    def one() -> None:
        nonlocal now, peak
        with limiter.slot("anthropic", "m") as slot:
            with lock:
                now += 1
                peak = max(peak, now)
            time.sleep(0.01)
            with lock:
                now -= 1
            slot.report(200)

    threads = [threading.Thread(target=one) for _ in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stats = limiter.stats()[("anthropic", "m")]
    assert peak == 3 and stats.peak_in_flight == 3 and stats.requests == 24


def test_each_provider_and_model_has_its_own_cap() -> None:
    limiter = LocalLimiter(max_connections=1)
    with limiter.slot("anthropic", "a"), limiter.slot("anthropic", "b"), limiter.slot("openai", "a"):
        pass  # three different keys: none waits for another
    with (limiter.slot("anthropic", "a"), pytest.raises(NoSlot),
          limiter.slot("anthropic", "a", deadline=time.monotonic() + 0.05)):
        pass


def test_push_back_shrinks_the_cap_once_per_window_and_a_clean_window_grows_it() -> None:
    limiter = LocalLimiter(max_connections=10)
    stats = limiter._gate("anthropic", "m").stats
    with contextlib.ExitStack() as stack:  # four requests in flight when the provider pushes back on all of them
        slots = [stack.enter_context(limiter.slot("anthropic", "m")) for _ in range(4)]
        for slot in slots:
            slot.report(429)
    assert stats.cap == 10 * 0.9 and stats.push_backs == 4  # once, not four times; gently on a rate limit
    with limiter.slot("anthropic", "m") as slot:
        slot.report(529)  # started after the decrease: a new window's push-back; an overload halves
    assert stats.cap == pytest.approx(4.5)
    for _ in range(int(stats.cap) - 1):
        with limiter.slot("anthropic", "m") as slot:
            slot.report(200)
    assert stats.cap == pytest.approx(4.5)  # one short of a clean window
    with limiter.slot("anthropic", "m") as slot:
        slot.report(200)
    assert stats.cap == 5


def test_the_cap_never_falls_below_one_nor_grows_past_the_maximum() -> None:
    limiter = LocalLimiter(max_connections=2)
    stats = limiter._gate("openai", "m").stats
    for _ in range(10):
        with limiter.slot("openai", "m") as slot:
            slot.report(429)
    assert stats.cap == ratelimit.MIN_CONNECTIONS
    for _ in range(20):
        with limiter.slot("openai", "m") as slot:
            slot.report(200)
    assert stats.cap == 2


def test_a_fixed_cap_is_not_adaptive_but_still_pauses() -> None:
    limiter = LocalLimiter(max_connections=4, adaptive=False)
    stats = limiter._gate("anthropic", "m").stats
    with limiter.slot("anthropic", "m") as slot:
        slot.report(429, 0.2)
    assert stats.cap == 4
    t0 = time.monotonic()
    with limiter.slot("anthropic", "m"):
        assert time.monotonic() - t0 >= 0.19


def test_a_retry_after_pauses_every_caller_of_that_model_only() -> None:
    limiter = LocalLimiter(max_connections=8)
    with limiter.slot("anthropic", "m") as slot:
        slot.report(429, 1.5)  # long enough that a loaded machine's thread starts stay far inside it
    started: list[float] = []
    t0 = time.monotonic()

    def later() -> None:
        with limiter.slot("anthropic", "m"):
            started.append(time.monotonic() - t0)

    threads = [threading.Thread(target=later) for _ in range(3)]
    for t in threads:
        t.start()
    with limiter.slot("anthropic", "other"):  # another model is not paused
        assert time.monotonic() - t0 < 1.0
    for t in threads:
        t.join()
    assert len(started) == 3 and min(started) >= 1.49


def test_a_neutral_or_unreported_slot_changes_nothing() -> None:
    limiter = LocalLimiter(max_connections=5)
    stats = limiter._gate("anthropic", "m").stats
    with limiter.slot("anthropic", "m") as slot:
        slot.report(None)  # no answer (a connection failure)
    with limiter.slot("anthropic", "m"):
        pass
    with pytest.raises(RuntimeError), limiter.slot("anthropic", "m"):
        raise RuntimeError("the request failed in the caller")
    assert (stats.cap, stats.push_backs, stats.requests) == (5, 0, 3)
    assert limiter._gate("anthropic", "m").in_flight == 0  # released whatever happened inside


def test_a_pause_past_the_deadline_ends_the_wait_at_once() -> None:
    limiter = LocalLimiter(max_connections=2)
    with limiter.slot("anthropic", "m") as slot:
        slot.report(429, 30.0)
    t0 = time.monotonic()
    with pytest.raises(NoSlot, match="paused"), limiter.slot("anthropic", "m", deadline=t0 + 5):
        pass
    assert time.monotonic() - t0 < 1.0


def test_configure_reset_and_install_choose_the_process_limiter() -> None:
    ratelimit.configure(max_connections=7, adaptive=False)
    local = ratelimit.current()
    assert isinstance(local, LocalLimiter) and (local.max_connections, local.adaptive) == (7, False)
    ratelimit.configure(max_connections=7, adaptive=False)
    assert ratelimit.current() is local  # the same settings keep the same caps (and their learned state)

    seen: list[tuple[str, str]] = []

    class Cluster:
        @contextlib.contextmanager
        def slot(self, provider: str, model: str, *, deadline: float | None = None) -> Iterator[Any]:
            seen.append((provider, model))
            yield local.slot(provider, model).__enter__()

    ratelimit.install(Cluster())
    ratelimit.configure(max_connections=3)  # an installed backend is left alone
    with ratelimit.slot("openai", "gpt"):
        pass
    assert seen == [("openai", "gpt")]
    ratelimit.reset()
    fresh = ratelimit.current()
    assert isinstance(fresh, LocalLimiter) and fresh.max_connections == ratelimit.DEFAULT_MAX_CONNECTIONS


def test_a_forked_worker_starts_with_caps_of_its_own() -> None:
    parent = ratelimit.current()
    gate = parent._gate("anthropic", "m")  # type: ignore[attr-defined]
    with gate.cond:  # held by this process when it forks, as a busy thread of a run may hold it
        pid = os.fork()
        if pid == 0:  # the child: a fresh limiter, whose slots work (the inherited lock would never be released)
            signal.alarm(5)  # a child stuck on that lock ends here, failing the test instead of hanging it
            ok = ratelimit.current() is not parent
            with ratelimit.slot("anthropic", "m", deadline=time.monotonic() + 2):
                pass
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        LocalLimiter(max_connections=0)


NOW = 1_800_000_000.0


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after-ms": "1500"}, 1.5), ({"retry-after": "2"}, 2.0), ({"retry-after": "0.25"}, 0.25),
    ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # the finer one first
    ({"retry-after": "-3"}, 0.0),
    ({"retry-after": email.utils.formatdate(NOW + 7, usegmt=True)}, 7.0),  # an HTTP date, 7 s from now
    ({"retry-after": email.utils.formatdate(NOW - 60, usegmt=True)}, 0.0),  # a date already past
    ({"retry-after": "Wed, 21 Oct 2026 07:28:00"}, None),  # no zone: not an HTTP date
    ({"retry-after-ms": "soon", "retry-after": "4"}, 4.0), ({"retry-after": "tomorrow"}, None), ({}, None),
    (None, None),
])
def test_retry_after_reads_milliseconds_seconds_and_http_dates(headers: dict[str, str] | None,
                                                               seconds: float | None) -> None:
    assert ratelimit.retry_after(headers, now=lambda: NOW) == seconds
