"""`skillmake clauditor grade|validate|triggers SKILL.md [FLAGS]`: clauditor's own command lines, run by skillmake.

A CI job written for clauditor keeps its command line (`clauditor grade x.md --variance 3 --transport api` becomes
`skillmake clauditor grade x.md --variance 3 --transport api`) and its exit codes, clauditor's four:

    0  the skill passed its gate          2  input error: a bad flag, no such skill, an invalid spec, no credentials
    1  the skill did not meet its bar     3  API error: a judge's provider failed (a grade ended in judge_error)

What runs is skillmake's: the spec's trials and grades are keyed and cached exactly as a plain `skillmake` run's (a
second `clauditor grade` with nothing changed runs nothing), and the results land in the same reports and views.
The flags follow clauditor's precedence — the flag, then CLAUDITOR_*, then the spec's field, then auto — because
they reach the clauditor adapter as flags (adapters/clauditor.FLAGS_VAR), not as environment variables.

`grade` gates as clauditor's does: the primary run's share of grading_criteria passed and their mean score against
grade_thresholds (clauditor's defaults 0.7 / 0.5 when unset), and with `--variance N` the share of runs that pass
against min_stability (results/thresholds.clauditor_gates); assertions and sections are graded and shown, not gated.
Where skillmake differs, it says so (docs/formats.md, "clauditor's command line"): clauditor's iteration slots
(`--iteration`, `--force`, `--diff`) and `--only-criterion` are refused saying what skillmake does instead.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from skillmake.commands.argparser import Parser
from skillmake.core.console import paint, write_line
from skillmake.core.errors import (
    EXIT_FAILED,
    EXIT_INVALID,
    EXIT_NO_SPECS,
    EXIT_OK,
    EXIT_USAGE,
    SkillmakeError,
    UsageError,
    did_you_mean,
)
from skillmake.run.project import Project
from skillmake.spec.model import Case, Spec

# clauditor's exit codes (docs/cli-reference.md, "Exit codes").
PASSED, SIGNAL_FAILED, INPUT_ERROR, API_ERROR = 0, 1, 2, 3
COMMANDS = ("grade", "validate", "triggers")
USAGE = "usage: skillmake clauditor {grade,validate,triggers} SKILL.md [FLAGS]  (skillmake clauditor CMD --help)"
# clauditor's other commands: what does their job here.
ELSEWHERE = {
    "init": "`skillmake init SKILL` writes a starter spec beside a skill (skillmake also reads a <skill>.eval.json "
            "you write by hand)",
    "propose-eval": "`skillmake init SKILL` writes a starter spec; skillmake proposes no assertions with a model",
    "lint": "`skillmake validate` checks every spec (frontmatter lint is not done)",
    "run": "`skillmake clauditor validate SKILL.md` runs the skill; each trial's output is kept under "
           ".skillmake/runs/<spec>/<case>/<arm>/<k>/",
    "capture": "`skillmake clauditor validate SKILL.md` runs the skill and keeps each output under "
               ".skillmake/runs/<spec>/…; `skillmake clauditor grade SKILL.md --output FILE` grades a capture",
    "extract": "`skillmake clauditor grade SKILL.md` grades the spec's sections (Layer 2) with its criteria",
    "compare": "`skillmake compare SPEC --previous` (blind A/B of two versions of the skill) and `skillmake view` "
               "(two runs side by side)",
    "audit": "`skillmake view` (every run's results per case and assertion) and reports/<spec>/history.jsonl",
    "trend": "reports/<spec>/history.jsonl (one row per run) and `skillmake view`",
    "suggest": "`skillmake optimize-description SPEC` improves the skill's description; no body edits are proposed",
    "badge": "reports/<spec>/report.json holds the verdict and pass rates a badge needs",
    "setup": "nothing to install: skillmake runs clauditor's specs as they are",
    "doctor": "`skillmake explain` says what a run needs (credentials, CLIs) before anything is paid for",
}
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
_NO_KEY_NOTICE = ("skillmake clauditor: --transport cli implies --no-api-key for the skill's runs: ANTHROPIC_API_KEY "
                  "and ANTHROPIC_AUTH_TOKEN are not passed to claude (pass --transport api to keep them)")


def main(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help", "help"):
        write_line(sys.stdout, _help())
        return EXIT_OK
    command, rest = args[0], args[1:]
    try:
        if command in ELSEWHERE:
            raise UsageError(f"`clauditor {command}` has no mirror here", hint=ELSEWHERE[command])
        if command not in COMMANDS:
            raise UsageError(f"unknown clauditor command {command!r}{did_you_mean(command, COMMANDS)}", hint=USAGE)
        parser = _parser(command)
        if "-h" in rest or "--help" in rest:
            write_line(sys.stdout, parser.format_help())
            return EXIT_OK
        opts = parser.parse_args(rest)
        opts.command = command
        return RUNNERS[command](opts)
    except UsageError as exc:
        _say(exc.message + (f"\n  hint: {exc.hint}" if exc.hint else ""))
        return INPUT_ERROR
    except SkillmakeError as exc:
        _say(exc.render())
        return clauditor_exit(int(getattr(exc, "exit_code", EXIT_INVALID)))


def clauditor_exit(code: int, report: dict[str, Any] | None = None) -> int:
    """skillmake's exit code as clauditor's: what is not the skill's fault or an API's is an input error (2);
    a failed verdict whose grades could not be judged is an API error (3)."""
    if code == EXIT_OK:
        return PASSED
    if code == EXIT_FAILED:
        if report is not None and any(row["outcomes"]["judge_error"] for row in report.get("rows", ())):
            return API_ERROR
        return SIGNAL_FAILED
    if code in (EXIT_INVALID, EXIT_USAGE, EXIT_NO_SPECS):
        return INPUT_ERROR
    return code  # 4 (a bug in skillmake) and 130 (interrupted) keep their meaning


# --- the command lines ---------------------------------------------------------------------------------------

def _parser(command: str) -> argparse.ArgumentParser:
    usage = f"usage: skillmake clauditor {command} SKILL.md [FLAGS]"
    parser = Parser(prog=f"skillmake clauditor {command}", usage_line=usage,
                    description=f"clauditor's `{command}`, run by skillmake (incremental, clauditor's exit codes: "
                                "0 passed, 1 failed, 2 input error, 3 API error).")
    parser.add_argument("skill", metavar="SKILL.md", help="the skill: a command .md, a SKILL.md or its folder")
    parser.add_argument("--eval", metavar="PATH", help="the eval spec (default: the clauditor spec of the skill)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    parser.add_argument("--root", help=argparse.SUPPRESS)  # the front end reads it (every command takes it)
    if command == "triggers":
        parser.add_argument("--model", metavar="M", help="the model of the agent that runs the trigger queries")
        parser.add_argument("--dry-run", action="store_true", help="say what would run, and the cost; run nothing")
        parser.add_argument("--transport", choices=("api", "cli", "auto"),
                            help="accepted; trigger trials run the real agent, no judge")
        return parser
    parser.add_argument("--output", metavar="PATH", help="grade this captured output instead of running the skill")
    parser.add_argument("-v", "--verbose", action="store_true", help="a line for every task, with the reason")
    parser.add_argument("--no-transcript", action="store_true",
                        help="accepted; transcripts are part of each trial's record and always kept")
    parser.add_argument("--harness", choices=("claude-code", "codex", "auto"), help="the CLI that runs the skill")
    parser.add_argument("--timeout", type=_positive_int, metavar="SECONDS", help="each run's timeout")
    parser.add_argument("--sync-tasks", action="store_true", help="Claude Code's background tasks run synchronously")
    parser.add_argument("--no-api-key", action="store_true",
                        help="claude authenticates with CLAUDE_CODE_OAUTH_TOKEN (a subscription), not an API key")
    if command == "grade":
        parser.add_argument("--model", metavar="M", help="the grading model")
        parser.add_argument("--dry-run", action="store_true", help="say what would run, and the cost; run nothing")
        parser.add_argument("--variance", type=_positive_int, metavar="N",
                            help="N more runs of the skill, each graded (1 + N in all, as clauditor counts)")
        parser.add_argument("--baseline", action="store_true", help="also run the prompt without the skill")
        parser.add_argument("--min-baseline-delta", type=float, metavar="F",
                            help="fail when the skill's pass rate is more than F below its baseline's")
        parser.add_argument("--transport", choices=("api", "cli", "auto"), help="how the judge reaches Claude")
        parser.add_argument("--grading-provider", choices=("anthropic", "openai", "auto"), help="the judge's provider")
        parser.add_argument("--iteration", type=int, metavar="N", help=argparse.SUPPRESS)
        parser.add_argument("--force", action="store_true", help=argparse.SUPPRESS)
        parser.add_argument("--diff", action="store_true", help=argparse.SUPPRESS)
        parser.add_argument("--only-criterion", action="append", metavar="S", help=argparse.SUPPRESS)
    return parser


def _positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number above 0, not {text!r}")
    return int(text)


# --- grade ------------------------------------------------------------------------------------------------------

def _grade(opts: argparse.Namespace) -> int:
    for name, why in REFUSED.items():
        if getattr(opts, name) not in (None, False):
            raise UsageError(f"--{name.replace('_', '-')} is clauditor's, not skillmake's", hint=why)
    if opts.min_baseline_delta is not None and opts.output:
        raise UsageError("--min-baseline-delta is incompatible with --output",
                         hint="the delta needs the skill's runs and its baseline's; drop one of them")
    if opts.min_baseline_delta is not None and not opts.baseline:
        raise UsageError("--min-baseline-delta requires --baseline", hint="add --baseline")
    spec = _spec(opts)
    if spec is None:
        return INPUT_ERROR
    if not any(case.criteria for case in spec.cases):
        # clauditor's grade judges grading_criteria and gates on them alone: without any it exits 1, running nothing.
        _say(f"no grading_criteria in {os.path.relpath(spec.path)}: `grade` has nothing to judge (clauditor exits 1 "
             "too); add grading_criteria, or run `skillmake clauditor validate` for the assertions")
        return SIGNAL_FAILED
    if opts.output:
        return _captured(opts, spec)
    # clauditor's grade runs the skill once, and --variance N adds N runs: whatever the project's `trials` say.
    argv = [*_run_flags(opts, spec), "--trials", str(1 + (opts.variance or 0))]
    if opts.model:
        argv += ["--judge-model", opts.model]
    if opts.baseline:
        argv.append("--baseline")
    if opts.dry_run:
        # This spec loaded (_spec): another spec of the project being invalid (skillmake's 2) is not its input error.
        code = _run(["explain", *[a for a in argv if a != "-v"]], only="cases", opts=opts)
        return PASSED if code == EXIT_INVALID else clauditor_exit(code)
    code = _run(argv, only="cases", opts=opts)
    report = _report(spec)
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
            _say("only the spec's trigger_tests keep its verdict red; `skillmake clauditor triggers` runs them")
        reasons = [r for r in reasons if r not in about_triggers]
    _write_iteration(spec)
    if reasons:
        return clauditor_exit(EXIT_FAILED, report)
    if opts.min_baseline_delta is not None:
        delta = ((report.get("baseline") or {}).get("delta") or {}).get("pass_rate")
        if delta is not None and delta < -opts.min_baseline_delta:
            _say(f"the skill's pass rate is {-delta:.2f} below its baseline's, more than --min-baseline-delta "
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


# --- validate -------------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Checked:
    """One run's Layer 1 result: the spec's assertions over its stored output."""

    cell: str
    outcome: str  # pass, fail, error, timeout, or missing (no record)
    assertions: tuple[dict[str, Any], ...]
    error: str | None = None


def _validate(opts: argparse.Namespace) -> int:
    """clauditor's `validate`: run the skill (only the trials that are stale) and its assertions, no model."""
    spec = _spec(opts)
    if spec is None:
        return INPUT_ERROR
    if opts.output:
        return _validate_output(opts, spec)
    code = _run(["trial", *_run_flags(opts, spec), "--trials", "1"], only="trials", opts=opts)  # clauditor: one run
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
    verdict = grade_output(_project(), spec, _checks_only(case), data)
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


