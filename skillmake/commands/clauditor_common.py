"""What the `skillmake clauditor` commands share: clauditor's exit codes, finding the skill's spec, and the skillmake
run each command makes (clauditor.py reads the command line; clauditor_grade.py and clauditor_validate.py run the
commands)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import Any

from skillmake.core.console import write_line
from skillmake.core.errors import EXIT_FAILED, EXIT_INVALID, EXIT_NO_SPECS, EXIT_OK, EXIT_USAGE, UsageError
from skillmake.run.project import Project
from skillmake.spec.model import Spec

# clauditor's exit codes (docs/cli-reference.md, "Exit codes").
PASSED, SIGNAL_FAILED, INPUT_ERROR, API_ERROR = 0, 1, 2, 3
_NO_KEY_NOTICE = ("skillmake clauditor: --transport cli implies --no-api-key for the skill's runs: ANTHROPIC_API_KEY "
                  "and ANTHROPIC_AUTH_TOKEN are not passed to claude (pass --transport api to keep them)")


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


def open_project() -> Project:
    from skillmake.commands.specs import project_root

    return Project.open(project_root())


def find_spec(opts: argparse.Namespace) -> Spec | None:
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
        return _loaded(open_project(), [path], f"--eval {opts.eval}")
    project = open_project()
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
        say(f"the spec of {what} is invalid ({os.path.relpath(path)}); fix it first")
        return None
    for spec in project.specs:
        if spec.path == path:
            return spec
    raise UsageError(f"{what}: {os.path.relpath(path)} is not a spec of this project",
                     hint=f"it must be under the project root ({project.root}) and not excluded by its config")


def run_flags(opts: argparse.Namespace, spec: Spec) -> list[str]:
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


def run_skillmake(argv: list[str], *, only: str, opts: argparse.Namespace) -> int:
    """A skillmake run (or `explain …`) of the argv built here; with --json, its lines go to stderr."""
    from skillmake.commands import runner

    stream = contextlib.redirect_stdout(sys.stderr) if opts.json else contextlib.nullcontext()
    with stream:
        try:
            return runner.run_with(argv, only=only)
        except SystemExit as exc:  # doit's loader stopping the run (a judge with no credentials: 3)
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE


def write_clauditor_iteration(spec: Spec) -> None:
    """clauditor's .clauditor/iteration-N/<skill>/ files of this grade (clauditor_iteration.py), said as it says."""
    from skillmake.commands.clauditor_iteration import write_iteration
    from skillmake.engine.tasks import current_root

    try:
        written = write_iteration(current_root(), spec)
    except OSError as exc:  # the grade stands; a CI step reading the files will say what is missing
        say(f"could not write clauditor's .clauditor/ files: {exc}")
        return
    if written is not None:
        write_line(sys.stderr, f"Workspace: {os.path.relpath(written)}")


def report_of(spec: Spec) -> dict[str, Any] | None:
    from skillmake.engine.tasks import current_root, project_at
    from skillmake.results import read_report

    return read_report(project_at(current_root()).reports_dir / spec.name / "report.json")


def say(text: str) -> None:
    write_line(sys.stderr, f"skillmake clauditor: {text}")
