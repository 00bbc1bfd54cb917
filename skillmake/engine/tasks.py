"""Task creators: specs compile into validate, trial, grade and report tasks for doit."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from typing import Any

import orjson
from doit.exceptions import TaskFailed

from skillmake.core import fstree, runlock
from skillmake.core.errors import EXIT_INVALID, EXIT_NO_SPECS, SkillmakeError
from skillmake.core.paths import cut_links, within
from skillmake.engine import actions, adaptive, cell, clean, gone, prefetch, scope, select, settled, shard, stale
from skillmake.engine.call import Call
from skillmake.engine.plan import Item, SpecPlan, TriggerItem, plan_spec, settled_plan
from skillmake.engine.report import STAMP, report_uptodate
from skillmake.results.checkout import METADATA
from skillmake.run.project import Project, new_run_id
from skillmake.run.workspace import trial_dir
from skillmake.triggers.views import trigger_dir

# None: decide from the command line. The skillmake front end sets both from the words it passes to doit.
FULL_GRAPH: bool | None = None
COMMAND: list[str] = []
# Up-to-date tasks left out of a collapsed graph, for the reporter's closing line.
COLLAPSED: dict[str, int] = {"trial": 0, "grade": 0, "trigger": 0}


def full_graph() -> bool:
    return scope.from_process() if FULL_GRAPH is None else FULL_GRAPH


def _trial_task_exists(item: Item, full: bool, chosen: select.Chosen) -> bool:
    return chosen.has(item) and (full or chosen.resample or not item.trial_cached)


def _grade_task_exists(item: Item, full: bool, chosen: select.Chosen) -> bool:
    return chosen.has(item) and (full or chosen.resample or not (item.trial_cached and item.grade_cached))


def _merges() -> bool:
    """Whether this run makes one task of a stale cell's trial and grade (cell.py): a run that names no task or
    group and lists nothing. `doit trial` runs trials only, `doit grade:x` names a grade, `list` shows both."""
    argv = COMMAND or sys.argv[1:]
    return not full_graph() and scope.runs(argv) and not scope.targets(argv)


def _merged(merges: bool, project: Project, plan: SpecPlan, item: Item, chosen: select.Chosen) -> bool:
    """Whether a cell's trial and grade are one task in this run: its trial runs (so its grade does too), no
    adaptive look waits on its grade, and no batch answers its judges (batching.py: the batch sits between the
    run's trials and its grades)."""
    return (merges and plan.spec.adaptive is None and chosen.has(item)
            and (chosen.resample or not item.trial_cached) and not _batched(project, item))


def _grade_task_name(merges: bool, project: Project, plan: SpecPlan, item: Item, full: bool,
                     chosen: select.Chosen) -> str | None:
    """The task that grades a cell in this run: `grade:<cell>`, its merged `trial:<cell>`, or None (no task)."""
    if not _grade_task_exists(item, full, chosen):
        return None
    return f"{'trial' if _merged(merges, project, plan, item, chosen) else 'grade'}:{item.name}"


@functools.lru_cache(maxsize=8)
def project_at(root: str) -> Project:
    try:
        project = Project.open(root)
    except SkillmakeError as exc:  # no spec (5), a broken configuration (2), a bad run setting (3)
        # One line and the documented code, under plain doit too, where doit would print a traceback.
        print(f"skillmake: {exc.render()}", file=sys.stderr, flush=True)
        raise SystemExit(getattr(exc, "exit_code", EXIT_INVALID)) from None
    new_run_id()  # one id for this run, inherited by worker processes
    if scope.writes(COMMAND or sys.argv[1:]):
        # One run per project at a time: a second one waits here, before it plans anything.
        runlock.acquire(project.state_dir, what=" ".join(["skillmake", *(COMMAND or sys.argv[1:])])[:80],
                        on_wait=_say_waiting)
        fstree.remove_tree(project.work_dir)  # what killed runs left; no process of theirs may write there
        project.store.begin_run()  # and the temp files of writes they never finished
        gone.remove_gone(project)  # the views and reports of specs that no longer exist
    return project


# Specs whose planning crashed, by project root: spec name → the error. Each becomes a failing report task;
# the other specs plan and run as if it were not there.
UNPLANNED: dict[str, dict[str, str]] = {}


@functools.lru_cache(maxsize=8)
def plans_at(root: str) -> tuple[SpecPlan, ...]:
    project = project_at(root)
    plans = []
    unplanned = UNPLANNED.setdefault(root, {})
    fast = _plain_run()
    trusted = settled.begin(project) if fast else False  # the store is as the last run left it (settled.py)
    for spec in project.specs:
        try:
            if trusted and settled.is_settled(project, spec):  # one digest and a few stats, not a plan per trial
                plans.append(settled_plan(project, spec))
                continue
            plans.append(plan_spec(project, spec))
            if fast:
                _settle_if_done(project, plans[-1])
        except SkillmakeError as exc:
            unplanned[spec.name] = f"{spec.name}: {exc.render()}"
        except Exception as exc:  # one spec's crash must not stop the good ones: it is that spec's failure
            unplanned[spec.name] = (f"{spec.name}: its tasks could not be planned: {type(exc).__name__}: {exc}"[:500]
                                    + "\n  hint: this is a bug in skillmake; please report it with this spec (the "
                                      "other specs ran)")
    if project.store.remote is not None and prefetch.wanted(COMMAND or sys.argv[1:]):
        # What the remote store holds of the stale trials and grades comes down in one batch (prefetch.py).
        return prefetch.fill(project, tuple(plans), replan=lambda spec: plan_spec(project, spec))
    return tuple(plans)


def _plain_run() -> bool:
    """A run of every stale task with no selection: the only invocation where settled specs are not planned in
    full (a listing, `info`, a task name, -k or --resample gets every task, as before)."""
    argv = COMMAND or sys.argv[1:]
    if full_graph() or not scope.runs(argv):
        return False
    try:
        return not select.current().active
    except select.ExpressionError:  # chosen_at says so
        return False


def _settle_if_done(project: Project, plan: SpecPlan) -> None:
    """Stamp a fully planned spec that turned out complete, with its report passed and intact: the next plain run
    plans none of its trials."""
    if settled.eligible(plan.spec) and plan.complete and report_uptodate(project, plan) is True:
        settled.settle(project, plan.spec)


def _unplanned(message: str) -> TaskFailed:
    return TaskFailed(message)


@functools.lru_cache(maxsize=8)
def chosen_at(root: str) -> select.Chosen:
    """The cells this run works on (-k, --tag, --failed) and whether it resamples them."""
    try:
        selection = select.current()
    except select.ExpressionError as exc:  # SKILLMAKE_K under plain doit: a usage error, in one message
        print(f"skillmake: {exc.render()}", file=sys.stderr, flush=True)
        raise SystemExit(3) from None
    plans = plans_at(root)
    names = sorted(p.spec.name for p in plans)
    unknown = [name for name in selection.specs if name not in names]
    if unknown:  # a typo must not quietly select nothing
        from skillmake.core.errors import did_you_mean

        print(f"skillmake: --spec {unknown[0]}: no such spec{did_you_mean(unknown[0], names)}\n"
              f"the specs are: {', '.join(names) or '(none loaded)'}", file=sys.stderr, flush=True)
        raise SystemExit(3)
    try:
        mine = shard.current()
    except shard.ShardError as exc:  # SKILLMAKE_SHARD under plain doit
        print(f"skillmake: {exc.render()}", file=sys.stderr, flush=True)
        raise SystemExit(3) from None
    return shard.narrow(select.choose(project_at(root), plans, selection), plans, mine)


def current_root() -> str:
    """The project root: $SKILLMAKE_ROOT (--root), else found upward from the current folder (config.find_root)."""
    from skillmake.spec.config import find_root

    return find_root()


def validate_tasks(root: str) -> Iterator[dict[str, Any]]:
    project = project_at(root)
    yield {"basename": "validate", "name": None, "doc": "check every spec (file:line:col errors with the fix)"}
    for path in project.spec_files:
        rel = os.path.relpath(path, root)
        # file_dep re-checks an edited spec; `uptodate` re-checks one that is broken now even though the
        # spec file itself did not change (a fixture or the skill it names went missing).
        yield {"basename": "validate", "name": rel, "actions": [(actions.validate_spec, [project, path])],
               "file_dep": [path], "uptodate": [rel not in project.broken], "doc": f"check {rel}",
               "io": {"capture": False}}


def judge_preflight(plans: tuple[SpecPlan, ...], chosen: select.Chosen | None = None,
                    targets: select.Targets | None = None) -> list[str]:
    """Why the judges of the grades this run would make cannot be reached (no key, no CLI): one line each.
    Only the grades the run makes count (select.judged_specs, which `explain` asks too): `--tag trigger` or
    `trigger:x/*` makes no grade, so it needs no judge."""
    needed = select.judged_specs(plans, chosen or select.Chosen(names=None, resample=False),
                                 targets or select.Targets())
    if not needed:
        return []
    # only now: importing the judges costs a no-op run ~0.1 s
    from skillmake.run.judges import judge_problems  # only now: importing the judges costs a no-op run ~0.1 s

    return judge_problems(needed)


def _over_cap(root: str, chosen: select.Chosen, targets: select.Targets) -> str | None:
    """Why this run must not start: `explain`'s estimate of it is over the spending cap; None: no cap, or within."""
    from skillmake.engine.explain import explain
    from skillmake.run import budget

    project = project_at(root)
    cap = budget.cap_of(project)
    if cap is None:
        return None
    unsettled = tuple(p for p in plans_at(root) if not p.settled)  # a settled spec runs nothing: costs nothing
    _, totals = explain(project, unsettled, chosen=chosen, targets=targets)
    if totals["cost_usd"] <= cap + 1e-9:
        return None
    return budget.refusal(totals["cost_usd"], cap, trials=totals["trials"] + totals["triggers"],
                          unknown=not totals["cost_known"])


def trial_tasks(root: str) -> Iterator[dict[str, Any]]:
    project = project_at(root)
    chosen = chosen_at(root)
    if scope.runs(COMMAND or sys.argv[1:]):
        # `only="trials"` (clauditor's validate) grades nothing with a model: its trials need no judge.
        targets = select.Targets(tuple(scope.targets(COMMAND or sys.argv[1:])))
        _say_selection(root, chosen, targets)
        for message in UNPLANNED.get(root, {}).values():  # said now too: a failed gate may end the run before it
            print(f"skillmake: {message.splitlines()[0]}", file=sys.stderr, flush=True)
        problems = (judge_preflight(plans_at(root), chosen, targets) if select.current().only != "trials"
                    else [])
        if problems:  # before any agent is paid for: the grades could only end in judge_error
            print("\n".join(f"skillmake: {line}" for line in problems), file=sys.stderr, flush=True)
            raise SystemExit(3)
        over = _over_cap(root, chosen, targets)
        if over:  # before any call: the estimate alone is over the spending cap (budget.py)
            print(f"skillmake: {over}", file=sys.stderr, flush=True)
            raise SystemExit(3)
    yield {"basename": "trial", "name": None, "doc": "run stale trials (case × arm × k) in isolated workspaces"}
    full = full_graph()
    merges = _merges()
    for plan in plans_at(root):
        if plan.settled:  # up to date, and a plain run: no task for any of its trials
            COLLAPSED["trial"] += plan.cells
            continue
        for item in plan.items:
            if not _trial_task_exists(item, full, chosen):
                COLLAPSED["trial"] += chosen.has(item)
                continue
            resample = chosen.resample and chosen.has(item)
            one = _merged(merges, project, plan, item, chosen)  # the trial and its grade as one task (cell.py)
            # A merged cell is a plain run's, where nothing prints why it is stale (`doit info` makes two tasks).
            uptodate = _STALE if one else stale.uptodate(stale.trial(project, item, resample=resample))
            # trials: {min, max, decide}: a trial waits for its cell's grades before its last look (adaptive.py)
            waits = adaptive.waits(plan, item, exists=lambda i: _grade_task_exists(i, full, chosen))
            yield {"basename": "trial", "name": item.name,
                   "actions": [Call(cell.run_cell if one else actions.run_trial, (project, item),
                                    _kwargs(resample=resample))],
                   **({"meta": cell.META} if one else {}),
                   "file_dep": _file_deps(project, item) if _shows_file_deps(uptodate[0] is True) else [],
                   "uptodate": uptodate, **({"task_dep": waits} if waits else {}),
                   **(_trial_clean(project, item) if full else {}), "io": _NO_CAPTURE, "verbosity": 0,
                   **_info_doc(project, item)}


# A merged cell's `uptodate`: doit keeps (False, None, None) of it, no reason object and no argument list.
_STALE: list[Any] = [False]
# One dict for every trial and grade task (doit copies it into the task's IOConfig).
_NO_CAPTURE: dict[str, Any] = {"capture": False}
_KWARGS: dict[tuple[tuple[str, bool], ...], dict[str, bool]] = {}


def _kwargs(**flags: bool) -> dict[str, bool]:
    """An action's keyword arguments, one shared dict per combination (doit copies them before each call): a first
    run's 60,000 trial and grade tasks hold four dicts, not 60,000."""
    return _KWARGS.setdefault(tuple(sorted(flags.items())), flags)


def _trial_clean(project: Project, item: Item) -> dict[str, Any]:
    """What `doit clean` does for a trial: remove its view and its report's stamp. Only a full graph carries it
    (`clean` always builds one): a plain run's 30,000 trial tasks would hold 60,000 clean actions for nothing."""
    view = trial_dir(project.runs_dir, item.spec, item.case, item.arm.name, item.k).root
    stamp = project.reports_dir / item.spec.name / STAMP  # the report must check the view out again
    return {"clean": [(_remove, [project, str(view)]), (_remove, [project, str(stamp)])],
            "meta": {clean.META: "trial view"}}


def grade_tasks(root: str) -> Iterator[dict[str, Any]]:
    project = project_at(root)
    chosen = chosen_at(root)
    yield {"basename": "grade", "name": None, "doc": "run checks and judges over each trial's outputs"}
    full = full_graph()
    merges = _merges()
    for plan in plans_at(root):
        if plan.settled:
            COLLAPSED["grade"] += plan.cells
            continue
        for item in plan.items:
            if not _grade_task_exists(item, full, chosen):
                COLLAPSED["grade"] += chosen.has(item)
                continue
            if _merged(merges, project, plan, item, chosen):  # its trial task grades it too
                continue
            resample = chosen.resample and chosen.has(item)
            waits = adaptive.waits(plan, item, exists=lambda i: _grade_task_exists(i, full, chosen))
            batched = _batched(project, item)  # its judges are answered by the run's batch task (batching.py)
            yield {"basename": "grade", "name": item.name,
                   "actions": [Call(actions.run_grade, (project, item), _kwargs(resample=resample, batched=batched))],
                   "task_dep": ([f"trial:{item.name}"] if _trial_task_exists(item, full, chosen) else []) + waits
                   + (["batch"] if batched else []),
                   "uptodate": stale.uptodate(stale.grade(project, item, resample=resample)),
                   "io": _NO_CAPTURE, "verbosity": 0}


def _batched(project: Project, item: Item) -> bool:
    from skillmake.run import batch

    return batch.batched(item.spec, item.case, project.config.judge if project.config else None)


def _trigger_task_exists(item: TriggerItem, full: bool, chosen: select.Chosen) -> bool:
    return chosen.has_trigger(item) and (full or chosen.resample or not item.cached)


def trigger_tasks(root: str) -> Iterator[dict[str, Any]]:
    project = project_at(root)
    chosen = chosen_at(root)
    yield {"basename": "trigger", "name": None,
           "doc": "run stale trigger trials: does the skill fire for each query (trigger_tests)?"}
    full = full_graph()
    for plan in plans_at(root):
        for item in plan.triggers:
            if not _trigger_task_exists(item, full, chosen):
                COLLAPSED["trigger"] += chosen.has_trigger(item)
                continue
            resample = chosen.resample and chosen.has_trigger(item)
            yield {"basename": "trigger", "name": item.name,
                   "actions": [Call(actions.run_trigger, [project, item], {"resample": resample})],
                   "uptodate": stale.uptodate(stale.trigger(project, item, resample=resample)),
                   "clean": [(_remove, [project, str(trigger_dir(project, item.spec.name, item.query.id,
                                                                 item.k).root)])],
                   "meta": {clean.META: "trigger view"},
                   "doc": f"query {item.query.id!r} ({'should' if item.query.should_trigger else 'should not'} "
                          f"trigger), run {item.k}",
                   "io": {"capture": False}, "verbosity": 0}


def report_tasks(root: str) -> Iterator[dict[str, Any]]:
    project = project_at(root)
    chosen = chosen_at(root)
    full = full_graph()
    plans_at(root)
    group: dict[str, Any] = {"basename": "report", "name": None,
                             "doc": "aggregate grades into reports; fail below thresholds"}
    if scope.names_report_group(COMMAND or sys.argv[1:]):
        # `doit report`: a red verdict fails it, as a run's does. doit gives a group no action of its own, so the
        # group waits on the gate (which waits on every report: doit stops at it, after they are all written).
        group["task_dep"] = ["thresholds"]
    yield group
    merges = _merges()
    # Tasks named without `thresholds` (`skillmake report:a`): each report gates on its own spec, or the run
    # would print "1 failing: a" and exit 0.
    gate = scope.named_without_gate(COMMAND or sys.argv[1:])
    for name, message in sorted(UNPLANNED.get(root, {}).items()):
        # Last of all (doit stops at a failed task unless -c): every other spec runs and is reported first.
        yield {"basename": "report", "name": name, "actions": [(_unplanned, [message])], "uptodate": [False],
               "task_dep": [f"report:{p.spec.name}" for p in _touched(root)] + ["thresholds"],
               "doc": "this spec could not be planned: the task fails with why", "io": {"capture": False},
               "verbosity": 2}
    for plan in _touched(root):
        spec = plan.spec
        # The cells a selection (-k, --tag, --spec) picked: one left out with no grade is "not run", not missing.
        selected = None if chosen.names is None else frozenset(
            [i.name for i in plan.items if chosen.has(i)] + [f"trigger:{t.name}" for t in plan.triggers
                                                             if chosen.has_trigger(t)])
        yield {"basename": "report", "name": spec.name,
               "actions": [Call(actions.run_report, [project, plan, selected], _kwargs(gate=gate))],
               "task_dep": [] if plan.settled else
               [dep for i in plan.items if (dep := _grade_task_name(merges, project, plan, i, full, chosen))]
               + [f"trigger:{t.name}" for t in plan.triggers if _trigger_task_exists(t, full, chosen)],
               # A resampled record keeps its key: only checking the views out again shows the fresh one.
               "uptodate": stale.uptodate(stale.report(report_uptodate(project, plan), resample=chosen.resample,
                                                       complete=plan.complete)),
               "clean": [(_remove, [project, str(project.reports_dir / spec.name)])],
               "meta": {clean.META: "report"},
               "io": {"capture": False}, "verbosity": 2}


def report_order(root: str) -> list[str]:
    """The report tasks a plain run selects one by one, in spec order, ahead of its default groups (config.py).

    doit dispatches a selected task's dependencies before it takes the next selected task, and a task that becomes
    ready joins the back of its queue. Selected as the `report` group, every spec's report waits behind all 30,000
    trials of a first run, and what each finished cell leaves for its report (its early view entry) piles up until
    the end; selected one by one, a spec's report runs once its own cells and the next spec's are dispatched, so a
    run holds two or three specs' worth at a time, whatever its size. Empty where the run names tasks, is not a run,
    or is one job of a CI matrix (no report)."""
    argv = COMMAND or sys.argv[1:]
    if not scope.runs(argv) or scope.targets(argv):
        return []
    return [f"report:{plan.spec.name}" for plan in _touched(root)]  # none in a shard


_FILE_DEPS: dict[tuple[str, int, bool], list[str]] = {}


def _command() -> tuple[str, list[str]]:
    argv = COMMAND or sys.argv[1:]
    words = [a for a in argv if not a.startswith("-")]
    return (words[0] if words else "run"), list(argv)


def _shows_file_deps(cached: bool) -> bool:
    """Only `doit list` gets a trial's files as file_dep, and only where doit will not judge the task by
    them: a stale task (it runs whatever its files say) or a listing without --status. (`doit info` names
    them in the task's doc instead, see _info_doc.)

    A run never carries them: a plain run does not create up-to-date tasks, so doit would never have recorded
    their files and would call every one of them changed (or, once they had file_dep and then lost it,
    "removed") — doit's status would contradict the action cache, which decides."""
    command, argv = _command()
    return command == "list" and (not cached or not ("--status" in argv or "-s" in argv))


def _info_doc(project: Project, item: Item) -> dict[str, Any]:
    """For `doit info`: what the trial runs and the files it reads (without making doit judge it by them)."""
    if _command()[0] != "info":
        return {}
    files = ", ".join(os.path.relpath(f, project.root) for f in _file_deps(project, item))
    return {"doc": f"case {item.case.id} under {item.arm.name}, trial {item.k}; reads {files}"}


def _file_deps(project: Project, item: Item) -> list[str]:
    """What a trial reads from the project: its spec, the skill's files (arms that install it) and the case's
    fixtures. doit lists them (`doit info`, `list --deps`) and, in the full graph, re-checks a task whose files
    changed; whether the agent runs again is still the trial key's business (a changed file that leaves the
    key as it was is served by the store)."""
    memo = (item.spec.path, item.case.index, item.arm.skill)
    deps = _FILE_DEPS.get(memo)
    if deps is None:
        deps = [item.spec.path]
        skill = item.spec.skill
        if item.arm.skill and item.tkey.skill is not None:
            files = orjson.loads(item.tkey.skill.data).get("files", {})
            deps += [skill.path] if skill.kind != "folder" else [f"{skill.path}/{rel}" for rel in files]
        deps += [f.source for f in item.case.input_files]
        deps = _FILE_DEPS[memo] = list(dict.fromkeys(deps))
    return deps


def _touched(root: str) -> list[SpecPlan]:
    """The specs whose reports this run refreshes: every spec, or those with a selected cell; none in a shard of a
    CI matrix (shard.py: the matrix's `skillmake report` job builds them from the store)."""
    chosen = chosen_at(root)
    if shard.current() is not None:
        return []
    return [p for p in plans_at(root) if chosen.touches(p)]


def _say_selection(root: str, chosen: select.Chosen, targets: select.Targets) -> None:
    """One line each: a selection that matches nothing (exit 5, as pytest's "no tests collected": a typo in CI
    must not pass green), and failures a run without --resample would reuse."""
    unknown = targets.unknown(plans_at(root), reports=UNPLANNED.get(root, {}))
    nothing = select.nothing_selected(plans_at(root), select.current(), targets)
    broken = sorted(project_at(root).broken)
    if (nothing or unknown) and broken:  # it names nothing because a spec is invalid: that is the news, validate's code
        from skillmake.spec.validate import render_text, validate_files

        print(render_text(validate_files(broken, root=root)), file=sys.stderr)
        print(f"skillmake: {select.current().describe() or 'the selection'} was not applied: "
              f"{len(broken)} spec{'s are' if len(broken) != 1 else ' is'} invalid (above); fix "
              f"{'them' if len(broken) != 1 else 'it'} and run again", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_INVALID)
    if unknown:  # a typo of a task's name: said as any bad command line is, where doit would say it raw
        print(f"skillmake: {unknown}\n  hint: `skillmake list --all` lists the tasks", file=sys.stderr, flush=True)
        raise SystemExit(3)
    if nothing:
        print(f"skillmake: {nothing}", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_NO_SPECS)
    if chosen.names is not None and not chosen.names:  # --failed after everything passed: nothing to do
        mine = shard.current()
        matched = select.choose(project_at(root), plans_at(root), select.current()) if mine else None
        if matched is not None and (matched.names is None or matched.names):  # the other jobs of the matrix have them
            count = len(matched.names) if matched.names is not None else sum(p.cells for p in plans_at(root))
            print(f"skillmake: shard {mine}: none of the {count} cell(s) {select.current().describe()} selects is "
                  "this shard's; nothing to run in this job", file=sys.stderr, flush=True)
            return
        print(f"skillmake: {select.current().describe()} selects none of the "
              f"{sum(p.cells for p in plans_at(root))} cells", file=sys.stderr, flush=True)
    if chosen.stored_failures and not chosen.resample:
        n = chosen.stored_failures
        print(f"skillmake: {n} failed trial{'s are' if n != 1 else ' is a'} stored result{'s' if n != 1 else ''}; "
              "add --resample to draw fresh samples", file=sys.stderr, flush=True)


def _say_waiting(holder: str) -> None:
    print(f"skillmake: waiting for {holder} to finish (one run per project at a time)", file=sys.stderr, flush=True)


def _remove(project: Project, path: str) -> None:
    """`doit clean`: delete a view or a report folder — only ever below .skillmake/runs or .skillmake/reports —
    and the folders it leaves empty, up to (not including) runs/ or reports/."""
    for base in (project.runs_dir, project.reports_dir, project.triggers_dir):
        if within(os.path.abspath(path), os.path.abspath(base)) and os.path.abspath(path) != os.path.abspath(base):
            cut_links(base, path)  # a link on the way is removed, never what it points at
            fstree.remove_tree(path)
            top = os.path.realpath(base)
            parent = os.path.dirname(os.path.realpath(path))
            while parent != top and fstree.inside(parent, base):
                try:
                    if os.listdir(parent) == [METADATA]:  # a case's eval_metadata.json goes with its last view
                        os.unlink(os.path.join(parent, METADATA))
                    os.rmdir(parent)  # fails on a folder that still holds something (or is gone): stop climbing
                except OSError:
                    break
                parent = os.path.dirname(parent)
            return
    raise AssertionError(f"refusing to delete {path}: not inside {project.runs_dir}, {project.reports_dir} or "
                         f"{project.triggers_dir}")


def thresholds_tasks(root: str) -> Iterator[dict[str, Any]]:
    """One task that fails the run when any spec's gates failed (reports themselves never fail)."""
    project = project_at(root)
    plans = tuple(_touched(root))
    resample = chosen_at(root).resample
    yield {"basename": "thresholds", "actions": [(actions.check_thresholds, [project, plans])],
           "task_dep": [f"report:{p.spec.name}" for p in plans],
           "uptodate": [all(report_uptodate(project, p) for p in plans) and not resample],
           "doc": "fail the run when a spec is below its thresholds, a required case failed, or trials erred",
           # `clean` also takes the viewer's static export (`skillmake report` writes it again).
           "clean": [(fstree.remove_tree, [str(project.state_dir / "site")])], "meta": {clean.META: "site"},
           "io": {"capture": False}, "verbosity": 2}
