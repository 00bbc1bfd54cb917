"""`skillmake rejudge N [SPEC…]` (also `skillmake --rejudge N`): is it the skill or the judge?

Every stored trial of a judged case is judged N more times — the same outputs, the same judge, never an agent
call — and each criterion's N + 1 verdicts per cell (the stored grade is the first) are compared: the flip rate
(cells whose verdicts are not unanimous), the mean minority share, Fleiss' kappa across cells and, for scored
judges, the score's spread. A criterion whose verdict flips is decided by the judge, not the skill.

Repeats are cached (judges/repeats.py): `rejudge 5` twice costs nothing the second time, `rejudge 7` after it
costs 2 more per cell. A command, not a judge: it sits here because the front end dispatches here, and so it
reaches the build layer's plan and selection only inside its functions.
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from skillmake.core import atomic
from skillmake.core.console import write_line
from skillmake.core.errors import EXIT_CAPPED, EXIT_INVALID, EXIT_OK, EXIT_USAGE, SkillmakeError, UsageError
from skillmake.run import budget
from skillmake.run.judges import noise_report, repeats
from skillmake.run.project import Project
from skillmake.spec.model import Arm, Case, Spec

if TYPE_CHECKING:
    from skillmake.engine.plan import Item

USAGE = "usage: skillmake rejudge N [SPEC…] [-k EXPR] [--tag TAG] [--failed] [--case ID] [--format text|json]"
REPORT_FILE = "judge-noise.json"
_CLI_PROVIDERS = frozenset({"claude-code", "codex"})  # their CLIs take no temperature


class _Parser(argparse.ArgumentParser):
    """argparse that raises a UsageError (exit 3, one line, a did-you-mean) instead of exiting 2."""

    def error(self, message: str) -> Any:  # argparse's hook; never returns
        if message.startswith("the following arguments are required"):  # argparse also names the optional SPEC
            message = "say how many more times to judge each stored output: skillmake rejudge N [SPEC…]"
        raise UsageError(f"rejudge: {message}", hint=USAGE)


def _parser() -> _Parser:
    parser = _Parser(prog="skillmake rejudge", allow_abbrev=False,
                     description="Judge the stored outputs of every judged cell N more times (no agent call) and say, "
                                 "per criterion, whether the verdict is the skill's or the judge's: flip rate, "
                                 "minority share, Fleiss' kappa across cells, and the score's spread.",
                     epilog="repeats are cached: asking for the same N again costs no judge call. Writes "
                            ".skillmake/reports/<spec>/judge-noise.json. Exit 0 whatever the noise; 2 an invalid "
                            "spec, 3 a bad command line, a judge without credentials or an estimate over --max-cost, 5 "
                            "no spec, 6 the spending cap stopped it. Every command "
                            "also takes --root DIR, --color and --no-color.")
    parser.add_argument("n", metavar="N", help="how many more times to judge each stored output (≥ 1)")
    parser.add_argument("specs", nargs="*", metavar="SPEC", help="spec names or files (default: every spec)")
    parser.add_argument("-k", dest="k", metavar="EXPR", help="only cells whose spec/case/arm/k name matches EXPR "
                                                             "(pytest's -k, as a run takes it)")
    parser.add_argument("--tag", dest="tags", action="append", default=[], metavar="TAG",
                        help="only cases with this tag (repeatable)")
    parser.add_argument("--failed", action="store_true", help="only the cells that failed last time")
    parser.add_argument("--case", dest="cases", action="append", default=[], metavar="ID",
                        help="only this case (repeatable)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    parser.add_argument("-j", "--jobs", type=int, metavar="N", help="judge calls at once (default: the project's "
                                                                     "jobs setting, else 4)")
    parser.add_argument("--max-flip-rate", type=float, default=0.0, metavar="R",
                        help="call a criterion stable while at most this share of its cells flip (default 0)")
    parser.add_argument("--judge-model", metavar="M", help="the judges' model, for this command only")
    parser.add_argument("--judge-provider", metavar="P", help="the judges' provider, for this command only")
    parser.add_argument("--max-cost", metavar="USD", help="a spending cap in US dollars: refuse to start when the "
                        "estimate is over it (exit 3), make no call that would cross it (exit 6)")
    return parser


def main(args: list[str]) -> int:
    try:
        parser = _parser()
        _check_options(parser, args)
        try:
            opts = parser.parse_intermixed_args(args)
        except SystemExit as exc:  # --help printed
            return EXIT_OK if exc.code in (0, None) else EXIT_USAGE
        return _rejudge(_Options.of(opts))
    except UsageError as exc:
        write_line(sys.stderr, f"skillmake {exc.render()}" if exc.message.startswith("rejudge") else
                   f"skillmake rejudge: {exc.render()}")
        return EXIT_USAGE
    except SkillmakeError as exc:  # no spec (5), a broken configuration (2)
        write_line(sys.stderr, f"skillmake: {exc.render()}")
        return int(getattr(exc, "exit_code", EXIT_INVALID))


def _check_options(parser: argparse.ArgumentParser, args: Sequence[str]) -> None:
    """Refuse an unknown option with the nearest known one (argparse alone only says "unrecognized")."""
    known = parser._option_string_actions  # argparse's table of option strings, read only
    takes_value = {name for name, action in known.items() if action.nargs != 0}
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--":
            return
        if not arg.startswith("-") or arg == "-" or _is_number(arg):
            continue
        name = arg.split("=", 1)[0] if arg.startswith("--") else arg[:2]
        if name in known:
            skip = name in takes_value and "=" not in arg and (arg.startswith("--") or len(arg) == 2)
            continue
        close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
        raise UsageError(f"rejudge: unknown option {name}" + (f"; did you mean {close[0]}?" if close else ""),
                         hint=USAGE)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True, kw_only=True)
class _Options:
    n: int
    specs: tuple[str, ...]
    k: str | None
    tags: tuple[str, ...]
    failed: bool
    cases: tuple[str, ...]
    format: str
    jobs: int | None
    max_flip_rate: float
    judge: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, opts: argparse.Namespace) -> _Options:
        try:
            n = int(opts.n)
        except ValueError:
            raise UsageError(f"rejudge: N must be a whole number ≥ 1 (how many more times to judge each output), "
                             f"not {opts.n!r}", hint=USAGE) from None
        if n < 1:
            raise UsageError(f"rejudge: N must be at least 1, not {n}", hint=USAGE)
        if opts.jobs is not None and opts.jobs < 1:
            raise UsageError(f"rejudge: -j must be at least 1, not {opts.jobs}", hint=USAGE)
        if not 0 <= opts.max_flip_rate <= 1:
            raise UsageError(f"rejudge: --max-flip-rate must be between 0 and 1, not {opts.max_flip_rate}",
                             hint=USAGE)
        if opts.k and opts.k.strip():
            from skillmake.engine import select

            select.parse(opts.k)  # a bad expression is refused before anything loads, as a run refuses it
        return cls(n=n, specs=tuple(opts.specs), k=opts.k, tags=tuple(t for t in opts.tags if t), failed=opts.failed,
                   cases=tuple(opts.cases), format=opts.format, jobs=opts.jobs, max_flip_rate=opts.max_flip_rate,
                   judge={"judge_model": opts.judge_model, "judge_provider": opts.judge_provider,
                          "max_cost": opts.max_cost})

    def selection(self) -> str | None:
        bits = [f"-k {self.k!r}"] if self.k else []
        bits += [f"--tag {t}" for t in self.tags] + (["--failed"] if self.failed else [])
        bits += [f"--case {c}" for c in self.cases]
        return " ".join(bits) or None


# --- which cells ------------------------------------------------------------------------------------------------

@dataclass(slots=True)
class _Cell:
    """A judged cell whose trial is stored: its trial record and grade key, and what its verdicts will be."""

    item: Item
    trial: dict[str, Any]
    grade_key: str

    @property
    def spec(self) -> Spec:
        return self.item.spec

    @property
    def case(self) -> Case:
        return self.item.case

    @property
    def arm(self) -> Arm:
        return self.item.arm

    @property
    def k(self) -> int:
        return self.item.k

    @property
    def name(self) -> str:
        return self.item.name


def _rejudge(opts: _Options) -> int:
    from skillmake.commands.specs import project_root
    from skillmake.core import runlock
    from skillmake.run.project import new_run_id
    from skillmake.spec import overrides

    try:
        overrides.set_command_line({k: v for k, v in opts.judge.items() if v is not None})
    except ValueError as exc:
        raise UsageError(f"rejudge: {exc}", hint=USAGE) from None
    project = Project.open(project_root())  # no spec: NoSpecs (exit 5); a broken config: exit 2
    broken = _say_broken(project)
    specs = _chosen_specs(project, opts.specs, broken)
    runlock.acquire(project.state_dir, what=" ".join(["skillmake rejudge", str(opts.n), *opts.specs])[:80],
                    on_wait=_say_waiting)
    new_run_id()
    cells, skipped = _cells(project, specs, opts)
    work = repeats.gather(project, cells, opts.n)
    if work.todo:
        from skillmake.run.judges.preflight import judge_problems

        needed = {work.cells[key].spec.name: work.cells[key].spec for key, _ in work.todo}
        problems = judge_problems(list(needed.values()))
        if problems:  # before any call, as a run stops before any trial
            write_line(sys.stderr, "\n".join(f"skillmake: {p}" for p in problems))
            return EXIT_USAGE
        work.gate = budget.gate(project)
        if work.gate is not None:  # before any call: the stored grades' mean cost, per judging to make
            estimate = sum(work.gate.estimate(work.cells[key]) for key, _ in work.todo)
            if estimate > work.gate.ledger.cap + 1e-9:
                write_line(sys.stderr, f"skillmake: rejudge: {len(work.todo)} judgings would cost est. ${estimate:.4f} "
                                       f"(mean of the stored grades), over the spending cap of "
                                       f"{budget.usd(work.gate.ledger.cap)}; nothing was judged — ask for fewer "
                                       f"repeats, narrow the cells (SPEC, -k, --tag, --case) or raise --max-cost")
                return EXIT_USAGE
        jobs = opts.jobs or (project.config.jobs if project.config and project.config.jobs else 4)
        grades = len({key for key, _ in work.todo})
        write_line(sys.stderr, f"rejudge: {len(work.todo)} judging(s) to make for {grades} distinct output(s), "
                               f"{min(jobs, len(work.todo))} at a time…")
        work.run(project, jobs)
    generated = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    from skillmake.run.project import current_run_id

    payloads: list[dict[str, Any]] = []
    lines: list[str] = []
    for spec in specs:
        mine = [c for c in cells if c.spec.name == spec.name]
        gone = [s for s in skipped if s[0].split("/", 1)[0] == spec.name]
        if not mine and not gone:
            if opts.specs and not any(c.has_judge for c in spec.cases):
                lines.append(f"{spec.name}: no case has a judge (rubric, expectations, criteria or sections); "
                             "nothing to re-judge")
            continue
        payload = noise_report.build(
            spec, [work.verdicts(c) for c in mine], repeats=opts.n, skipped=gone, calls=work.calls(mine),
            judges=_judges(spec, mine), selection=opts.selection(), max_flip_rate=opts.max_flip_rate,
            generated=generated, run_id=current_run_id())
        path = project.reports_dir / spec.name / REPORT_FILE
        _write(path, payload)
        payloads.append(payload)
        lines.extend(noise_report.render(payload, shown_path=os.path.relpath(path, project.root)))
    total = work.calls(cells)
    if opts.format == "json":
        write_line(sys.stdout, orjson.dumps({"repeats": opts.n, "calls": total, "specs": payloads},
                                            option=orjson.OPT_INDENT_2).decode())
    else:
        if not payloads and not lines:
            lines.append("nothing to re-judge: no selected cell belongs to a case with a judge (rubric, "
                         "expectations, criteria or sections)")
        lines.append(f"judge calls: {total['made']} made, {total['reused']} reused from the store; 0 agent calls")
        for line in lines:
            write_line(sys.stdout, line)
    note = work.gate.note() if work.gate is not None else None
    if note is not None:
        write_line(sys.stderr, f"skillmake: rejudge: {note}")
        return EXIT_CAPPED
    return EXIT_INVALID if broken else EXIT_OK


def _say_waiting(holder: str) -> None:
    write_line(sys.stderr, f"skillmake rejudge: waiting for {holder} to finish…")


def _say_broken(project: Project) -> set[str]:
    """Print the errors of invalid specs (they are left out; the exit code says so); their names."""
    if not project.broken:
        return set()
    from skillmake.spec.loader import spec_name_of
    from skillmake.spec.validate import Validation, render_text

    write_line(sys.stderr, render_text(Validation(errors=[e for errs in project.broken.values() for e in errs])))
    return {spec_name_of(path) for path in project.broken}


def _chosen_specs(project: Project, wanted: Sequence[str], broken: set[str]) -> list[Spec]:
    from skillmake.spec.loader import spec_name_of

    if not wanted:
        return list(project.specs)
    chosen: list[Spec] = []
    names = sorted(s.name for s in project.specs)
    for word in wanted:
        path = os.path.abspath(word)
        spec = next((s for s in project.specs if s.name == word or os.path.abspath(s.path) == path), None)
        if spec is not None:
            if spec not in chosen:
                chosen.append(spec)
            continue
        if word in broken or spec_name_of(word) in broken:
            continue  # its errors are printed; the exit code will be 2
        close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
        raise UsageError(f"rejudge: no spec named {word!r}" + (f"; did you mean {close[0]!r}?" if close else ""),
                         hint=f"the specs are: {', '.join(names)}" if names else USAGE)
    return chosen


def _cells(project: Project, specs: Sequence[Spec], opts: _Options) -> tuple[list[_Cell], list[tuple[str, str]]]:
    """The judged cells the command line selects whose trials are stored, and the ones skipped (name, why)."""
    from skillmake.engine import select
    from skillmake.engine.plan import plan_spec
    from skillmake.run import grade, trial

    expr = select.parse(opts.k) if opts.k and opts.k.strip() else None
    selection = select.Selection(expr=expr, tags=opts.tags)
    _check_cases(specs, opts.cases)
    cells: list[_Cell] = []
    skipped: list[tuple[str, str]] = []
    for spec in specs:
        plan = plan_spec(project, spec)
        failing = select.failed_cells(project, plan) if opts.failed else None
        for item in plan.items:
            wanted = select.matches(selection, item) and (not opts.cases or item.case.id in opts.cases)
            if not item.case.has_judge or not wanted or (failing is not None and item.name not in failing):
                continue
            record = trial.cached(project, item.tkey, trial.timeout_of(spec, item.case)) if item.trial_cached else None
            if record is None:
                skipped.append((item.name, f"its trial is not stored: run it first (skillmake trial:{item.name})"))
            elif record["outcome"] == "cheat":
                skipped.append((item.name, "the agent read forbidden files (cheat): no judge ran on it"))
            else:
                cells.append(_Cell(item=item, trial=record, grade_key=grade.key_for(spec, item.case, record)[0]))
    return cells, skipped


def _check_cases(specs: Sequence[Spec], wanted: Sequence[str]) -> None:
    """Every --case ID must name a case of one of the chosen specs."""
    ids = list(dict.fromkeys(c.id for spec in specs for c in spec.cases))
    for case_id in wanted:
        if case_id not in ids:
            close = difflib.get_close_matches(case_id, ids, n=1, cutoff=0.6)
            where = f"spec {specs[0].name}" if len(specs) == 1 else "the chosen specs"
            raise UsageError(f"rejudge: {where} has no case {case_id!r}"
                             + (f"; did you mean {close[0]!r}?" if close else ""),
                             hint=f"the cases are: {', '.join(ids)}")


def _judges(spec: Spec, cells: Sequence[_Cell]) -> list[dict[str, Any]]:
    """The distinct judges the cells ran on (a case may name its own model), with whether the temperature was sent."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for cell in cells:
        settings = repeats.judge_settings(spec, cell.case)
        sent = settings["temperature"] is not None and settings["provider"] not in _CLI_PROVIDERS
        seen.setdefault((settings["provider"], settings["model"]), {**settings, "temperature_sent": sent})
    return list(seen.values())


def _write(path: Any, payload: dict[str, Any]) -> None:
    from skillmake.spec.schema import validate_record

    validate_record(noise_report.SCHEMA, payload, what=f"judge noise report of {payload['spec']['name']}")
    atomic.write_bytes(path, orjson.dumps(payload, option=orjson.OPT_INDENT_2) + b"\n")
