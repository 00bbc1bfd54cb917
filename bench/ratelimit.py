"""Judge calls against a provider's rate limit: N Anthropic judge calls (the real provider code and SDK) from W
threads, as a `-j W` run's grades make them, against the loopback fake API limited to R requests per second (a
sliding one-second window, then 429 with retry-after-ms), in one table:

  - shared cap: this checkout's rate limiter (run/ratelimit.py): one adaptive cap per provider and model, and a
    retry-after pauses every thread;
  - alone: no shared limiter (each call retries by itself, honouring only its own retry-after: the old behaviour).

Reported per side: wall, the rate the fake admitted requests at past its first window and its ratio to the limit,
429s the fake sent, the most requests it had in flight at once, attempts per call and failed grades (a call that
gave up). Goal: the shared cap finishes close to the limit (achieved / limit near 1) with 0 failed grades.

    python bench/ratelimit.py [--calls 500] [--rate 50] [--threads 32] [--rounds 1]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from common import table  # noqa: E402

from skillmake.run import ratelimit  # noqa: E402
from skillmake.run.judges import anthropic_provider  # noqa: E402
from skillmake.run.judges.base import TOOL_NAME, Endpoint, JudgeCallError, JudgeRequest  # noqa: E402
from tests.fakeapi import FAKE_KEY, FakeAPI, Reply  # noqa: E402

MODEL = "claude-sonnet-4-6"


class Unlimited:
    """No shared cap and no shared pause: every call on its own (what the judges did before run/ratelimit.py)."""

    class _Slot:
        def report(self, status: int | None, retry_after: float | None = None) -> None:
            pass

    @contextlib.contextmanager
    def slot(self, provider: str, model: str, *, deadline: float | None = None) -> Iterator[Any]:
        yield self._Slot()


def side(api: FakeAPI, *, calls: int, rate: float, threads: int, shared: bool, latency: float) -> dict[str, Any]:
    api.reset()
    api.default = Reply.tool_use(TOOL_NAME, {"score": 5, "reason": "ok"})
    limits = api.limit(rate=rate)
    ratelimit.reset()
    if not shared:
        ratelimit.install(Unlimited())
    endpoint = Endpoint(provider="anthropic", model=MODEL, base_url=api.url, api_key=FAKE_KEY)
    request = JudgeRequest(judge="rubric", system="Judge it.", user="The output.",
                           schema={"type": "object", "properties": {"score": {"type": "integer"}}})

    def one(_: int) -> tuple[bool, int]:
        try:
            return True, anthropic_provider.complete(request, endpoint).usage.requests or 0
        except JudgeCallError as err:
            return False, err.requests or 0

    anthropic_provider.complete(request, endpoint)  # the SDK imported and the client made before the clock starts
    time.sleep(1.0)  # and the fake's window empty again
    limits = api.limit(rate=rate, latency=latency)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        results = list(pool.map(one, range(calls)))
    wall = time.perf_counter() - t0
    ratelimit.reset()
    ok = sum(1 for passed, _ in results if passed)
    # The rate the fake admitted requests at, past its first window (a sliding window lets `rate` requests in at
    # once at the start): `rate` per second is the most any client can get.
    admitted = [t for t, status, _ in limits.log if status == 200]
    span = admitted[-1] - admitted[0] if len(admitted) > rate else 0.0
    return {"wall": wall, "achieved": (len(admitted) - rate) / span if span > 0 else float("nan"),
            "limited": limits.limited, "peak": limits.peak, "attempts": sum(n for _, n in results) / calls,
            "failed": calls - ok}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the fake takes to answer (default 0.2)")
    opts = parser.parse_args()
    sides = {"shared cap (run/ratelimit.py)": True, "alone (no shared limiter)": False}
    seen: dict[str, list[dict[str, Any]]] = {label: [] for label in sides}
    with FakeAPI() as api:
        for _ in range(opts.rounds):
            for label, shared in sides.items():
                seen[label].append(side(api, calls=opts.calls, rate=opts.rate, threads=opts.threads, shared=shared,
                                        latency=opts.latency))
    rows = []
    ideal = (opts.calls - opts.rate) / opts.rate + opts.latency  # the first window's requests go at once
    for label, runs in seen.items():
        def med(name: str, runs: list[dict[str, Any]] = runs) -> float:
            return statistics.median(r[name] for r in runs)
        rows.append((label, f"{med('wall'):.2f} s", f"{med('achieved'):.1f}/s", f"{med('achieved') / opts.rate:.3f}",
                     f"{med('limited'):.0f}", f"{med('peak'):.0f}", f"{med('attempts'):.2f}", f"{med('failed'):.0f}",
                     f"{med('wall') / ideal:.2f}x"))
    print(f"{opts.calls} Anthropic judge calls from {opts.threads} threads, fake API limited to {opts.rate:g} requests "
          f"per second (ideal {ideal:.1f} s); median of {opts.rounds} round(s); load average "
          f"{os.getloadavg()[0]:.2f}")
    print(table(("side", "wall", "achieved", "achieved / limit", "429s sent", "peak in flight", "attempts per call",
                 "failed grades", "wall vs ideal"), rows))
    shared = seen["shared cap (run/ratelimit.py)"]
    failed = max(r["failed"] for r in shared)
    ratio = statistics.median(r["achieved"] for r in shared) / opts.rate
    print(f"goal: 0 failed grades and close to the limit → {'met' if failed == 0 and ratio >= 0.9 else 'NOT met'} "
          f"({failed} failed, {ratio:.3f} of the limit)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
