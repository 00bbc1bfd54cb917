"""`skillmake caliper run|validate SPEC [FLAGS]`: caliper 0.1.0's own command lines, run by skillmake.

A CI job written for caliper keeps its command line (`caliper run x.eval.yaml --k 3 --baseline --output r.json`
becomes `skillmake caliper run x.eval.yaml --k 3 --baseline --output r.json`), its results file (caliper's shape,
results/caliper_results.py, also saved as `.caliper/results/<spec>/<time>.json` beside the spec, as caliper saves
it) and its exit codes, caliper's:

    run       0 whatever the verdict (caliper reports, it does not gate)   1 no such file, an invalid spec
              2 the backend could not run at all (caliper's "Backend configuration error": no trial could run),
                or a bad command line (click's usage error)
    validate  0 the spec is valid                                         1 no such file, an invalid spec

What runs is skillmake's: trials and grades are keyed and cached as a plain `skillmake` run's (a second run with
nothing changed runs nothing), and results land in the same reports and views. A plain `skillmake` run keeps
skillmake's own exit codes (1 when a threshold is not met).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import sys
from typing import Any

from skillmake.commands.argparser import Parser
from skillmake.core.console import write_line
from skillmake.core.errors import EXIT_OK, UsageError

# caliper's exit codes (commands/run.py, commands/validate.py; a bad command line is click's usage error, 2).
OK, INVALID, BACKEND_ERROR, USAGE_ERROR = 0, 1, 2, 2
COMMANDS = ("run", "validate")


def main(args: list[str]) -> int:
    parser = Parser(prog="skillmake caliper", description="caliper 0.1.0's command lines (run, validate) with its "
                    "flags, results file and exit codes, run by skillmake (incremental).")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run an evaluation spec (caliper's flags)")
    run.add_argument("spec", help="the caliper .eval.yaml")
    run.add_argument("--k", type=int, default=None, help="attempts per task (caliper's default 3)")
    run.add_argument("--workers", type=int, default=None, help="parallel workers (-j)")
    run.add_argument("--timeout", type=int, default=None, help="seconds per attempt (caliper's default 120)")
    run.add_argument("--baseline", action="store_true", help="also run without the skill")
    run.add_argument("--judge", default=None, help="autorater | script | autorater-sdk")
    run.add_argument("--output", default=None, help="also save the results JSON to this path")
    run.add_argument("--verbose", "-v", action="store_true", help="each attempt's verdict and reasoning")
    run.add_argument("--model", "-m", default=None, help="override skill.model for the agent under test")
    check = sub.add_parser("validate", help="validate a spec file")
    check.add_argument("spec", help="the caliper .eval.yaml")
    try:
        opts = parser.parse_args(args)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else USAGE_ERROR
    except UsageError as exc:  # caliper's CLI (click) exits 2 on a bad command line
        write_line(sys.stderr, f"skillmake caliper: {exc.message}" + (f"\n{exc.hint}" if exc.hint else ""))
        return USAGE_ERROR
    return _validate(opts.spec) if opts.command == "validate" else _run(opts)


def _load(path: str) -> tuple[Any, int]:
    """(the loaded spec, OK) or (None, INVALID) with the errors printed, as caliper reports them: on stdout."""
    from skillmake.commands.specs import project_root
    from skillmake.spec.validate import render_text, validate_files

    if not os.path.isfile(path):
        _say(f"Error: File not found: {path}")
        return None, INVALID
    result = validate_files([path], root=project_root())
    if result.errors or not result.specs:
        _say(render_text(result) or f"{path}: not a spec skillmake can read")
        return None, INVALID
    return result.specs[0], OK


def _validate(path: str) -> int:
    spec, code = _load(path)
    if spec is not None:
        agent = spec.arms[0].agent
        _say(f"Spec is valid: {spec.name}\n  backend  {agent.kind}\n  tasks    {len(spec.cases)}\n"
             f"  judge    {spec.judge.provider}" + (f" / {spec.judge.model}" if spec.judge.model else ""))
    return code


def _run(opts: argparse.Namespace) -> int:
    from skillmake.commands import runner

    spec, code = _load(opts.spec)
    if spec is None:
        return code
    argv = ["--spec", spec.name]
    for flag, value in (("--k", opts.k), ("--workers", opts.workers), ("--timeout", opts.timeout),
                        ("--judge", opts.judge), ("--model", opts.model)):
        if value is not None:
            argv += [flag, str(value)]
    argv += ["--baseline"] * opts.baseline + ["-v"] * opts.verbose
    try:
        runner.run_with(argv)  # skillmake's verdict is printed; caliper's exit code does not follow it
    except SystemExit as exc:  # doit's loader stopping the run (a judge with no credentials)
        if exc.code not in (0, None):
            return BACKEND_ERROR
    report = _report(spec)
    if report is None:
        return BACKEND_ERROR
    data = _results(spec, report, judge=opts.judge or "autorater")
    saved = _save(data, spec, opts.output)
    _say(f"Results saved to {saved}")
    return BACKEND_ERROR if _nothing_ran(report) else OK


def _nothing_ran(report: dict[str, Any]) -> bool:
    """No trial of the spec could run at all (every one ended in `error`): caliper's backend configuration error."""
    outcomes = [r.get("outcomes") or {} for r in report["rows"]]
    return bool(outcomes) and all(sum(o.values()) > 0 and o.get("error", 0) == sum(o.values()) for o in outcomes)


def _report(spec: Any) -> dict[str, Any] | None:
    from skillmake.engine.tasks import current_root, project_at
    from skillmake.results import read_report

    with contextlib.suppress(Exception):
        return read_report(project_at(current_root()).reports_dir / spec.name / "report.json")
    return None


def _results(spec: Any, report: dict[str, Any], *, judge: str) -> dict[str, Any]:
    from skillmake.engine.tasks import current_root, project_at
    from skillmake.results.caliper_results import caliper_results

    return caliper_results(project_at(current_root()), spec, report, judge_strategy=judge)


def _save(data: dict[str, Any], spec: Any, output: str | None) -> str:
    """caliper's places: `.caliper/results/<spec>/<time>.json` beside the spec, and --output when given."""
    import orjson

    from skillmake.core import atomic

    def write_plain_json(path: str, value: dict[str, Any]) -> None:
        atomic.write_bytes(path, orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")

    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H-%M-%SZ")
    saved = os.path.join(spec.folder, ".caliper", "results", spec.name, f"{stamp}.json")
    write_plain_json(saved, data)
    if output:
        write_plain_json(os.path.abspath(os.path.expanduser(output)), data)
    return os.path.relpath(saved)


def _say(text: str) -> None:
    write_line(sys.stdout, text)
