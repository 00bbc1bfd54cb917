"""A run's rate limit on a cluster: one cap per provider and model shared by every worker (ratelimit.py's contract).

A job's process is a run of its own, so ratelimit.py's local limiter would give each job the whole cap: 8 workers
would make 8× the allowed requests. Here a slot is a lease of a Dask distributed Semaphore named after the provider,
the model and the cap, held by the scheduler for the whole cluster (a job that dies loses its lease when its client's
heartbeat stops), and a retry-after the provider sends pauses every worker: the moment the pause ends is kept in the
scheduler's metadata and read before each request. On a cluster the cap is fixed at `max_connections` (the local
limiter's adaptive shrinking is per process; the shared pause is what answers push-back here).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from skillmake.run import ratelimit

LEASE_POLL_S = 0.5  # a slot's wait is cut in pieces this long, so a pause set meanwhile is seen


class ClusterLimiter:
    """ratelimit.Limiter over the scheduler of `address`: a Semaphore per (provider, model), a shared pause."""

    def __init__(self, address: str, *, max_connections: int) -> None:
        self.address = address
        self.max_connections = max(1, int(max_connections))
        self._client: Any = None
        self._semaphores: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def _connect(self) -> Any:
        with self._lock:
            if self._client is None:
                from distributed import Client

                self._client = Client(self.address, timeout=10, set_as_default=False)
            return self._client

    def _semaphore(self, provider: str, model: str) -> Any:
        client = self._connect()
        with self._lock:
            found = self._semaphores.get((provider, model))
            if found is None:
                from distributed import Semaphore

                found = Semaphore(max_leases=self.max_connections,
                                  name=f"skillmake-rate-{provider}-{model}-{self.max_connections}",
                                  scheduler_rpc=client.scheduler, loop=client.loop)
                self._semaphores[(provider, model)] = found
            return found

    def _pause_key(self, provider: str, model: str) -> list[str]:
        return ["skillmake-pause", provider, model]

    def _paused_until(self, provider: str, model: str) -> float:
        try:
            return float(self._connect().get_metadata(self._pause_key(provider, model), default=0.0) or 0.0)
        except (TypeError, ValueError):
            return 0.0

    @contextlib.contextmanager
    def slot(self, provider: str, model: str, *, deadline: float | None = None) -> Iterator[ratelimit.Slot]:
        semaphore = self._semaphore(provider, model)
        while True:
            pause = self._paused_until(provider, model) - time.time()  # wall clock: shared by every machine
            left = None if deadline is None else deadline - time.monotonic()
            if pause > 0:
                if left is not None and pause >= left:
                    raise ratelimit.NoSlot(f"the provider asked every worker to wait {pause:.1f}s more, past the "
                                           "deadline")
                time.sleep(min(pause, LEASE_POLL_S))
                continue
            if left is not None and left <= 0:
                raise ratelimit.NoSlot(f"no request slot before the deadline (cluster-wide cap "
                                       f"{self.max_connections})")
            if not semaphore.acquire(timeout=LEASE_POLL_S if left is None else min(left, LEASE_POLL_S)):
                continue
            if self._paused_until(provider, model) > time.time():  # a pause set while this waited for the lease
                semaphore.release()
                continue
            break
        handle = ratelimit.SlotReport()
        try:
            yield handle
        finally:
            try:  # the pause is in place before the lease goes: the next holder sees it
                if handle.status in ratelimit.PUSH_BACK and handle.retry_after:
                    until = time.time() + min(handle.retry_after, ratelimit.MAX_PAUSE_S)
                    if until > self._paused_until(provider, model):
                        self._connect().set_metadata(self._pause_key(provider, model), until)
            finally:
                semaphore.release()


def install(limits: dict[str, Any]) -> None:
    """Make the cluster-wide cap this process's limiter (a job's process, before its action runs)."""
    ratelimit.install(ClusterLimiter(str(limits["address"]), max_connections=int(limits["max_connections"])))