# --- triggers -------------------------------------------------------------------------------------------------

def _triggers(opts: argparse.Namespace) -> int:
    spec = _spec(opts)
    if spec is None:
        return INPUT_ERROR
    if spec.trigger_tests is None:
        raise UsageError(f"{os.path.relpath(spec.path)} has no trigger_tests",
                         hint="add trigger_tests: {should_trigger: [...], should_not_trigger: [...]} to the spec")
    argv = ["--spec", spec.name, *(["--model", opts.model] if opts.model else [])]
    if opts.dry_run:
        code = _run(["explain", *argv], only="triggers", opts=opts)
        return PASSED if code == EXIT_INVALID else clauditor_exit(code)
    code = _run(argv, only="triggers", opts=opts)
    report = _report(spec)
    section = (report or {}).get("triggers")
    if opts.json and section is not None:
        write_line(sys.stdout, orjson.dumps(section, option=orjson.OPT_INDENT_2).decode())
    if code not in (EXIT_OK, EXIT_FAILED, EXIT_INVALID) or report is None:
        return clauditor_exit(code)
    if section and section.get("skipped"):
        _say(f"trigger tests not run: {section['skipped']}")
        return INPUT_ERROR
    # The spec's verdict also counts its cases, which this command did not run: the trigger reasons alone decide.
    return SIGNAL_FAILED if _trigger_reasons(spec, report) else PASSED


