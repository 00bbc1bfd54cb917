"""One doit task for a cell's trial and its grade, where a run needs them as one (a plain run's stale cells).

doit's own cost is per task (a Task of ~3 KiB, an ExecNode, a dep-db entry, a status check): a first run of
30,000 trials made 60,000 tasks where bare doit makes 30,000. A plain run — no task named, no listing — never
runs a grade apart from its trial, so there the two are one task, `trial:<cell>`, that runs the trial and then
the grade, with the same calls as two tasks would make. Where something needs them apart (a task or group named,
`doit list`/`info`/`clean`, adaptive trials waiting on grades, batched judges), tasks.py makes two, as before.
"""

from __future__ import annotations

import time
from typing import Any

from doit.exceptions import TaskFailed

from skillmake.engine import actions
from skillmake.engine.plan import Item
from skillmake.run.project import Project

# Marks a merged task (doit keeps `meta` by reference: one dict for every such task). The reporter reads it to
# count two steps for the task and print two lines.
META: dict[str, str] = {"skillmake": "trial+grade"}


class GradeFailed(TaskFailed):
    """The cell's grade failed after its trial ran: the reporter says the trial's line, then the grade's failure."""

    def __init__(self, failure: TaskFailed, trial: dict[str, Any]) -> None:
        super().__init__(failure.message)
        self.traceback = failure.traceback
        self.trial = trial


def run_cell(project: Project, item: Item, *, resample: bool = False) -> dict[str, Any] | TaskFailed:
    """The trial, then its grade: {"trial": values, "grade": values}, each as its own task would have returned
    it plus the seconds it took. A failed trial is the task's failure (its grade never starts, as a grade task
    never started after its failed trial); a failed grade carries the trial's values (GradeFailed)."""
    started = time.monotonic()
    trial, record = actions.trial_step(project, item, resample=resample)
    if isinstance(trial, TaskFailed):
        return trial
    middle = time.monotonic()
    trial["seconds"] = middle - started
    # Its view too (actions.run_grade); the trial's record as the step left it, not read back from the store.
    grade = actions.run_grade(project, item, resample=resample, view=True, trial=record)
    if isinstance(grade, TaskFailed):
        return GradeFailed(grade, trial)
    grade["seconds"] = time.monotonic() - middle
    return {"trial": trial, "grade": grade}


actions.signed(run_cell)


def merged(task: Any) -> bool:
    """Whether a doit task is a merged cell (run_cell)."""
    meta = getattr(task, "meta", None)
    return meta is META or meta == META  # == too: a task that came back from a -P process worker
