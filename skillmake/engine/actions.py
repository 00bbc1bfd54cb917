"""What the doit tasks do when they run: thin wrappers over trial, grade and report execution."""

from __future__ import annotations

import functools
import inspect
from typing import Any

from doit.exceptions import TaskFailed

from skillmake.core import console, interrupts
from skillmake.core.errors import SkillmakeError
from skillmake.engine import adaptive, cluster, explain
from skillmake.engine.plan import Item, SpecPlan, TriggerItem
from skillmake.run import budget, process
from skillmake.run import grade as grading
from skillmake.run import trial as trials
from skillmake.run.project import Project
from skillmake.spec.validate import render_text, validate_files
from skillmake.store.objects import TRIAL_SCHEMA


def validate_spec(project: Project, path: str) -> TaskFailed | None:
    result = validate_files([path], root=project.root)
    if result.errors:
        return TaskFailed(render_text(result))
    return None


def _between_tasks(action: Any) -> Any:
    """After an interrupt, a task neither starts (a judge's call is no process that the interrupt stops) nor
    lets its doit worker take more work once it has finished: it raises Interrupted, which doit's loop (thread
    or process) treats as the end of the run."""

    @functools.wraps(action)  # its name and signature: pickled by name in `-P process`, inspected by doit
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        interrupts.arm()  # whatever the reporter: a task runs, so an interrupt must unwind, not cut short
        process.raise_if_interrupted()
        result = action(*args, **kwargs)
        process.raise_if_interrupted()
        return result

    signed(wrapped, action)
    return wrapped


def signed(function: Any, like: Any = None) -> Any:
    """`function`, its signature worked out once: doit asks every python action's signature (inspect.signature, and
    through functools.wraps' chain) each time a task runs it, ~0.1 ms a task."""
    function.__signature__ = inspect.signature(like or function)
    return function


def run_trial(project: Project, item: Item, *, resample: bool = False) -> dict[str, Any] | TaskFailed:
    """The cell's trial task: its values for the reporter (trial_step)."""
    return trial_step(project, item, resample=resample)[0]


@_between_tasks
def trial_step(project: Project, item: Item, *, resample: bool = False
               ) -> tuple[dict[str, Any] | TaskFailed, dict[str, Any] | None]:
    """The trial's values for the reporter, and the record it made or reused (None where there is none: a failure,
    the spending cap, an adaptive cell already decided), which a merged cell task hands to its grade (cell.py)."""
    if item.spec.adaptive is not None and not adaptive.needed(project, item):
        return adaptive.not_needed_values(item), None  # an earlier look decided its cell: no call, not a trial
    why: str | None
    if resample:
        why = "resampled: a fresh sample replaces the stored one" if item.trial_cached else "new"
    else:
        why = _why(lambda: explain.trial_reasons(project, item, explain.kept(project, item, "trial.json")))
    calls = explain.judge_calls(item)
    admission = None if item.trial_cached and not resample else budget.admit_trial(project, item, judge_calls=calls)
    if admission is not None and not admission.admitted:  # the cap: this trial does not start, nor any later one
        return {"outcome": budget.NOT_RUN, "ran": False, "capped": True,
                "why": f"${admission.spent:.4f} spent of the {budget.usd(admission.cap)} cap"}, None
    if resample or not item.trial_cached:
        _warm_sdks(item)
    try:
        executor = _executor(project)
        run = (trials.execute(project, item.spec, item.case, item.arm, item.k, item.tkey, resample=resample)
               if executor is None else cluster.execute_trial(project, item, executor, resample=resample))
    except SkillmakeError as exc:
        if admission is not None:
            budget.settle(project, item.name, 0.0)
        return TaskFailed(exc.render()), None
    record = run.record
    if admission is not None:
        budget.settle_trial(project, item, (record["usage"].get("cost_usd") or 0.0) if run.ran else 0.0,
                            ran=run.ran, judge_calls=calls)
    # The task's values reach the reporter in every doit mode (threads and processes alike).
    values: dict[str, Any] = {"outcome": record["outcome"], "key": record["key"], "ran": run.ran,
                              "why": why if run.ran else _reused(record, "trial"),
                              "shared": not run.ran and _made_this_run(record)}
    if run.ran:
        usage = record["usage"]
        # Model requests as the agent reported them (retries inside a CLI included); None: not a model agent,
        # or it could not tell.
        values.update(requests=usage.get("requests"), model=item.arm.agent.kind != "command",
                      tokens=usage.get("total_tokens") or 0, cost_usd=usage.get("cost_usd") or 0.0,
                      cache_saved_usd=_cache_saving(item.arm.agent.model, usage, batched=False))
    return values, record


