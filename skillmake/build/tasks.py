"""Task creators: specs compile into validate, trial, grade and report tasks for doit."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from typing import Any

from .. import fstree, runlock
from ..project import Project, new_run_id
from ..workspace import trial_dir
from . import actions, scope
from .plan import Item, SpecPlan, plan_spec
from .report import STAMP

# None: decide from the command line. The skillmake front end sets both from the words it passes to doit.
FULL_GRAPH: bool | None = None
COMMAND: list[str] = []
# Up-to-date tasks left out of a collapsed graph, for the reporter's closing line.
COLLAPSED: dict[str, int] = {"trial": 0, "grade": 0}


def full_graph() -> bool:
    return scope.from_process() if FULL_GRAPH is None else FULL_GRAPH


def _trial_task_exists(item: Item, full: bool) -> bool:
    return full or not item.trial_cached


def _grade_task_exists(item: Item, full: bool) -> bool:
    return full or not (item.trial_cached and item.grade_cached)


@functools.lru_cache(maxsize=8)
def project_at(root: str) -> Project:
    project = Project.open(root)
    new_run_id()  # one id for this run, inherited by worker processes
    if scope.writes(COMMAND or sys.argv[1:]):
        # One run per project at a time: a second one waits here, before it plans anything.
        runlock.acquire(project.state_dir, what=" ".join(["skillmake", *(COMMAND or sys.argv[1:])])[:80],
                        on_wait=_say_waiting)
        fstree.remove_tree(project.work_dir)  # what killed runs left; no process of theirs may write there
    return project


@functools.lru_cache(maxsize=8)
def plans_at(root: str) -> tuple[SpecPlan, ...]:
    project = project_at(root)
    return tuple(plan_spec(project, spec) for spec in project.specs)


def current_root() -> str:
    return os.path.abspath(os.environ.get("SKILLMAKE_ROOT") or os.getcwd())


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


def judge_preflight(plans: tuple[SpecPlan, ...]) -> list[str]:
    """Why the judges of the grades this run would make cannot be reached (no key, no CLI): one line each."""
    needed = [p.spec for p in plans if any(i.case.has_judge and not i.grade_cached for i in p.items)]
    if not needed:
        return []
    from ..judges import judge_problems  # only now: importing the judges costs a no-op run ~0.1 s

    return judge_problems(needed)


def trial_tasks(root: str) -> Iterator[dict[str, Any]]:
    project = project_at(root)
    if scope.runs(COMMAND or sys.argv[1:]):
        problems = judge_preflight(plans_at(root))
        if problems:  # before any agent is paid for: the grades could only end in judge_error
            print("\n".join(f"skillmake: {line}" for line in problems), file=sys.stderr, flush=True)
            raise SystemExit(3)
    yield {"basename": "trial", "name": None, "doc": "run stale trials (case × arm × k) in isolated workspaces"}
    full = full_graph()
    for plan in plans_at(root):
        for item in plan.items:
            if not _trial_task_exists(item, full):
                COLLAPSED["trial"] += 1
                continue
            view = trial_dir(project.runs_dir, item.spec, item.case, item.arm.name, item.k).root
            stamp = project.reports_dir / item.spec.name / STAMP  # the report must check the view out again
            yield {"basename": "trial", "name": item.name, "actions": [(actions.run_trial, [project, item])],
                   "uptodate": [item.trial_cached],
                   "clean": [(_remove, [project, str(view)]), (_remove, [project, str(stamp)])],
                   "io": {"capture": False}, "verbosity": 0}


def grade_tasks(root: str) -> Iterator[dict[str, Any]]:
    project = project_at(root)
    yield {"basename": "grade", "name": None, "doc": "run checks and judges over each trial's outputs"}
    full = full_graph()
    for plan in plans_at(root):
        for item in plan.items:
            if not _grade_task_exists(item, full):
                COLLAPSED["grade"] += 1
                continue
            yield {"basename": "grade", "name": item.name, "actions": [(actions.run_grade, [project, item])],
                   "task_dep": [f"trial:{item.name}"] if _trial_task_exists(item, full) else [],
                   "uptodate": [item.trial_cached and item.grade_cached],
                   "io": {"capture": False}, "verbosity": 0}


def report_tasks(root: str) -> Iterator[dict[str, Any]]:
    from .report import report_uptodate

    project = project_at(root)
    full = full_graph()
    yield {"basename": "report", "name": None, "doc": "aggregate grades into reports; fail below thresholds"}
    for plan in plans_at(root):
        spec = plan.spec
        yield {"basename": "report", "name": spec.name, "actions": [(actions.run_report, [project, plan])],
               "task_dep": [f"grade:{i.name}" for i in plan.items if _grade_task_exists(i, full)],
               "uptodate": [report_uptodate(project, plan)],
               "clean": [(_remove, [project, str(project.reports_dir / spec.name)])],
               "io": {"capture": False}, "verbosity": 2}


def _say_waiting(holder: str) -> None:
    print(f"skillmake: waiting for {holder} to finish (one run per project at a time)", file=sys.stderr, flush=True)


def _remove(project: Project, path: str) -> None:
    """`doit clean`: delete a view or a report folder — only ever below .skillmake/runs or .skillmake/reports."""
    for base in (project.runs_dir, project.reports_dir):
        if fstree.inside(path, base) and os.path.realpath(path) != os.path.realpath(base):
            fstree.remove_tree(path)
            return
    raise AssertionError(f"refusing to delete {path}: not inside {project.runs_dir} or {project.reports_dir}")


def thresholds_tasks(root: str) -> Iterator[dict[str, Any]]:
    """One task that fails the run when any spec's gates failed (reports themselves never fail)."""
    from .report import report_uptodate

    project = project_at(root)
    plans = plans_at(root)
    yield {"basename": "thresholds", "actions": [(actions.check_thresholds, [project, plans])],
           "task_dep": [f"report:{p.spec.name}" for p in plans],
           "uptodate": [all(report_uptodate(project, p) for p in plans)],
           "doc": "fail the run when a spec is below its thresholds, a required case failed, or trials erred",
           "io": {"capture": False}, "verbosity": 2}
