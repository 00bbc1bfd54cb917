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
import sys
from collections.abc import Callable

from skillmake.commands.argparser import Parser
from skillmake.commands.clauditor_common import INPUT_ERROR, clauditor_exit, say
from skillmake.commands.clauditor_grade import grade, triggers
from skillmake.commands.clauditor_validate import validate
from skillmake.core.console import write_line
from skillmake.core.errors import EXIT_INVALID, EXIT_OK, SkillmakeError, UsageError, did_you_mean

__all__ = ["clauditor_exit", "main"]

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
        say(exc.message + (f"\n  hint: {exc.hint}" if exc.hint else ""))
        return INPUT_ERROR
    except SkillmakeError as exc:
        say(exc.render())
        return clauditor_exit(int(getattr(exc, "exit_code", EXIT_INVALID)))


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


RUNNERS: dict[str, Callable[[argparse.Namespace], int]] = {"grade": grade, "validate": validate,
                                                           "triggers": triggers}


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


