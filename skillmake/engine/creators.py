"""The task creators doit loads, one per task kind: the same functions for plain `doit` (a user's dodo.py
imports them through skillmake.dodo) and for the `skillmake` front end's built-in loader (main.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

from skillmake.engine.config import doit_config
from skillmake.engine.tasks import (
    current_root,
    grade_tasks,
    report_tasks,
    thresholds_tasks,
    trial_tasks,
    trigger_tasks,
    validate_tasks,
)
from skillmake.run import process

__all__ = ["task_batch", "task_grade", "task_report", "task_thresholds", "task_trial", "task_trigger",
           "task_validate"]


def one_malloc_arena() -> bool:
    """Have glibc's malloc keep one arena (M_ARENA_MAX = 1, as MALLOC_ARENA_MAX=1 would) unless the user set one.

    By default each thread that allocates gets an arena of its own, up to 8 per core: doit's worker threads, the
    views' checkout threads and the reporter's then each hold freed memory the others cannot reuse. The threads
    allocate under the GIL anyway, so one arena costs no waiting; a first run of 6,000 trials peaked at 90 MiB with
    it, 102 without (bench/memory.py). Called before any worker thread starts; False where there is no glibc."""
    if os.environ.get("MALLOC_ARENA_MAX") or not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    return bool(mallopt(_M_ARENA_MAX, 1))


_M_ARENA_MAX = -8  # glibc's malloc.h


one_malloc_arena()  # on import: the skillmake front end and a dodo.py both import this module before doit runs


def namespace() -> dict[str, Any]:
    """What doit's ModuleTaskLoader reads from a dodo.py: DOIT_CONFIG and the task creators. The run's process
    becomes the subreaper of its trials first (process.py), as importing skillmake.dodo makes it."""
    process.prepare_run()
    return {"DOIT_CONFIG": doit_config(current_root()), **{name: globals()[name] for name in __all__}}


def task_validate() -> Iterator[dict[str, Any]]:
    """check every spec (file:line:col errors with the fix)"""
    yield from validate_tasks(current_root())


def task_trial() -> Iterator[dict[str, Any]]:
    """run stale trials in isolated workspaces"""
    yield from trial_tasks(current_root())


def task_trigger() -> Iterator[dict[str, Any]]:
    """run stale trigger trials: does the skill fire for each query?"""
    yield from trigger_tasks(current_root())


def task_grade() -> Iterator[dict[str, Any]]:
    """run checks and judges over each trial's outputs"""
    yield from grade_tasks(current_root())


def task_batch() -> Iterator[dict[str, Any]]:
    """with --batch or judge.batch: the stale grades' judge requests as one provider batch (half price)"""
    from skillmake.engine.batching import batch_tasks

    yield from batch_tasks(current_root())


def task_report() -> Iterator[dict[str, Any]]:
    """aggregate grades into reports; fail below thresholds"""
    yield from report_tasks(current_root())


def task_thresholds() -> Iterator[dict[str, Any]]:
    """fail the run when a spec is below its thresholds"""
    yield from thresholds_tasks(current_root())
