"""The `batch` task: with --batch or judge.batch, the judge requests of every stale grade of the run go to the
provider as one batch, after the run's trials and before its grades (run/batch.py says how it works)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from doit.exceptions import TaskFailed

from skillmake.core import interrupts
from skillmake.core.console import write_line
from skillmake.engine import tasks
from skillmake.engine.plan import Item
from skillmake.run import batch, process
from skillmake.run import grade as grading
from skillmake.run.project import Project

TASK = "batch"


def batched(project: Project, item: Item) -> bool:
    """Whether the grade of `item` reads its judges' answers from the run's batch."""
    return batch.batched(item.spec, item.case, project.config.judge if project.config else None)


def batch_tasks(root: str) -> Iterator[dict[str, Any]]:
    """One task when some grade task of this run is batched: after those grades' trials, before the grades."""
    project = tasks.project_at(root)
    chosen = tasks.chosen_at(root)
    full = tasks.full_graph()
    items, trials = [], []
    for plan in tasks.plans_at(root):
        if plan.settled:  # every grade stored (settled.py): nothing to batch, and its items are not planned
            continue
        for item in plan.items:
            if tasks._grade_task_exists(item, full, chosen) and batched(project, item):
                items.append(item)
                if tasks._trial_task_exists(item, full, chosen):
                    trials.append(f"trial:{item.name}")
    if not items:
        return
    resample = {item.name for item in items if chosen.resample and chosen.has(item)}
    # A named subtask: doit takes a generator's `name: None` dict for the group's doc, not a task that runs.
    # The grades depend on the group ("batch"), which depends on it.
    yield {"basename": TASK, "name": "judges",
           "doc": "send the judge requests of every stale grade as one provider batch (half price) and wait for it",
           "actions": [(run_batch, [project, tuple(items)], {"resampled": frozenset(resample)})],
           "task_dep": trials, "uptodate": [False], "io": {"capture": False}, "verbosity": 2}


def run_batch(project: Project, items: tuple[Item, ...], *, resampled: frozenset[str] = frozenset()
              ) -> dict[str, Any] | TaskFailed:
    """Gather what the stale grades' judges would ask, have one batch answer it (or resume the stored one)."""
    interrupts.arm()
    process.raise_if_interrupted()
    from skillmake.engine.actions import trial_record
    from skillmake.run.judges.batch_providers import BatchError

    wanted: dict[str, batch.Wanted] = {}
    for item in items:
        record = trial_record(project, item)
        if record is None:
            continue
        _, again = grading.stale(project, item.spec, item.case, record, resample=item.name in resampled)
        shown = grading.judged_output(project, record) if again else None
        if shown is not None:
            wanted.update(batch.requests_of(item.spec, item.case, output=shown[0], files=shown[1]))
    if not wanted:
        return {"ran": False, "requests": 0}
    try:
        summary = batch.settle(project, wanted, say=_say)
    except BatchError as exc:
        return TaskFailed(f"{exc}\n(the grades of this run are judged when a run's batch can be sent; nothing was "
                          "graded)")
    process.raise_if_interrupted()
    return {"ran": bool(summary.created or summary.resumed), "requests": summary.sent, "created": summary.created,
            "resumed": summary.resumed, "reused": summary.reused, "failed": summary.failed}


def _say(text: str) -> None:
    write_line(sys.stderr, f"skillmake: {text}")
