"""`skillmake clauditor grade` and `skillmake clauditor triggers`: a run of the spec's cases (or its trigger tests),
gated as clauditor gates them, with clauditor's exit codes (clauditor.py says how)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import orjson

from skillmake.commands.clauditor_common import (
    INPUT_ERROR,
    PASSED,
    SIGNAL_FAILED,
    clauditor_exit,
    find_spec,
    report_of,
    run_flags,
    run_skillmake,
    say,
    write_clauditor_iteration,
)
from skillmake.core.console import write_line
from skillmake.core.errors import EXIT_FAILED, EXIT_INVALID, EXIT_OK, UsageError
from skillmake.spec.model import Spec

# Flags clauditor has that skillmake refuses, and why.
REFUSED = {
    "iteration": "skillmake keeps no iteration slots: every run is a row of reports/<spec>/history.jsonl and its "
                 "report is archived; drop --iteration",
    "force": "skillmake keeps no iteration slots to overwrite; drop --force",
    "diff": "each run's summary shows Δ against the previous run, and `skillmake view` compares any two runs; drop "
            "--diff",
    "only_criterion": "skillmake judges a case's criteria together and re-judges only what changed, so a subset "
                      "saves nothing; drop --only-criterion",
}


def grade(opts: argparse.Namespace) -> int:
    for name, why in REFUSED.items():
        if getattr(opts, name) not in (None, False):
            raise UsageError(f"--{name.replace('_', '-')} is clauditor's, not skillmake's", hint=why)
    if opts.min_baseline_delta is not None and opts.output:
        raise UsageError("--min-baseline-delta is incompatible with --output",
                         hint="the delta needs the skill's runs and its baseline's; drop one of them")
    if opts.min_baseline_delta is not None and not opts.baseline:
        raise UsageError("--min-baseline-delta requires --baseline", hint="add --baseline")
    spec = find_spec(opts)
    if spec is None:
        return INPUT_ERROR
    if not any(case.criteria for case in spec.cases):
        # clauditor's grade judges grading_criteria and gates on them alone: without any it exits 1, running nothing.
        say(f"no grading_criteria in {os.path.relpath(spec.path)}: `grade` has nothing to judge (clauditor exits 1 "
             "too); add grading_criteria, or run `skillmake clauditor validate` for the assertions")
        return SIGNAL_FAILED
    if opts.output:
        return _captured(opts, spec)
    # clauditor's grade runs the skill once, and --variance N adds N runs: whatever the project's `trials` say.
    argv = [*run_flags(opts, spec), "--trials", str(1 + (opts.variance or 0))]
    if opts.model:
        argv += ["--judge-model", opts.model]
    if opts.baseline:
        argv.append("--baseline")
    if opts.dry_run:
        # This spec loaded (_spec): another spec of the project being invalid (skillmake's 2) is not its input error.
        code = run_skillmake(["explain", *[a for a in argv if a != "-v"]], only="cases", opts=opts)
        return PASSED if code == EXIT_INVALID else clauditor_exit(code)
    code = run_skillmake(argv, only="cases", opts=opts)
    report = report_of(spec)
    if opts.json and report is not None:
        write_line(sys.stdout, orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
    if code not in (EXIT_OK, EXIT_FAILED, EXIT_INVALID) or report is None:
        return clauditor_exit(code, report)
    # This spec's own verdict decides, as clauditor grades one spec: another spec of the project being invalid
    # (skillmake's exit 2) is not this skill's input error, and trigger_tests are left to `triggers`.
    reasons = report["verdict"]["reasons"]
    if spec.trigger_tests is not None:
        about_triggers = set(_trigger_reasons(spec, report))
        if about_triggers and reasons and all(r in about_triggers for r in reasons):
            say("only the spec's trigger_tests keep its verdict red; `skillmake clauditor triggers` runs them")
        reasons = [r for r in reasons if r not in about_triggers]
    write_clauditor_iteration(spec)
    if reasons:
        return clauditor_exit(EXIT_FAILED, report)
    if opts.min_baseline_delta is not None:
        delta = ((report.get("baseline") or {}).get("delta") or {}).get("pass_rate")
        if delta is not None and delta < -opts.min_baseline_delta:
            say(f"the skill's pass rate is {-delta:.2f} below its baseline's, more than --min-baseline-delta "
                 f"{opts.min_baseline_delta:g}")
            return SIGNAL_FAILED
    return PASSED


def _captured(opts: argparse.Namespace, spec: Spec) -> int:
    """clauditor's `grade --output FILE`: skillmake's captured-output mode (captured.py), with the judge's flags."""
    from skillmake.commands.captured import main as captured_main
    from skillmake.spec.adapters.clauditor import FLAGS_VAR

    if opts.variance:
        raise UsageError("--variance with --output: the capture is graded alone",
                         hint="drop --output to run the skill 1 + N times, or drop --variance")
    given = {name: getattr(opts, name) for name in ("transport", "grading_provider") if getattr(opts, name)}
    if given:  # the spec is read again by captured.py: with clauditor's flags over its fields
        os.environ[FLAGS_VAR] = json.dumps(given)
    args = ["--output", opts.output, spec.path, *(["--judge-model", opts.model] if opts.model else [])]
    return clauditor_exit(captured_main(args))


def triggers(opts: argparse.Namespace) -> int:
    spec = find_spec(opts)
    if spec is None:
        return INPUT_ERROR
    if spec.trigger_tests is None:
        raise UsageError(f"{os.path.relpath(spec.path)} has no trigger_tests",
                         hint="add trigger_tests: {should_trigger: [...], should_not_trigger: [...]} to the spec")
    argv = ["--spec", spec.name, *(["--model", opts.model] if opts.model else [])]
    if opts.dry_run:
        code = run_skillmake(["explain", *argv], only="triggers", opts=opts)
        return PASSED if code == EXIT_INVALID else clauditor_exit(code)
    code = run_skillmake(argv, only="triggers", opts=opts)
    report = report_of(spec)
    section = (report or {}).get("triggers")
    if opts.json and section is not None:
        write_line(sys.stdout, orjson.dumps(section, option=orjson.OPT_INDENT_2).decode())
    if code not in (EXIT_OK, EXIT_FAILED, EXIT_INVALID) or report is None:
        return clauditor_exit(code)
    if section and section.get("skipped"):
        say(f"trigger tests not run: {section['skipped']}")
        return INPUT_ERROR
    # The spec's verdict also counts its cases, which this command did not run: the trigger reasons alone decide.
    return SIGNAL_FAILED if _trigger_reasons(spec, report) else PASSED


def _trigger_reasons(spec: Spec, report: dict[str, Any]) -> list[str]:
    """What in the spec's verdict is about its trigger tests: runs missing or failed, and min_trigger_* gates."""
    from skillmake.results.triggers import trigger_reasons

    return trigger_reasons(spec, report.get("triggers")) + [
        t["message"] for t in report["thresholds"] if t["metric"].startswith("min_trigger_") and not t["passed"]]