def _trigger_reasons(spec: Spec, report: dict[str, Any]) -> list[str]:
    """What in the spec's verdict is about its trigger tests: runs missing or failed, and min_trigger_* gates."""
    from skillmake.results.triggers import trigger_reasons

    return trigger_reasons(spec, report.get("triggers")) + [
        t["message"] for t in report["thresholds"] if t["metric"].startswith("min_trigger_") and not t["passed"]]


RUNNERS: dict[str, Callable[[argparse.Namespace], int]] = {"grade": _grade, "validate": _validate,
                                                           "triggers": _triggers}


# --- shared -------------------------------------------------------------------------------------------------

def _project() -> Project:
    from skillmake.commands.specs import project_root

    return Project.open(project_root())


def _spec(opts: argparse.Namespace) -> Spec | None:
    """The clauditor spec `--eval` names, else the one beside the skill (clauditor's `<stem>.eval.json`, or the only
    clauditor spec of that skill). None after printing the errors of a spec that is invalid."""
    if opts.eval:
        path = os.path.abspath(opts.eval)
        if not os.path.isfile(path):
            raise UsageError(f"--eval {opts.eval}: no such file", hint="give the path of the skill's eval spec")
        if not os.path.exists(opts.skill):
            raise UsageError(f"{opts.skill}: no such skill file", hint="give the skill's .md file (or its SKILL.md)")
        # clauditor's --eval: the spec, wherever it is in the project, runs on the skill this command line names.
        from skillmake.spec.adapters.clauditor import EVAL_VAR

        os.environ[EVAL_VAR] = json.dumps({"eval": path, "skill": os.path.abspath(opts.skill)})
        return _loaded(_project(), [path], f"--eval {opts.eval}")
    project = _project()
    given = os.path.abspath(opts.skill)
    if not os.path.exists(given):
        raise UsageError(f"{opts.skill}: no such skill file", hint="give the skill's .md file (or its SKILL.md)")
    skill = os.path.dirname(given) if os.path.basename(given) == "SKILL.md" else given
    stem = os.path.basename(given)[:-3] if given.endswith(".md") else "SKILL"
    folder = skill if os.path.isdir(skill) else os.path.dirname(skill)
    beside = [os.path.join(folder, f"{stem}.eval.json"), os.path.join(folder, "eval.json")]
    mine = [s.path for s in project.specs if s.format == "clauditor" and s.skill.path == skill]
    mine += [p for p in map(os.path.abspath, project.broken) if p in beside]
    if not mine:
        raise UsageError(f"no clauditor spec for {opts.skill}",
                         hint=f"write {os.path.relpath(beside[0])} (clauditor's placement), or give --eval PATH")
    preferred = [p for p in beside if p in mine]
    if len(mine) > 1 and not preferred:
        listed = ", ".join(sorted(os.path.relpath(p) for p in mine))
        raise UsageError(f"{opts.skill} has {len(mine)} clauditor specs ({listed})", hint="choose one with --eval")
    return _loaded(project, [preferred[0] if preferred else mine[0]], opts.skill)


