"""The one exception root, its subclasses, and the documented exit codes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# Exit codes: this table is the one place they are written down. `--help` prints it and the README's
# "## Exit codes" section is generated from it (a test keeps the two equal).
EXIT_OK = 0
EXIT_FAILED = 1  # a threshold or a required case failed, or a task failed
EXIT_INVALID = 2  # a spec or fixture is invalid (validate found errors)
EXIT_USAGE = 3  # bad command line
EXIT_INTERNAL = 4  # an unexpected error inside skillmake (a bug: please report it)
EXIT_NO_SPECS = 5  # nothing to run: no spec, a selection of no cell, no result to report or push
EXIT_CAPPED = 6  # the spending cap stopped the run before every selected trial ran (budget.py)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExitCode:
    code: int
    name: str
    meaning: str
    under_doit: str  # what plain `doit` (a dodo.py) returns in the same case: it keeps doit's own codes


EXIT_CODES: tuple[ExitCode, ...] = (
    ExitCode(code=EXIT_OK, name="ok", under_doit="0",
             meaning="everything ran and every gate passed; `validate`: every spec is valid"),
    ExitCode(code=EXIT_FAILED, name="failed", under_doit="1",
             meaning="a spec's verdict failed — below a threshold, a `required` case failed, trials ended in "
                     "error/timeout, grades in judge_error or missing, or (a spec with no thresholds) a trial "
                     "failed; the spec's header says which"),
    ExitCode(code=EXIT_INVALID, name="invalid spec", under_doit="1",
             meaning="a spec or a fixture it names is invalid (the other specs still run)"),
    ExitCode(code=EXIT_USAGE, name="usage", under_doit="3",
             meaning="bad command line, the tasks could not be loaded, a judge the run needs has no "
                     "credentials, or the run's estimate is over its spending cap (`--max-cost`; checked before any "
                     "trial, so nothing is spent)"),
    ExitCode(code=EXIT_INTERNAL, name="internal error", under_doit="2",
             meaning="an unexpected error inside skillmake (a bug: please report it)"),
    ExitCode(code=EXIT_NO_SPECS, name="nothing to run", under_doit="5",
             meaning="no `*.eval.yaml`, `*.eval.yml` or `*.eval.json` under the project root, or the selection "
                     "(`-k`, `--tag`, a task glob such as `'trial:nosuch/*'`) matches no cell (pytest's \"no tests "
                     "collected\"), or `skillmake report` finds no results to show yet, or `skillmake push` no "
                     "stored result to send"),
    ExitCode(code=EXIT_CAPPED, name="spending cap", under_doit="1",
             meaning="the spending cap (`--max-cost`, `max_cost`) stopped the run: a trial would have taken what "
                     "the run spent past it, so it and every later one did not start (the closing line lists them, "
                     "\"not run: spending cap\"); the trials already running finished and were reported. A run "
                     "estimated over the cap before it starts exits 3 and spends nothing"),
)


def exit_code_table() -> str:
    """The README's "## Exit codes" table (markdown), generated from EXIT_CODES."""
    rows = ["| code | meaning | plain `doit` |", "|---|---|---|"]
    rows += [f"| {e.code} | **{e.name}**: {e.meaning} | {e.under_doit} |" for e in EXIT_CODES]
    return "\n".join(rows)


def exit_code_lines() -> str:
    """The same table for `--help`: one line per code."""
    return "\n".join(f"  {e.code}  {e.name}" for e in EXIT_CODES)


@dataclass(frozen=True, slots=True, kw_only=True)
class Location:
    """Where in a file a problem is: 1-based line and column, and a JSON pointer."""

    path: str
    line: int = 0
    col: int = 0
    pointer: str = ""

    def __str__(self) -> str:
        where = self.path
        if self.line:
            where += f":{self.line}:{self.col or 1}"
        if self.pointer or self.line:
            where += f" {self.pointer or '/'}"
        return where


class SkillmakeError(Exception):
    """Root of every error skillmake raises on purpose; the message ends with the fix."""

    def __init__(self, message: str, *, loc: Location | None = None, hint: str | None = None) -> None:
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        text = f"{self.loc}: {self.message}" if self.loc else self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class SpecError(SkillmakeError):
    """One problem found in a spec file (there may be many per file)."""


class SpecErrors(SkillmakeError):
    """Every problem found in one or more spec files, sorted by file and line."""

    def __init__(self, errors: list[SpecError]) -> None:
        self.errors = sorted(errors, key=_error_order)
        super().__init__("\n".join(e.render() for e in self.errors))


def _error_order(error: SpecError) -> tuple[str, int, int, str]:
    loc = error.loc or Location(path="")
    return (loc.path, loc.line, loc.col, loc.pointer)


class UsageError(SkillmakeError):
    """The command line is wrong (exit 3): an unknown option, a missing or malformed value."""


class StoreError(SkillmakeError):
    """The artifact store cannot be used (not a corrupt entry: those are misses)."""


class RecordError(SkillmakeError):
    """A record does not match its schema."""


def did_you_mean(word: str, choices: Iterable[str], *, quote: bool = True) -> str:
    """"; did you mean 'x'?" for the closest of `choices` to a mistyped `word`, or "" when none is close."""
    import difflib

    choices = list(choices)
    # Two letters swapped (`--prot`) is the commonest typo, which difflib ranks below one letter changed
    # (`--root`): a choice with exactly the same letters wins.
    swapped = [c for c in choices if c != word and sorted(c) == sorted(word)]
    close = swapped[:1] if len(swapped) == 1 else difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if not close:
        return ""
    return f"; did you mean {close[0]!r}?" if quote else f"; did you mean {close[0]}?"
