"""`skillmake clauditor validate`: the skill's runs (only the stale ones) and its assertions over them, no model;
or the assertions over a captured output (`--output FILE`)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Iterator
from typing import Any

import orjson

from skillmake.commands.clauditor_common import (
    INPUT_ERROR,
    PASSED,
    SIGNAL_FAILED,
    clauditor_exit,
    find_spec,
    open_project,
    run_flags,
    run_skillmake,
)
from skillmake.core.console import paint, write_line
from skillmake.core.errors import EXIT_FAILED, EXIT_INVALID, EXIT_OK, UsageError
from skillmake.run.project import Project
from skillmake.spec.model import Case, Spec


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Checked:
    """One run's Layer 1 result: the spec's assertions over its stored output."""

    cell: str
    outcome: str  # pass, fail, error, timeout, or missing (no record)
    assertions: tuple[dict[str, Any], ...]
    error: str | None = None


def validate(opts: argparse.Namespace) -> int:
    """clauditor's `validate`: run the skill (only the trials that are stale) and its assertions, no model."""
    spec = find_spec(opts)
    if spec is None:
        return INPUT_ERROR
    if opts.output:
        return _validate_output(opts, spec)
    # clauditor's validate: one run
    code = run_skillmake(["trial", *run_flags(opts, spec), "--trials", "1"], only="trials", opts=opts)
    if code not in (EXIT_OK, EXIT_FAILED, EXIT_INVALID):  # another spec being invalid is not this skill's error
        return clauditor_exit(code)
    results = list(_check_runs(spec.name))
    _show(spec, results, as_json=opts.json)
    return PASSED if results and all(r.outcome == "pass" for r in results) else SIGNAL_FAILED


def _validate_output(opts: argparse.Namespace, spec: Spec) -> int:
    """`validate --output FILE`: the assertions over a captured output (captured.py's scratch store, no model)."""
    from skillmake.commands.captured import INPUT_FILES_WARNING, choose_case, grade_output

    try:
        with open(opts.output, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise UsageError(f"--output {opts.output}: {exc.strerror or exc}",
                         hint="give the file holding the output to check") from None
    case = choose_case(spec, None)
    if case.input_files:
        write_line(sys.stderr, INPUT_FILES_WARNING)
    verdict = grade_output(open_project(), spec, _checks_only(case), data)
    result = Checked(cell=f"{spec.name}/{case.id}/captured", outcome=verdict.outcome,
                     assertions=verdict.expectations, error=verdict.error)
    _show(spec, [result], as_json=opts.json)
    return PASSED if result.outcome == "pass" else SIGNAL_FAILED


def _checks_only(case: Case) -> Case:
    """The case with its assertions alone: no rubric, expectations, criteria or sections (Layer 1 calls no model)."""
    return dataclasses.replace(case, rubric=None, expectations=(), criteria=(), sections=())


def _check_runs(spec_name: str) -> Iterator[Checked]:
    from skillmake.engine.actions import trial_record
    from skillmake.engine.tasks import current_root, plans_at, project_at

    root = current_root()
    project = project_at(root)
    for plan in plans_at(root):
        if plan.spec.name != spec_name:
            continue
        for item in plan.items:
            if item.k > 0:  # clauditor's validate checks its one run (the project's `trials` may plan more)
                continue
            record = trial_record(project, item)
            if record is None:
                yield Checked(cell=item.name, outcome="missing", assertions=(), error="the trial has no record")
            else:
                yield _checks_over(project, item.spec, item.case, record, cell=item.name)


def _checks_over(project: Project, spec: Spec, case: Case, trial: dict[str, Any], *, cell: str) -> Checked:
    """The case's assertions over one stored trial's outputs (and its kept workspace, for checks that read it)."""
    from skillmake.run import grade

    checks_only = _checks_only(case)
    with grade._workspace(project, checks_only, trial) as workspace:
        expectations, _score, _usage, outcome, error, _calls = grade._judge_trial(project, spec, checks_only, trial,
                                                                                   workspace)
    return Checked(cell=cell, outcome=outcome, assertions=tuple(expectations), error=error)


def _show(spec: Spec, results: list[Checked], *, as_json: bool) -> None:
    passed = sum(1 for r in results if r.outcome == "pass")
    if as_json:
        payload = {"spec": spec.name, "skill": spec.skill.name, "passed": bool(results) and passed == len(results),
                   "runs": [{"cell": r.cell, "outcome": r.outcome, "error": r.error,
                             "assertions": list(r.assertions)} for r in results]}
        write_line(sys.stdout, orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode())
        return
    for r in results:
        write_line(sys.stdout, f"validate:{r.cell}  {paint(r.outcome, r.outcome, sys.stdout)}")
        for item in r.assertions:
            if not item["passed"]:
                write_line(sys.stdout, f"  ✗ {item['text']} — {item['evidence']}")
        if r.error:
            write_line(sys.stdout, f"  {r.outcome}: {r.error}")
    write_line(sys.stdout, f"{spec.name}: {passed} of {len(results)} run(s) passed every assertion")


