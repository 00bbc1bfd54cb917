"""Captured-output mode, clauditor's `grade --output FILE`: grade an output that already exists with one case's
checks and judges, without running the agent (nothing is staged, no trial runs).

`skillmake grade --output FILE [SPEC] [--case ID]` prints the grade as a run prints one and exits as clauditor
does: 0 when it passes, 1 when it does not (a failed check or judge, or a judge that gave no verdict), 2 for an
invalid spec, 3 for a bad command line or a judge with no credentials.

Such a grade is not stored: it is no trial of the skill (no agent ran, so there is no trial key to file it under),
and a record would put an output of unknown origin into the reports, the cell views and the history. Grading the
same file again calls the judges again, as clauditor does.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from skillmake.commands.argparser import Parser, parsed
from skillmake.core.console import paint, write_line
from skillmake.core.errors import EXIT_FAILED, EXIT_INVALID, EXIT_OK, EXIT_USAGE, SkillmakeError, UsageError
from skillmake.run.project import Project
from skillmake.spec.model import Case, Spec
from skillmake.store.objects import Store

ARM = "captured"  # stands where a run's line names the arm: this output came from no arm of the spec
# clauditor's own words (cli/grade.py), kept verbatim: its users grep CI logs for them.
INPUT_FILES_WARNING = "WARNING: --output bypasses the runner; input_files declaration is ignored."


@dataclass(frozen=True, slots=True, kw_only=True)
class CapturedGrade:
    """The verdict on one captured output: what a grade record would hold, without the record."""

    outcome: str  # pass, fail or judge_error
    expectations: tuple[dict[str, Any], ...]
    score: float | None
    error: str | None
    judge_calls: int
    seconds: float


def grade_output(project: Project, spec: Spec, case: Case, data: bytes) -> CapturedGrade:
    """Run `case`'s checks and judges over `data`, as a run grades a trial's output.

    The output is the text the checks read; when the case names an `output_file`, it is that file too, so the
    checks that read the file see it. grade.py's own verdict is used, over a scratch store that dies with the
    call: the project's store is never written."""
    from skillmake.run import grade

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="skillmake-captured-") as scratch_root:
        scratch = dataclasses.replace(project, store=Store(scratch_root))
        digest = scratch.store.put(data)
        files = {case.output_file: digest} if case.output_file else {}
        trial = {"outcome": "completed", "outputs": {"output": digest, "files": files}}
        expectations, score, _usage, outcome, error, calls = grade._judge_trial(scratch, spec, case, trial, None)
    return CapturedGrade(outcome=outcome, expectations=tuple(expectations), score=score, error=error,
                         judge_calls=calls, seconds=time.monotonic() - t0)


def choose_spec(project: Project, wanted: str | None) -> Spec:
    """The spec named by path or name, or the project's only one."""
    if wanted is None:
        if len(project.specs) == 1:
            return project.specs[0]
        names = ", ".join(sorted(s.name for s in project.specs))
        raise UsageError(f"grade --output: which spec? the project has {len(project.specs)} ({names})",
                         hint="usage: skillmake grade --output FILE SPEC [--case ID]")
    path = os.path.abspath(wanted)
    for spec in project.specs:
        if spec.name == wanted or os.path.abspath(spec.path) == path:
            return spec
    names = ", ".join(sorted(s.name for s in project.specs))
    raise UsageError(f"grade --output: no spec {wanted!r}", hint=f"the specs are: {names}")


def choose_case(spec: Spec, wanted: str | None) -> Case:
    """The case named by id, or the spec's only one (a clauditor spec always has one)."""
    ids = ", ".join(c.id for c in spec.cases)
    if wanted is None:
        if len(spec.cases) == 1:
            return spec.cases[0]
        raise UsageError(f"grade --output: spec {spec.name} has {len(spec.cases)} cases; which one?",
                         hint=f"add --case ID (one of: {ids})")
    for case in spec.cases:
        if case.id == wanted:
            return case
    raise UsageError(f"grade --output: spec {spec.name} has no case {wanted!r}", hint=f"the cases are: {ids}")


