"""A run's heap and Python's cyclic garbage collector.

What a run builds before its first task (the specs, their plans, doit's tasks and their dependency graph: millions
of objects at 30,000 trials) lives until the run ends. Every full collection walked all of it, holding the GIL while
it did: planning ran seven of them at 30,000 trials (0.35 s), and during the trials every thread stalled behind each
one. A first run of 30,000 instant trials spent 1.8-1.9 s in full collections, 0.2 s with this.

So a run makes full collections rarer from its start (one after 100 collections of the middle generation, not 10),
and once its tasks start, the objects alive then are left out of collections (gc.freeze: Python's own answer for
long-lived objects). Garbage made during the run is collected as before; what was alive at the start and becomes a
cycle of garbage later waits for the run's end (release), when everything is handed back to the collector.
"""

from __future__ import annotations

import gc

FULL_EVERY = 100  # collections of the middle generation between two full ones (Python's default: 10)
_saved: list[tuple[int, int, int]] = []  # the thresholds before start(), until release()
_frozen: list[bool] = []


def start() -> None:
    """A run begins planning: full collections come after 100 younger ones (until release)."""
    if not _saved:
        _saved.append(gc.get_threshold())
        first, second, _ = _saved[0]
        gc.set_threshold(first, second, FULL_EVERY)


def hold() -> None:
    """The tasks start: what is alive now is left out of collections (until release)."""
    start()
    if not _frozen:
        _frozen.append(True)
        gc.freeze()


def release() -> None:
    """The tasks are done: the collector's thresholds as they were, and the frozen objects collected again."""
    if _frozen:
        _frozen.clear()
        gc.unfreeze()
    if _saved:
        gc.set_threshold(*_saved.pop())
