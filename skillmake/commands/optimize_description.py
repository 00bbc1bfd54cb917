"""`skillmake optimize-description [SPEC]`: skill-creator's description loop on a spec's trigger_tests — split the
queries into train and test, evaluate the description, ask a model for a better one from the train failures,
repeat, keep the best by test score — incremental: every description is evaluated once (its trials are keyed by its
text) and every proposal asked for once (cached by its whole request). SKILL.md changes only with --apply."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from skillmake.commands import argv as cmdline
from skillmake.commands.framing import named_spec, run_command, say
from skillmake.core import fstree, runlock
from skillmake.core.console import write_line
from skillmake.core.errors import (
    EXIT_CAPPED,
    EXIT_FAILED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    SkillmakeError,
    UsageError,
)
from skillmake.run import budget
from skillmake.run.project import Project
from skillmake.spec import overrides
from skillmake.spec.model import Spec, TriggerTests

if TYPE_CHECKING:
    from skillmake.run.judges.resolve import Choice

OPTIONS = (
    cmdline.Opt("", "max-iterations", "max_iterations", "value", help="rounds at most (default 5)", metavar="N"),
    cmdline.Opt("", "holdout", "holdout", "value", help="share of each class held out as the test set (default "
                "0.4; 0: no test set, best by train score)", metavar="F"),
    cmdline.Opt("", "seed", "seed", "value", help="the split's random seed (default 42)", metavar="N"),
    cmdline.Opt("", "runs", "runs", "value", help="runs per query (default: trigger_tests.runs)", metavar="N"),
    cmdline.Opt("", "threshold", "threshold", "value", help="trigger rate a query needs (default: "
                "trigger_tests.threshold)", metavar="F"),
    cmdline.Opt("", "model", "model", "value", help="the improver's model (default: the spec's judge)", metavar="M"),
    cmdline.Opt("j", "jobs", "jobs", "value", help="trigger trials at once, also -n N (default: $SKILLMAKE_JOBS, "
                "the project's jobs, else 4)", metavar="N"),
    cmdline.Opt("n", "", "jobs", "value", metavar="N"),
    cmdline.Opt("", "description", "description", "value", help="start from this description instead of the "
                "skill's", metavar="TEXT"),
    cmdline.Opt("", "max-cost", "max_cost", "value", help="a spending cap in US dollars: refuse to start when the "
                "first round's estimate is over it (exit 3), start no trial that would cross it and end the loop "
                "(exit 6)", metavar="USD"),
    cmdline.Opt("", "apply", "apply", help="write the best description into the skill's frontmatter"),
    cmdline.Opt("o", "output", "output", "value", help="also write the result (JSON) to FILE", metavar="FILE"),
    cmdline.Opt("", "format", "format", "value", help="text (default), or json: the result file's content",
                metavar="FORMAT"),
    cmdline.Opt("h", "help", "help", help="show this help"),
)
DEFAULT_JOBS = 4
USAGE = "usage: skillmake optimize-description [SPEC] [OPTIONS]"
HELP = f"""{USAGE}

Improve the skill's description on its trigger_tests, as skill-creator's run_loop does: split the queries into
train and test (seeded, stratified), evaluate the description on both, ask a model for a better one from the
train failures and the earlier attempts (never the test results), evaluate it, and repeat until every train
query passes or --max-iterations; the best description is the one with the best test score.

Every description is evaluated once: its trigger trials are keyed by its text, so running the loop again, or
coming back to a description tried before, makes no agent call; each proposal is cached by its whole request, so
a second identical run asks the model nothing either. SKILL.md is never changed without --apply.

{cmdline.help_table([("options", [o for o in OPTIONS if o.long])])}