def _executor(project: Project) -> str | None:
    """The cluster this run's trials and grades run on (`--executor`, cluster.py); None: here."""
    return cluster.configured(project)


def _check_out_early(project: Project, item: Item, trial: dict[str, Any], grade: dict[str, Any]) -> None:
    """The cell's view from the records this grade task holds (checkout.check_out_early): `trial` is the cell's
    record as trial_record reads it, `grade` its grade (a cached result, or the attempt it stored)."""
    from skillmake.results.checkout import Cell, check_out_early, labelled

    cell = Cell(spec=item.spec, case=item.case, arm=item.arm, k=item.k, key=item.tkey.key)
    result = grade["outcome"] in grading.CACHEABLE and trial["outcome"] in grading.TRIAL_RESULTS
    check_out_early(project, labelled(cell, trial, grade, grade["key"] if result else None))


def _judge_cache_saving(item: Item, usage: dict[str, Any], batched: bool) -> float:
    """What prompt caching saved on a grade's judge calls (at the batch price when batched), for the cost line."""
    if not (usage.get("cache_read_tokens") or usage.get("cache_creation_tokens")):
        return 0.0
    from skillmake.run.judges.resolve import choose

    return _cache_saving(choose(item.spec, item.case).model, usage, batched=batched)


def _cache_saving(model: str | None, usage: dict[str, Any], *, batched: bool) -> float:
    """The cached tokens' list price less what they cost (pricing.cache_saving_usd); 0 for an unpriced model."""
    if not (usage.get("cache_read_tokens") or usage.get("cache_creation_tokens")):
        return 0.0
    from skillmake.core.pricing import cache_saving_usd

    return cache_saving_usd(model, cache_read_tokens=usage.get("cache_read_tokens"),
                            cache_creation_tokens=usage.get("cache_creation_tokens"), batch=batched)


def _warm_sdks(item: Item) -> None:
    """Start importing the SDK this trial's agent uses (sdk.warm: the anthropic and openai agents), now that it runs.
    Judges need none (they call the API over the standard library, run/wire.py): a run of CLI or command agents
    imports no SDK, whoever judges it."""
    from skillmake.run import sdk

    sdk.warm([item.arm.agent.kind])


def _made_this_run(record: dict[str, Any]) -> bool:
    """Whether the record was made by another cell of this same run (identical inputs): shared, not reused."""
    from skillmake.run.project import current_run_id

    return record.get("run_id") == current_run_id()


def _reused(record: dict[str, Any], what: str) -> str:
    """Why a task that ran made no call: its record was made by another cell of this same run (identical
    inputs), or it is in the store from an earlier run."""
    if _made_this_run(record):
        return f"identical to a {what} made this run: shared, not made again"
    return "reused from the store"


def _why(reasons: Any) -> str | None:
    """Why a task runs, for the progress line; never lets a diagnostic break a run. None under -q, which prints no
    task line: the reasons read the cell's view (explain.py), a cost a quiet run would pay for nothing."""
    if console.style().quiet:
        return None
    try:
        return "; ".join(reasons())
    except Exception as exc:  # diagnostics only
        return f"(reason unknown: {type(exc).__name__})"


def trial_record(project: Project, item: Item) -> dict[str, Any] | None:
    """The trial's record for this cell: the cached result that fits its timeout, else the last attempt."""
    record = trials.cached(project, item.tkey, trials.timeout_of(item.spec, item.case))
    return record if record is not None else project.store.get_attempt(item.tkey.key, schema=TRIAL_SCHEMA)