def render(spec: Spec, case: Case, verdict: CapturedGrade, output: str) -> list[str]:
    """The lines a run prints for a grade: the task-like name, the outcome and the time, then what failed."""
    stream = sys.stdout
    head = (f"grade:{spec.name}/{case.id}/{ARM}  {paint(verdict.outcome, verdict.outcome, stream)}  "
            f"{verdict.seconds:.1f}s  (output {output}; not stored)")
    lines = [head]
    for item in verdict.expectations:
        if not item["passed"]:
            lines.append(f"  ✗ {item['text']} — {item['evidence']}")
    if verdict.error:
        lines.append(f"  {verdict.outcome}: {verdict.error}")
    return lines


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="skillmake grade", description="Grade an existing output file with a case's checks and judges, "
                                            "without running the agent (clauditor's grade --output).",
        epilog="exit: 0 pass, 1 fail or judge error, 2 invalid spec, 3 bad command line or judge credentials")
    parser.add_argument("--output", required=True, metavar="FILE", help="the captured output to grade")
    parser.add_argument("spec", nargs="?", metavar="SPEC", help="a spec file or name (default: the only spec)")
    parser.add_argument("--root", metavar="DIR", help="the project root (default: found upward from here)")
    parser.add_argument("--case", metavar="ID", help="the case whose checks and judges apply (default: the only one)")
    # clauditor's `grade --model` (and --grading-provider), under skillmake's own names and precedence
    parser.add_argument("--judge-model", metavar="M", help="the judges' model, for this grade only")
    parser.add_argument("--judge-provider", metavar="P", help="the judges' provider, for this grade only")
    return parser


def main(args: list[str]) -> int:
    """`skillmake grade --output FILE [SPEC] [--case ID]`; the front end dispatches here when --output is given
    (a bare `grade` stays doit's task group)."""
    opts = parsed(_parser(), args)
    if isinstance(opts, int):
        return opts
    if opts.root is not None:
        if not os.path.isdir(opts.root):
            _err(f"skillmake: --root {opts.root}: no such folder")
            return EXIT_USAGE
        os.environ["SKILLMAKE_ROOT"] = os.path.abspath(opts.root)  # what project_root() reads, as the front end does
    try:
        from skillmake.spec import overrides

        try:
            overrides.set_command_line({"judge_model": opts.judge_model, "judge_provider": opts.judge_provider})
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        return _grade(opts.output, opts.spec, opts.case)
    except UsageError as exc:
        _err(f"skillmake: {exc.render()}")
        return EXIT_USAGE
    except SkillmakeError as exc:
        _err(f"skillmake: {exc.render()}")
        return int(getattr(exc, "exit_code", EXIT_INVALID))


def _grade(output: str, wanted_spec: str | None, wanted_case: str | None) -> int:
    try:
        with open(output, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise UsageError(f"grade --output {output}: {exc.strerror or exc}",
                         hint="give the file holding the output to grade") from None
    from skillmake.commands.specs import project_root

    spec_file = wanted_spec if wanted_spec and os.path.isfile(wanted_spec) else None
    project = Project.open(project_root(), files=[os.path.abspath(spec_file)] if spec_file else None)
    if project.broken:
        from skillmake.spec.validate import Validation, render_text

        _err(render_text(Validation(errors=[e for errs in project.broken.values() for e in errs])))
        return EXIT_INVALID
    spec = choose_spec(project, wanted_spec)
    case = choose_case(spec, wanted_case)
    if case.input_files:
        _err(INPUT_FILES_WARNING)
    if case.has_judge:
        from skillmake.run.judges.preflight import judge_problems

        problems = judge_problems([spec])
        if problems:
            _err("\n".join(f"skillmake: {p}" for p in problems))
            return EXIT_USAGE
    verdict = grade_output(project, spec, case, data)
    for line in render(spec, case, verdict, output):
        write_line(sys.stdout, line)
    return EXIT_OK if verdict.outcome == "pass" else EXIT_FAILED


def _err(text: str) -> None:
    write_line(sys.stderr, text)


if __name__ == "__main__":  # until the front end wires `skillmake grade --output`
    sys.exit(main(sys.argv[1:]))