Writes .skillmake/reports/<spec>/description-optimization.json (schemas/description-optimization.schema.json).
Exit: 0 the loop ran; 1 a trigger trial or the improver failed, or --apply could not write; 2 invalid spec or no
runnable trigger_tests; 3 usage (or the improver has no credentials, or the first round's estimate is over
--max-cost); 5 no spec found; 6 the spending cap stopped the loop."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    spec: str | None = None
    max_iterations: int = 5
    holdout: float = 0.4
    seed: int = 42
    runs: int | None = None
    threshold: float | None = None
    model: str | None = None
    jobs: int | None = None  # None: $SKILLMAKE_JOBS, else the project's `jobs`, else 4
    description: str | None = None
    apply: bool = False
    output: str | None = None
    format: str = "text"
    max_cost: str | None = None


class Refused(SkillmakeError):
    """The spec cannot be optimised as it is (exit 2): no trigger tests, or an agent that shows no activation."""

    exit_code = EXIT_INVALID


def main(args: list[str]) -> int:
    return run_command("optimize-description", args, parse=parse, run=run, help_text=HELP)


def parse(args: list[str]) -> Options | None:
    """The command line as Options; None for --help. UsageError (with a did-you-mean) for anything wrong."""
    values, positional = cmdline.parse_options(list(args), OPTIONS, command="optimize-description")
    if values.get("help"):
        return None
    if len(positional) > 1:
        raise UsageError(f"one spec at a time, not {len(positional)}: {' '.join(positional)}", hint=USAGE)
    fmt = str(values.get("format", "text"))
    if fmt not in ("text", "json"):
        raise UsageError(f"--format must be text or json, not {fmt!r}", hint=USAGE)
    description = values.get("description")
    if description is not None and not str(description).strip():
        raise UsageError("--description needs a text", hint=USAGE)
    holdout = _share(values, "holdout")
    seed = _whole(values, "seed", signed=True)
    return Options(spec=positional[0] if positional else None,
                   max_iterations=_whole(values, "max_iterations") or 5,
                   holdout=0.4 if holdout is None else holdout, seed=42 if seed is None else seed,
                   runs=_whole(values, "runs"), threshold=_share(values, "threshold", above_zero=True),
                   model=values.get("model") or None, jobs=_whole(values, "jobs"), description=description,
                   apply=bool(values.get("apply")), output=values.get("output"), format=fmt,
                   max_cost=values.get("max_cost"))


def _whole(values: dict[str, object], name: str, *, signed: bool = False) -> int | None:
    """The value of --NAME as a whole number (above 0 unless `signed`); None when not given."""
    raw = values.get(name)
    if raw is None:
        return None
    text = str(raw)
    digits = text[1:] if signed and text.startswith("-") else text
    if not digits.isdigit() or (not signed and int(text) < 1):
        shown = "--" + name.replace("_", "-")
        raise UsageError(f"{shown} needs a whole number{'' if signed else ' above 0'}, not {text!r}", hint=USAGE)
    return int(text)


def _share(values: dict[str, object], name: str, *, above_zero: bool = False) -> float | None:
    """The value of --NAME as a share: 0 ≤ F < 1, or 0 < F ≤ 1 with `above_zero`; None when not given."""
    raw = values.get(name)
    if raw is None:
        return None
    try:
        value = float(str(raw))
    except ValueError:
        value = -1.0
    if not (0 < value <= 1 if above_zero else 0 <= value < 1):
        bounds = "above 0 and at most 1" if above_zero else "from 0 up to (not including) 1"
        raise UsageError(f"--{name} needs a number {bounds}, not {raw!r}", hint=USAGE)
    return value