@_between_tasks
def run_grade(project: Project, item: Item, *, resample: bool = False, batched: bool = False,
              view: bool = False, trial: dict[str, Any] | None = None) -> dict[str, Any] | TaskFailed:
    """The cell's grade task. `view`: also check the cell's view out now (a plain run's merged cell task, cell.py,
    whose report always follows and then finds it current); never where a named task runs without its report, which
    would leave views showing newer records than report.json. `trial`: the record its trial step just made or reused
    (cell.py), which spares reading it back from the store."""
    if budget.capped(project, item.name):  # its trial never started: nothing to grade, said by the trial's line
        return {"outcome": budget.NOT_RUN, "ran": False, "capped": True, "why": "its trial did not start"}
    if item.spec.adaptive is not None and not adaptive.needed(project, item):
        return adaptive.not_needed_values(item)
    record = trial if trial is not None else trial_record(project, item)
    if record is None:
        return TaskFailed(f"trial:{item.name} has no record; run it first (doit trial:{item.name})")
    why: str | None
    if resample:
        why = "its trial was resampled"
    elif not item.trial_cached:
        why = "its trial ran"
    else:
        why = _why(lambda: explain.grade_reasons(project, item, explain.kept(project, item, "grade.json")))
    try:
        executor = _executor(project)
        # A batched grade reads its answers from this machine's batch files: it is graded here, never on a worker.
        run = (grading.execute(project, item.spec, item.case, item.arm, item.k, record, resample=resample,
                               batched=batched)
               if executor is None or batched else cluster.execute_grade(project, item, record, executor,
                                                                         resample=resample))
    except SkillmakeError as exc:
        budget.settle(project, item.name, 0.0)
        return TaskFailed(exc.render())
    budget.settle(project, item.name, (run.record["usage"].get("cost_usd") or 0.0) if run.ran else 0.0)
    if view and executor is None and not batched and item.spec.adaptive is None:  # while this worker has time
        _check_out_early(project, item, record, run.record)
    values: dict[str, Any] = {"outcome": run.record["outcome"], "key": run.record["key"],
                              "why": why if run.ran else _reused(run.record, "grade"), "ran": run.ran,
                              "shared": not run.ran and _made_this_run(run.record)}
    if console.style().verbose:  # -v: each judge's verdict and reasoning under the grade's line (caliper's --verbose)
        values["verdicts"] = [[bool(e["passed"]), str(e["text"])[:120], " ".join(str(e["evidence"]).split())[:300]]
                              for e in run.record["expectations"] if e.get("source") == "judge"]
    if run.ran:
        usage = run.record["usage"]
        values.update(judge_calls=0 if batched else run.judge_calls, tokens=usage.get("total_tokens") or 0,
                      cost_usd=usage.get("cost_usd") or 0.0, cache_saved_usd=_judge_cache_saving(item, usage, batched))
        if batched:
            values["batched"] = run.judge_calls
    return values


@_between_tasks
def run_trigger(project: Project, item: TriggerItem, *, resample: bool = False) -> dict[str, Any] | TaskFailed:
    from skillmake.triggers.run import execute, triggered

    tests = item.spec.trigger_tests
    assert tests is not None
    why = ("resampled: a fresh sample replaces the stored one" if resample else
           _why(lambda: explain.trigger_reasons(project, item)))
    admission = None if item.cached and not resample else budget.admit_trigger(project, item)
    if admission is not None and not admission.admitted:  # the cap: this trigger trial does not start
        return {"outcome": budget.NOT_RUN, "ran": False, "capped": True,
                "why": f"${admission.spent:.4f} spent of the {budget.usd(admission.cap)} cap"}
    try:
        run = execute(project, item.spec, tests, item.query, item.k, item.tkey, item.offered, resample=resample)
    except SkillmakeError as exc:
        if admission is not None:
            budget.settle(project, f"trigger:{item.name}", 0.0)
        return TaskFailed(exc.render())
    record = run.record
    if admission is not None:
        budget.settle_trigger(project, item, record if run.ran else None)
    outcome = record["outcome"]
    if outcome == "completed":
        fired = triggered(record, item.offered.name)
        outcome = "triggered" if fired else "not triggered"
    values: dict[str, Any] = {"outcome": outcome, "key": record["key"], "ran": run.ran,
                              "why": why if run.ran else _reused(record, "trigger trial")}
    if run.ran:
        usage = record["usage"]
        values.update(requests=usage.get("requests"), model=True, tokens=usage.get("total_tokens") or 0,
                      cost_usd=usage.get("cost_usd") or 0.0)
    return values


def run_report(project: Project, plan: SpecPlan, selected: frozenset[str] | None = None, *,
               gate: bool = False) -> TaskFailed | None:
    """Build the spec's report; with `gate` (a report task named on a command line that runs no `thresholds`
    task), fail with its gate too, so that the exit code says what its header says."""
    from skillmake.engine.report import build_and_write

    try:
        build_and_write(project, plan, selected=selected)
    except SkillmakeError as exc:
        return TaskFailed(exc.render())
    return check_thresholds(project, (plan,)) if gate else None


def check_thresholds(project: Project, plans: tuple[SpecPlan, ...]) -> TaskFailed | None:
    from skillmake.engine.report import problems_of

    problems = [message for plan in plans for message in problems_of(project, plan)]
    note = budget.stop_note(project)
    if note is not None:  # a run the cap stopped is not a complete run, whatever the gates of what ran say
        problems.append(note)
    return TaskFailed("\n".join(problems)) if problems else None
