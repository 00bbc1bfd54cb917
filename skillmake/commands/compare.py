"""`skillmake compare SPEC [ARM_A ARM_B | [ARM] --against REV|DIR | [ARM] --previous]`: the blind A/B comparison
of two arms, or of the skill now against another version of it, printed as a table and written as JSON."""

from __future__ import annotations

import datetime as dt
import difflib
import fnmatch
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import orjson

from skillmake.commands import argv as cmdline
from skillmake.commands.framing import named_spec, run_command, say
from skillmake.core import fstree, runlock
from skillmake.core.console import write_line
from skillmake.core.errors import EXIT_CAPPED, EXIT_FAILED, EXIT_INVALID, EXIT_OK, EXIT_USAGE, UsageError
from skillmake.run import budget
from skillmake.run.project import Project
from skillmake.spec import overrides
from skillmake.spec.model import Case, Spec

OPTIONS = (
    cmdline.Opt("k", "case", "cases", "multi", help="only this case: an id or a glob (repeatable)", metavar="CASE"),
    cmdline.Opt("", "against", "against", "value", metavar="REV|DIR",
                help="the skill now against another version: a git revision, or a folder holding it"),
    cmdline.Opt("", "previous", "previous",
                help="the skill now against the version its last recorded report ran with"),
    cmdline.Opt("", "judge-model", "judge_model", "value", help="the comparing judge's model", metavar="M"),
    cmdline.Opt("", "judge-provider", "judge_provider", "value", help="the comparing judge's provider", metavar="P"),
    cmdline.Opt("j", "jobs", "jobs", "value", help="judge calls at once (default 4)", metavar="N"),
    cmdline.Opt("", "max-cost", "max_cost", "value", help="a spending cap in US dollars: refuse to start when the "
                "missing trials' estimate is over it (exit 3), start no trial or judge call that would cross it "
                "(exit 6)", metavar="USD"),
    cmdline.Opt("", "format", "format", "value", help="text (default), or json: the result file's content",
                metavar="FORMAT"),
    cmdline.Opt("o", "output", "output", "value", help="also write the result (JSON) to FILE", metavar="FILE"),
    cmdline.Opt("h", "help", "help", help="show this help"),
)
USAGE = "usage: skillmake compare SPEC [ARM_A ARM_B | [ARM] --against REV|DIR | [ARM] --previous] [OPTIONS]"
HELP = f"""{USAGE}

Blind A/B comparison. A judge sees the case's task and two outputs labelled only "Output 1" and "Output 2";
every pair (trial k of A against trial k of B) is judged twice, once in each order, and counts for a side only
when both orders agree. Trials come from the store; the ones missing are run first. Verdicts are cached by the
outputs' content, so a rerun asks nothing and a new case asks only about its own pairs.

  SPEC                    A = with_skill, B = without_skill (the spec needs `baseline: true`)
  SPEC ARM_A ARM_B        any two arms, variants included
  SPEC [ARM] --against X  the skill now (A) against X (B): a folder holding the skill, else a git revision
  SPEC [ARM] --previous   the skill now (A) against the version of its last recorded report that differs

{cmdline.help_table([("options", OPTIONS)])}

Writes .skillmake/reports/<spec>/comparisons/<a>-vs-<b>.json (schemas/comparison.schema.json).
Exit: 0 every pair judged; 1 some pair could not be (a trial error or a judge error); 2 invalid spec;
3 usage (or the missing trials' estimate is over --max-cost); 5 no spec found; 6 the spending cap stopped it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    spec: str | None
    arms: tuple[str, ...]
    cases: tuple[str, ...] = ()
    against: str | None = None
    previous: bool = False
    judge_model: str | None = None
    judge_provider: str | None = None
    jobs: int = 4
    format: str = "text"
    output: str | None = None
    max_cost: str | None = None


def main(args: list[str]) -> int:
    return run_command("compare", args, parse=parse, run=run, help_text=HELP)


def parse(args: list[str]) -> Options | None:
    """The command line as Options; None for --help. UsageError (with a did-you-mean) for anything wrong."""
    values, positional = cmdline.parse_options(list(args), OPTIONS, command="compare")
    if values.get("help"):
        return None
    if values.get("against") is not None and values.get("previous"):
        raise UsageError("--against and --previous each name the other version; give one", hint=USAGE)
    fmt = str(values.get("format", "text"))
    if fmt not in ("text", "json"):
        raise UsageError(f"--format must be text or json, not {fmt!r}", hint=USAGE)
    jobs = str(values.get("jobs", "4"))
    if not (jobs.isdigit() and int(jobs) > 0):
        raise UsageError(f"--jobs needs a whole number above 0, not {jobs!r}", hint=USAGE)
    return Options(spec=positional[0] if positional else None, arms=tuple(positional[1:]),
                   cases=tuple(values.get("cases") or ()), against=values.get("against"),
                   previous=bool(values.get("previous")), judge_model=values.get("judge_model"),
                   judge_provider=values.get("judge_provider"), jobs=int(jobs), format=fmt,
                   output=values.get("output"), max_cost=values.get("max_cost"))


def run(opts: Options) -> int:
    from skillmake.run.project import new_run_id
    from skillmake.spec.config import find_root

    given = {"judge_model": opts.judge_model, "judge_provider": opts.judge_provider, "max_cost": opts.max_cost}
    overrides.set_command_line({k: v for k, v in given.items() if v})  # the judge follows, as in a run
    project = Project.open(find_root())
    spec = _spec(project, opts.spec)
    if spec is None:
        return EXIT_INVALID
    cases = _cases(spec, opts.cases)
    run_id = new_run_id()
    runlock.acquire(project.state_dir, what=" ".join(["skillmake compare", spec.name, *opts.arms])[:80],
                    on_wait=lambda who: _err(f"waiting for {who} to finish (one run per project at a time)"))
    from skillmake.run import process

    process.install_interrupt_handlers(raise_keyboard_interrupt=True)  # Ctrl-C stops the trials' processes
    project.work_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="compare-", dir=project.work_dir))  # other versions of the skill
    try:
        return _compare(project, spec, cases, opts, scratch=scratch, run_id=run_id)
    finally:
        fstree.remove_tree(scratch)


def _compare(project: Project, spec: Spec, cases: list[Case], opts: Options, *, scratch: Path, run_id: str) -> int:
    from skillmake.compare import document, outputs, pairs, preflight, table
    from skillmake.compare.sides import resolve

    a, b = resolve(project, spec, list(opts.arms), against=opts.against, previous=opts.previous, scratch=scratch)
    sides = {"A": a, "B": b}
    preflight.check_choice(spec, cases)
    cells = outputs.plan(project, sides, cases, spec.trials)
    gate = budget.gate(project)
    if cells.missing:
        preflight.check_judge(spec, cases)  # before paying for any trial: the comparison would end without a verdict
        if gate is not None:  # before any call: the missing trials' estimate against the cap
            estimate = sum(gate.estimator.trial(SimpleNamespace(spec=sides[c.side].spec, case=c.case,
                                                                arm=sides[c.side].arm, tkey=c.tkey)).usd or 0.0
                           for c in cells.missing)
            if estimate > gate.ledger.cap + 1e-9:
                _err(f"{len(cells.missing)} trial(s) to run would cost est. ${estimate:.4f}, over "
                     f"the spending cap of {budget.usd(gate.ledger.cap)}; nothing was run — compare fewer cases "
                     f"(-k CASE) or raise --max-cost")
                return EXIT_USAGE
        _err(f"running {len(cells.missing)} trial(s); {cells.reused} reused from the store")
    outputs.run_missing(project, sides, cells, say=_err, gate=gate)
    judging = pairs.judge(project, spec, cases, cells, trials=spec.trials, jobs=opts.jobs, say=_err, gate=gate)
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    data = document.build(spec, a, b, judging, cells, generated=now, run_id=run_id)
    path = document.path_of(project.reports_dir, spec, a, b)
    document.write(path, data)
    if opts.output:
        document.write(Path(os.path.abspath(opts.output)), data)
    if opts.format == "json":
        sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        for line in table.render(data, written=os.path.relpath(path, project.root)):
            write_line(sys.stdout, line)
    note = gate.note("trials or judge calls") if gate is not None else None
    if note is not None:
        _err(note)
        return EXIT_CAPPED
    return EXIT_FAILED if data["summary"]["unjudged"] else EXIT_OK


def _spec(project: Project, given: str | None) -> Spec | None:
    """The spec named (or at the path) `given`; only one in the project: that one. None after printing the
    errors of a spec that is invalid."""
    specs = {s.name: s for s in project.specs}
    if given is None:
        if len(specs) == 1:
            return next(iter(specs.values()))
        raise UsageError("name the spec to compare", hint=f"{USAGE}\n  specs: {', '.join(sorted(specs))}")
    return named_spec("compare", project, given)


def _cases(spec: Spec, wanted: tuple[str, ...]) -> list[Case]:
    if not wanted:
        return list(spec.cases)
    ids = [c.id for c in spec.cases]
    for pattern in wanted:
        if not any(fnmatch.fnmatchcase(i, pattern) for i in ids):
            close = difflib.get_close_matches(pattern, ids, n=1, cutoff=0.6)
            raise UsageError(f"spec {spec.name} has no case {pattern!r}" + (f"; did you mean {close[0]!r}?" if close
                                                                            else ""),
                             hint=f"its cases: {', '.join(ids)}")
    return [c for c in spec.cases if any(fnmatch.fnmatchcase(c.id, p) for p in wanted)]


def _err(text: str) -> None:
    say("compare", text)