def _loaded(project: Project, paths: list[str], what: str) -> Spec | None:
    path = paths[0]
    broken = {os.path.abspath(p): errors for p, errors in project.broken.items()}
    if path in broken:
        write_line(sys.stderr, "\n".join(e.render() for e in broken[path]))
        _say(f"the spec of {what} is invalid ({os.path.relpath(path)}); fix it first")
        return None
    for spec in project.specs:
        if spec.path == path:
            return spec
    raise UsageError(f"{what}: {os.path.relpath(path)} is not a spec of this project",
                     hint=f"it must be under the project root ({project.root}) and not excluded by its config")


def _run_flags(opts: argparse.Namespace, spec: Spec) -> list[str]:
    """skillmake's run options for clauditor's shared runner flags (validate and grade)."""
    argv = ["--spec", spec.name]
    if opts.timeout:
        argv += ["--timeout", str(opts.timeout)]
    if opts.verbose:
        argv.append("-v")
    for name in ("harness", "transport", "grading_provider"):
        value = getattr(opts, name, None)
        if value:
            argv += [f"--{name.replace('_', '-')}", value]
    if opts.sync_tasks:
        argv.append("--sync-tasks")
    if _no_api_key(opts):
        argv.append("--no-api-key")
    return argv


def _no_api_key(opts: argparse.Namespace) -> bool:
    """--no-api-key, or on `grade` a cli transport chosen by flag or CLAUDITOR_TRANSPORT, which implies it as in
    clauditor; said once when it takes a key away."""
    if opts.no_api_key:
        return True
    if opts.command != "grade" or (opts.transport or os.environ.get("CLAUDITOR_TRANSPORT", "").strip()) != "cli":
        return False
    if os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"):
        write_line(sys.stderr, _NO_KEY_NOTICE)
    return True