def run(opts: Options) -> int:
    from skillmake.run import process
    from skillmake.run.project import new_run_id
    from skillmake.spec.config import find_root
    from skillmake.triggers import display, loop, result
    from skillmake.triggers.improve import improver_for
    from skillmake.triggers.keys import trigger_keys
    from skillmake.triggers.split import split

    given = {"judge_model": opts.model, "max_cost": opts.max_cost}  # --model: the improver, chosen as a judge is
    if any(given.values()):
        overrides.set_command_line({k: v for k, v in given.items() if v})
    project = Project.open(find_root())
    spec = _spec(project, opts.spec)
    if spec is None:
        return EXIT_INVALID
    tests = _tests(spec, opts)
    improver = improver_for(spec)
    if opts.max_iterations > 1:
        _check_improver(spec)
    offered = trigger_keys(project).offered(spec, tests)
    original = offered.description
    with open(spec.skill.skill_md, encoding="utf-8") as f:
        content = f.read()
    parts = split(tests.queries, holdout=opts.holdout, seed=opts.seed)
    run_id = new_run_id()
    gate = budget.gate(project)
    if gate is not None:  # before any call: the first round's trigger trials at their stored mean cost
        estimate = len(tests.queries) * tests.runs * budget.trigger_estimate(project, spec.name)
        if estimate > gate.ledger.cap + 1e-9:
            _err(f"{len(tests.queries) * tests.runs} trigger trials of the first round would cost est. "
                 f"${estimate:.4f}, over the spending cap of {budget.usd(gate.ledger.cap)}; nothing was run — lower "
                 f"--runs or raise --max-cost")
            return EXIT_USAGE
    runlock.acquire(project.state_dir, what=f"skillmake optimize-description {spec.name}"[:80],
                    on_wait=lambda who: _err(f"waiting for {who} to finish (one run per project at a time)"))
    process.install_interrupt_handlers(raise_keyboard_interrupt=True)  # Ctrl-C stops the trials' processes
    fstree.remove_tree(project.work_dir)  # what killed runs left; no process of theirs may write there
    shown = sys.stdout if opts.format == "text" else sys.stderr
    write_line(shown, f"optimize-description {spec.name}: {len(tests.queries)} queries, {len(parts.train)} train / "
                      f"{len(parts.test)} test (holdout {opts.holdout:g}, seed {opts.seed}), {tests.runs} run(s) "
                      f"each, threshold {tests.threshold:g}; improver {improver.choice.provider} "
                      f"{improver.choice.model}")
    outcome = loop.run(project, spec, tests, parts, start=opts.description or original,
                       skill=loop.Skill(name=offered.name, content=content), improver=improver,
                       max_iterations=opts.max_iterations, jobs=_jobs(project, opts), run_id=run_id,
                       say=lambda it: display.say_iteration(shown, it),
                       progress=display.progress if sys.stderr.isatty() else None, gate=gate)
    head = _head(project, spec, tests, improver.choice, name=offered.name, run_id=run_id)
    data = result.build(outcome, head=head, original=original, holdout=opts.holdout, seed=opts.seed,
                        train=[q.id for q in parts.train], test=[q.id for q in parts.test])
    problems = [f"iteration {it['iteration']}: {it['errors']} trigger trial(s) ended in error or timeout (tried "
                f"again next run); first, {it['first_error']}" for it in data["iterations"] if it["errors"]]
    if outcome.error:
        problems.append(outcome.error)
    applied_note = _apply(spec, data, problems) if opts.apply else None
    path = result.path_of(project.reports_dir, spec.name)
    result.write(path, data)
    if opts.output:
        result.write(Path(os.path.abspath(opts.output)), data)
    if opts.format == "json":
        sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        for line in display.summary(data, written=os.path.relpath(path, project.root), applied=applied_note):
            write_line(sys.stdout, line)
    for problem in problems:
        _err(problem)
    note = gate.note("trigger trials") if gate is not None else None
    if note is not None:
        _err(note)
        return EXIT_CAPPED
    return EXIT_FAILED if problems else EXIT_OK


def _head(project: Project, spec: Spec, tests: TriggerTests, choice: Choice, *, name: str, run_id: str
          ) -> dict[str, Any]:
    """The result document's first fields: what was optimised, on which agent, with which improver."""
    from skillmake.run.keys import resolved_model

    return {"spec": spec.name, "skill": name, "skill_md": os.path.relpath(spec.skill.skill_md, project.root),
            "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "run_id": run_id,
            "agent": {"kind": tests.agent.kind, "model": resolved_model(tests.agent)},
            "improver": {"provider": choice.provider, "model": choice.model}, "runs": tests.runs,
            "threshold": tests.threshold}


