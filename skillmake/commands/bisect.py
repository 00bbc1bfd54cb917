"""`skillmake bisect CASE [--good REV] [--bad REV] [--check ID]`: the first commit of the skill's git history at
which a case's pass rate fell below its threshold (or a chosen check's did), with its diff stat and the evidence."""

from __future__ import annotations

import difflib
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from skillmake.commands import argv as cmdline
from skillmake.commands.framing import run_command, say
from skillmake.core import fstree, runlock
from skillmake.core.console import write_line
from skillmake.core.errors import EXIT_INVALID, EXIT_OK, UsageError, did_you_mean
from skillmake.run.project import Project
from skillmake.spec.model import WITH_SKILL, Arm, Case, Spec

OPTIONS = (
    cmdline.Opt("", "good", "good", "value", metavar="REV",
                help="a revision where the case passes (default: the first commit that has the skill)"),
    cmdline.Opt("", "bad", "bad", "value", metavar="REV", help="a revision where it fails (default: HEAD)"),
    cmdline.Opt("", "check", "check", "value", metavar="ID",
                help="bisect on this check's pass rate (its id, or its text) instead of the case's"),
    cmdline.Opt("", "spec", "spec", "value", metavar="SPEC", help="the spec, when several have the case"),
    cmdline.Opt("", "arm", "arm", "value", metavar="ARM", help="the arm to run it under (default: with_skill)"),
    cmdline.Opt("h", "help", "help", help="show this help"),
)
USAGE = "usage: skillmake bisect [SPEC/]CASE [--good REV] [--bad REV] [--check ID] [--arm ARM]"
HELP = f"""{USAGE}

Finds the first commit of the skill's git history at which the case got worse: its pass rate fell below the
threshold (the spec's adaptive `decide`, else min_pass_rate, else 1.0: every trial must pass), or, with --check,
that check's did. Each version's skill is read from git into a scratch folder (your work tree is not touched);
trials already in the store for a version are reused, so bisecting again costs nothing. The bad end is evaluated
first; the versions in between are assumed to turn bad once.

{cmdline.help_table([("options", OPTIONS)])}

Exit: 0 found; 2 invalid spec; 3 usage (an unknown case or revision, a bad end that passes, a good end that
fails, a trial that could not run); 5 no spec found."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    case: str
    good: str | None = None
    bad: str | None = None
    check: str | None = None
    spec: str | None = None
    arm: str = WITH_SKILL


def main(args: list[str]) -> int:
    return run_command("bisect", args, parse=parse, run=run, help_text=HELP)


def parse(args: list[str]) -> Options | None:
    values, positional = cmdline.parse_options(list(args), OPTIONS, command="bisect")
    if values.get("help"):
        return None
    if len(positional) != 1:
        raise UsageError("name one case to bisect" if not positional else
                         f"name one case, not {len(positional)}: {' '.join(positional)}", hint=USAGE)
    case, spec = positional[0], values.get("spec")
    if "/" in case and spec is None:
        spec, case = case.split("/", 1)
    return Options(case=case, good=values.get("good"), bad=values.get("bad"), check=values.get("check"),
                   spec=spec, arm=values.get("arm") or WITH_SKILL)


def run(opts: Options) -> int:
    from skillmake.compare.bisect import bisect, history, render
    from skillmake.run import process
    from skillmake.run.project import new_run_id
    from skillmake.spec.config import find_root

    project = Project.open(find_root())
    if project.broken and _in_broken(project, opts):
        return EXIT_INVALID
    spec, case = _find(project, opts)
    arm = _arm(spec, opts.arm)
    if opts.check is not None:
        _known_check(case, opts.check)
    new_run_id()
    runlock.acquire(project.state_dir, what=f"skillmake bisect {spec.name}/{case.id}"[:80],
                    on_wait=lambda who: say("bisect", f"waiting for {who} to finish (one run per project at a time)"))
    process.install_interrupt_handlers(raise_keyboard_interrupt=True)  # Ctrl-C stops the trials' processes
    top, rel, commits = history(spec, good=opts.good, bad=opts.bad)
    write_line(sys.stdout, f"bisect {spec.name}/{case.id} under {arm.name}: {len(commits)} versions of {rel} from "
                           f"{commits[0][0][:12]} (good) to {commits[-1][0][:12]} (bad)"
                           + (f", on check {opts.check!r}" if opts.check else ""))
    project.work_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="bisect-", dir=project.work_dir))
    try:
        result = bisect(project, spec, case, arm, good=opts.good, bad=opts.bad, check=opts.check, scratch=scratch,
                        say=_step)
    finally:
        fstree.remove_tree(scratch)
    for line in render(result, top=top):
        write_line(sys.stdout, line)
    return EXIT_OK


def _step(line: str) -> None:
    write_line(sys.stdout, "  " + line)


def _find(project: Project, opts: Options) -> tuple[Spec, Case]:
    """The spec and case named: CASE alone when exactly one spec has it."""
    specs = [s for s in project.specs if opts.spec is None or s.name == opts.spec]
    if opts.spec is not None and not specs:
        names = [s.name for s in project.specs]
        close = difflib.get_close_matches(opts.spec, names, n=1, cutoff=0.6)
        raise UsageError(f"no spec named {opts.spec!r}" + (f"; did you mean {close[0]!r}?" if close else ""),
                         hint=f"specs: {', '.join(sorted(names))}")
    having = [s for s in specs if any(c.id == opts.case for c in s.cases)]
    if len(having) > 1:
        raise UsageError(f"case {opts.case!r} is in {len(having)} specs: {', '.join(s.name for s in having)}",
                         hint=f"name one: skillmake bisect {having[0].name}/{opts.case}")
    if not having:
        ids = sorted({c.id for s in specs for c in s.cases})
        close = difflib.get_close_matches(opts.case, ids, n=1, cutoff=0.6)
        raise UsageError(f"no case {opts.case!r}" + (f" in spec {opts.spec}" if opts.spec else "")
                         + (f"; did you mean {close[0]!r}?" if close else ""), hint=f"cases: {', '.join(ids)}")
    spec = having[0]
    return spec, spec.case(opts.case)


def _arm(spec: Spec, name: str) -> Arm:
    for arm in spec.arms:
        if arm.name == name and not arm.skill:  # the baseline: every version of the skill runs it alike
            raise UsageError(f"arm {name} runs without the skill: no version of it can change the arm's result",
                             hint="bisect an arm that uses the skill: "
                                  + ", ".join(a.name for a in spec.arms if a.skill))
        if arm.name == name:
            return arm
    raise UsageError(f"spec {spec.name} has no arm {name!r}", hint=f"its arms: {', '.join(a.name for a in spec.arms)}")


def _known_check(case: Case, check: str) -> None:
    """A --check the case's checks do not name is a usage error before any trial runs (a typo must cost nothing).
    A case with a judge is left to the grade: a judge's expectations are named by what it returns."""
    if case.rubric or case.criteria or case.expectations or case.sections:
        return
    from skillmake.run.checks.describe import describe

    labels = [c.label for c in case.checks]
    if check in labels or check in {c.name or describe(c) for c in case.checks}:
        return
    raise UsageError(f"case {case.id} has no check {check!r}{did_you_mean(check, labels)}",
                     hint=f"its checks: {', '.join(labels) or '(none)'}")


def _in_broken(project: Project, opts: Options) -> bool:
    """When no valid spec has the case (or the spec named is invalid), it may be in an invalid one: print the
    invalid specs' errors (exit 2) rather than "no case"."""
    from skillmake.spec.loader import spec_name_of
    from skillmake.spec.validate import Validation, render_text

    broken = {spec_name_of(path): errors for path, errors in project.broken.items()}
    valid = [s for s in project.specs if opts.spec is None or s.name == opts.spec]
    if any(c.id == opts.case for s in valid for c in s.cases) or (opts.spec is not None and opts.spec not in broken):
        return False
    shown = [e for name, errs in broken.items() if opts.spec is None or name == opts.spec for e in errs]
    write_line(sys.stderr, render_text(Validation(errors=shown)))
    count = 1 if opts.spec is not None else len(broken)
    say("bisect", f"no valid spec has case {opts.case!r}, and {count} spec(s) are invalid: fix them first "
                  "(`skillmake validate`)")
    return True
