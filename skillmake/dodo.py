"""Task creators for a user's dodo.py:  `from skillmake.dodo import *`  makes plain `doit` run the evals."""

from __future__ import annotations

# First, before the engine loads: from the dodo.py's import on, Ctrl-C or SIGTERM under plain doit stops every
# trial's processes, keeps what finished and exits 130 in one line (interrupts.py).
from . import interrupts

interrupts.install_for_doit()

import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

from . import console, process  # noqa: E402
from .build.config import doit_config  # noqa: E402
from .build.tasks import (  # noqa: E402
    current_root,
    grade_tasks,
    report_tasks,
    thresholds_tasks,
    trial_tasks,
    trigger_tasks,
    validate_tasks,
)

__all__ = ["DOIT_CONFIG", "task_grade", "task_report", "task_thresholds", "task_trial", "task_trigger",
           "task_validate"]

DOIT_CONFIG = doit_config(current_root())
process.prepare_run()  # the run's process: subreaper of its trials, its workers die with it (process.py)
if not isinstance(sys.stdout, console.PipeSafe):  # `doit list | head` ends quietly, as under `skillmake`
    sys.stdout = console.PipeSafe(sys.stdout)


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


def task_report() -> Iterator[dict[str, Any]]:
    """aggregate grades into reports; fail below thresholds"""
    yield from report_tasks(current_root())


def task_thresholds() -> Iterator[dict[str, Any]]:
    """fail the run when a spec is below its thresholds"""
    yield from thresholds_tasks(current_root())