def _jobs(project: Project, opts: Options) -> int:
    """Trigger trials at once: -j, else $SKILLMAKE_JOBS, else the project's `jobs`, else 4."""
    if opts.jobs is not None:
        return opts.jobs
    given = overrides.overridden("jobs")
    if given is not None:
        return int(given.value)
    return (project.config.jobs if project.config else None) or DEFAULT_JOBS


def _apply(spec: Spec, data: dict[str, Any], problems: list[str]) -> str:
    """--apply: write the best description into the skill's file, unless something went wrong (the scores may be
    incomplete); what happened, as the last line of the summary. A refusal joins `problems`."""
    from skillmake.triggers.apply import ApplyRefused, apply

    if problems:
        return f"{data['skill_md']} not changed: the loop did not finish cleanly (see below); run it again"
    try:
        data["applied"] = apply(spec.skill.skill_md, data["best_description"])
    except ApplyRefused as exc:
        problems.append(exc.render())
        return f"{data['skill_md']} not changed"
    if not data["applied"]:
        return f"{data['skill_md']} already holds the best description; not changed"
    return f"wrote the best description into {data['skill_md']} (its frontmatter's description only)"


def _spec(project: Project, given: str | None) -> Spec | None:
    """The spec named (or at the path) `given`; with none given, the only spec with trigger tests. None after
    printing the errors of a spec that is invalid."""
    specs = {s.name: s for s in project.specs}
    if given is None:
        with_tests = [s for s in project.specs if s.trigger_tests is not None]
        if len(with_tests) == 1:
            return with_tests[0]
        if not with_tests and len(specs) == 1:
            return next(iter(specs.values()))  # it says what is missing
        names = ", ".join(sorted(s.name for s in with_tests or project.specs))
        raise UsageError("name the spec whose description to optimise", hint=f"{USAGE}\n  specs: {names}")
    return named_spec("optimize-description", project, given)


def _tests(spec: Spec, opts: Options) -> TriggerTests:
    """The spec's trigger tests with this run's --runs and --threshold; Refused when there are none to run."""
    tests = spec.trigger_tests
    if tests is None:
        raise Refused(f"spec {spec.name} has no trigger_tests: the description is optimised on them",
                      hint="add trigger_tests to the spec: should_trigger and should_not_trigger queries and a CLI "
                           "agent, e.g.\n  trigger_tests:\n    agent: {kind: claude-code}\n    should_trigger: [...]\n"
                           "    should_not_trigger: [...]\n  (docs/triggers.md)")
    if not tests.runnable:
        raise Refused(f"spec {spec.name}: trigger tests run on the {tests.agent.kind} agent, which shows no skill "
                      "activation", hint="set trigger_tests.agent to a CLI agent that does: {kind: claude-code} or "
                                         "{kind: codex}")
    if spec.skill.kind not in ("folder", "command"):
        raise Refused(f"spec {spec.name}: its skill is a {spec.skill.kind} file, which has no description to optimise",
                      hint="point `skill:` at a SKILL.md folder or a command .md")
    return dataclasses.replace(tests, runs=tests.runs if opts.runs is None else opts.runs,
                               threshold=tests.threshold if opts.threshold is None else opts.threshold)


def _check_improver(spec: Spec) -> None:
    """The improver's credentials (or CLI) before any trial is paid for: the judges' own preflight, asked about a
    spec whose only case has a judge."""
    from skillmake.run.judges import judge_problems
    from skillmake.spec.model import Case

    probe = dataclasses.replace(spec, cases=(Case(id="describe", index=0, rubric="(describe)"),))
    problems = [p.replace("the judge", "the improver", 1) for p in judge_problems([probe])]
    if problems:
        raise UsageError("\n".join(problems), hint="the improver is chosen as the spec's judge is (judge.provider, "
                                                   "judge.model, $SKILLMAKE_JUDGE_MODEL), or by --model")


def _err(text: str) -> None:
    say("optimize-description", text)