def _run(argv: list[str], *, only: str, opts: argparse.Namespace) -> int:
    """A skillmake run (or `explain …`) of the argv built here; with --json, its lines go to stderr."""
    from skillmake.commands import cli

    stream = contextlib.redirect_stdout(sys.stderr) if opts.json else contextlib.nullcontext()
    with stream:
        try:
            return cli.run_with(argv, only=only)
        except SystemExit as exc:  # doit's loader stopping the run (a judge with no credentials: 3)
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE


def _write_iteration(spec: Spec) -> None:
    """clauditor's .clauditor/iteration-N/<skill>/ files of this grade (clauditor_iteration.py), said as it says."""
    from skillmake.commands.clauditor_iteration import write_iteration
    from skillmake.engine.tasks import current_root

    try:
        written = write_iteration(current_root(), spec)
    except OSError as exc:  # the grade stands; a CI step reading the files will say what is missing
        _say(f"could not write clauditor's .clauditor/ files: {exc}")
        return
    if written is not None:
        write_line(sys.stderr, f"Workspace: {os.path.relpath(written)}")


def _report(spec: Spec) -> dict[str, Any] | None:
    from skillmake.engine.tasks import current_root, project_at
    from skillmake.results import read_report

    return read_report(project_at(current_root()).reports_dir / spec.name / "report.json")


def _help() -> str:
    lines = ["skillmake clauditor — clauditor's command lines, run by skillmake (incremental)", "", USAGE, "",
             "  grade SKILL.md      run and grade (assertions, sections, criteria); --variance N, --baseline,",
             "                      --min-baseline-delta F, --model, --output FILE, --dry-run, --json",
             "  validate SKILL.md   run the skill and its assertions only (no model); --output FILE, --json",
             "  triggers SKILL.md   run the spec's trigger_tests with the real agent; --model, --dry-run, --json",
             "", "  runner flags: --harness, --transport, --grading-provider, --timeout N, --sync-tasks, --no-api-key",
             "  precedence: the flag, then CLAUDITOR_HARNESS / CLAUDITOR_TRANSPORT / CLAUDITOR_GRADING_PROVIDER, then "
             "the spec's field, then auto", "",
             "exit codes (clauditor's): 0 passed, 1 the skill failed its bar, 2 input error (a bad flag, no such "
             "skill, an invalid spec, missing credentials), 3 API error (a grade could not be judged)"]
    return "\n".join(lines)


def _say(text: str) -> None:
    write_line(sys.stderr, f"skillmake clauditor: {text}")
