"""The `batch` task: with --batch or judge.batch, the judge requests of every stale grade of the run go to the
provider as one batch, after the run's trials and before its grades (run/batch.py says how it works)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from doit.exceptions import TaskFailed

from skillmake.core import interrupts
from skillmake.core.console import write_line
from skillmake.engine import scope, select, tasks
from skillmake.engine.plan import Item, SpecPlan
from skillmake.run import batch, process
from skillmake.run import grade as grading
from skillmake.run.project import Project

TASK = "batch"
# doit's commands that create tasks without executing them (a run, `auto` and a named task execute them)
_RUNS_NOTHING = frozenset({"list", "info", "forget", "clean", "ignore", "dumpdb", "tabcompletion", "help",
                           "reset-dep"})


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
        _say_nothing_to_batch(project, tasks.plans_at(root), chosen)
        return
    resample = {item.name for item in items if chosen.resample and chosen.has(item)}
    # A named subtask: doit takes a generator's `name: None` dict for the group's doc, not a task that runs.
    # The grades depend on the group ("batch"), which depends on it.
    yield {"basename": TASK, "name": "judges",
           "doc": "send the judge requests of every stale grade as one provider batch (half price) and wait for it",
           "actions": [(run_batch, [project, tuple(items)], {"resampled": frozenset(resample)})],
           "task_dep": trials, "uptodate": [False], "io": {"capture": False}, "verbosity": 2}


def _say_nothing_to_batch(project: Project, plans: Iterable[SpecPlan], chosen: select.Chosen) -> None:
    """--batch (or $SKILLMAKE_BATCH) asked for a batch, yet no selected case has a judge with a batch API: one note,
    not an error (the run is what it would be without it). A spec's or the config's judge.batch says nothing: it
    asks only where a judge can be batched."""
    if os.environ.get(batch.ENV, "").strip().lower() in ("", "0", "false", "no", "off"):
        return
    named = scope.targets(tasks.COMMAND or sys.argv[1:])
    if named and named[0] in _RUNS_NOTHING:  # `--batch list`: no run, nothing it would batch to speak of
        return
    config = project.config.judge if project.config else None
    for plan in plans:
        cases = plan.spec.cases if chosen.names is None else {i.case.id: i.case for i in plan.items
                                                               if chosen.has(i)}.values()
        if any(batch.batched(plan.spec, case, config) for case in cases):
            return  # something is batched: nothing stale to ask now, or a batch it will ask for
    write_line(sys.stderr, f"skillmake: note: --batch ({batch.ENV}): no selected case has a judge with a batch API "
                           f"({', '.join(batch.BATCHABLE)}), so nothing is batched; checks and the CLI judges "
                           "(claude-code, codex) are judged as they would be without it")


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
