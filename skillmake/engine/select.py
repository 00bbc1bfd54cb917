"""Which cells a run works on: `-k EXPR`, `--tag T`, `--failed`, and whether `--resample` draws fresh samples.

The front end calls `set_command_line` with what it parsed; plain `doit` (no front end) reads the same
settings from SKILLMAKE_K, SKILLMAKE_TAGS (comma-separated), SKILLMAKE_FAILED=1 and SKILLMAKE_RESAMPLE=1.
`-k` is pytest's keyword expression: case-insensitive substrings of a cell's name `spec/case/arm/k` and of
its tags, joined by `and`, `or`, `not` and parentheses. It is parsed here, never evaluated as Python.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from skillmake.core.errors import UsageError
from skillmake.engine.plan import Item, SpecPlan, TriggerItem
from skillmake.run.project import Project
from skillmake.run.workspace import trial_dir
from skillmake.spec.model import Spec


class ExpressionError(UsageError):
    """A `-k` expression that does not parse: a usage error (exit 3), with the column where it went wrong."""

    def __init__(self, text: str, column: int, expected: str, got: str) -> None:
        self.text, self.column = text, column
        pointer = " " * (column - 1) + "^"
        super().__init__(f"-k {text!r}: at column {column}: expected {expected}; got {got}\n      {text}\n      "
                         f"{pointer}",
                         hint="-k takes names joined by and, or, not and parentheses, e.g. "
                              "-k 'summarize and not baseline'")


# --- the expression -----------------------------------------------------------------------------------------

Match = Callable[[str], bool]  # does this (lower-case) word occur in the cell's name or tags?
_TOKEN = re.compile(r"\s*(?:(?P<paren>[()])|(?P<word>[^\s()]+))")
_KEYWORDS = frozenset({"and", "or", "not"})


@dataclass(frozen=True, slots=True)
class Expr:
    """A parsed `-k` expression: a tree of ("word", w) | ("not", e) | ("and", a, b) | ("or", a, b)."""

    text: str
    tree: tuple[Any, ...]

    def matches(self, name: str, tags: Iterable[str] = ()) -> bool:
        haystack = [name.lower(), *(t.lower() for t in tags)]
        return _eval(self.tree, lambda word: any(word in h for h in haystack))


def _eval(node: tuple[Any, ...], match: Match) -> bool:
    op = node[0]
    if op == "word":
        return match(node[1])
    if op == "not":
        return not _eval(node[1], match)
    if op == "and":
        return _eval(node[1], match) and _eval(node[2], match)
    return _eval(node[1], match) or _eval(node[2], match)


def parse(text: str) -> Expr:
    """Parse a `-k` expression; ExpressionError (with the 1-based column) when it is not one."""
    tokens: list[tuple[str, str, int]] = []  # (kind, value, column)
    pos = 0
    while True:
        m = _TOKEN.match(text, pos)
        if m is None:
            break
        if m.group("paren"):
            tokens.append((m.group("paren"), m.group("paren"), m.start("paren") + 1))
        else:
            word = m.group("word")
            kind = word if word in _KEYWORDS else "word"
            tokens.append((kind, word.lower(), m.start("word") + 1))
        pos = m.end()
    parser = _Parser(text, tokens)
    tree = parser.expression()
    if parser.i < len(tokens):
        kind, value, column = tokens[parser.i]
        raise ExpressionError(text, column, "'and', 'or' or the end", repr(value))
    return Expr(text=text, tree=tree)


class _Parser:
    """Recursive descent: or_expr := and_expr ('or' and_expr)*; and_expr := not_expr ('and' not_expr)*;
    not_expr := 'not' not_expr | '(' or_expr ')' | word."""

    def __init__(self, text: str, tokens: list[tuple[str, str, int]]) -> None:
        self.text, self.tokens, self.i = text, tokens, 0

    def _peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def _fail(self, expected: str) -> ExpressionError:
        if self.i < len(self.tokens):
            return ExpressionError(self.text, self.tokens[self.i][2], expected, repr(self.tokens[self.i][1]))
        return ExpressionError(self.text, len(self.text) + 1, expected, "the end of the expression")

    def expression(self) -> tuple[Any, ...]:
        node = self._and()
        while self._peek() == "or":
            self.i += 1
            node = ("or", node, self._and())
        return node

    def _and(self) -> tuple[Any, ...]:
        node = self._not()
        while self._peek() == "and":
            self.i += 1
            node = ("and", node, self._not())
        return node

    def _not(self) -> tuple[Any, ...]:
        kind = self._peek()
        if kind == "not":
            self.i += 1
            return ("not", self._not())
        if kind == "(":
            self.i += 1
            node = self.expression()
            if self._peek() != ")":
                raise self._fail("')'")
            self.i += 1
            return node
        if kind == "word":
            node = ("word", self.tokens[self.i][1])
            self.i += 1
            return node
        raise self._fail("a name, 'not' or '('")


# --- the selection --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """What the command line asked for. Filters combine with `and`; `resample` alone selects every cell."""

    expr: Expr | None = None
    tags: tuple[str, ...] = ()
    failed: bool = False
    resample: bool = False
    specs: tuple[str, ...] = ()  # only these specs (exact names; --spec)
    # One kind of trial (the clauditor front end's commands): "cases", "trials" (the cases' trials, not to be
    # graded: no judge is needed), or "triggers".
    only: str | None = None

    @property
    def filters(self) -> bool:
        return self.expr is not None or bool(self.tags) or self.failed or bool(self.specs) or self.only is not None

    @property
    def active(self) -> bool:
        return self.filters or self.resample

    def describe(self) -> str:
        bits = [f"--spec {name}" for name in self.specs]
        bits += [f"-k {self.expr.text!r}"] if self.expr else []
        bits += [f"--tag {t}" for t in self.tags]
        bits += ["--failed"] if self.failed else []
        return " ".join(bits)


_command_line: dict[str, Any] | None = None


def set_command_line(*, k: str | None, tags: Sequence[str], failed: bool, resample: bool,
                     specs: Sequence[str] = (), only: str | None = None) -> None:
    """Called by the front end with what it parsed; ExpressionError when `k` does not parse (exit 3).

    What the command line leaves unset (no -k, no --tag, no --spec, no flag) falls back to the environment.
    `only` ("cases", "trials" or "triggers") has no variable: only the clauditor front end sets it, in its own
    process."""
    global _command_line
    if k and k.strip():
        parse(k)  # a bad expression is refused here, before anything loads
    if only not in (None, "cases", "trials", "triggers"):
        raise ValueError(f"only: {only!r}")
    _command_line = {"k": k, "tags": tuple(t for t in tags if t), "failed": failed, "resample": resample,
                     "specs": tuple(s for s in specs if s), "only": only}


def reset() -> None:
    """Forget what set_command_line set (tests; a long-lived process running several commands)."""
    global _command_line
    _command_line = None


def current() -> Selection:
    """The front end's selection, each setting it leaves unset taken from the environment (so plain `doit`
    can select too)."""
    cli = _command_line or {}
    env = os.environ
    k = cli.get("k") or env.get("SKILLMAKE_K", "")
    tags = cli.get("tags") or tuple(t.strip() for t in env.get("SKILLMAKE_TAGS", "").split(",") if t.strip())
    specs = cli.get("specs") or tuple(s.strip() for s in env.get("SKILLMAKE_SPECS", "").split(",") if s.strip())
    return Selection(expr=parse(k) if k.strip() else None, tags=tuple(tags), specs=tuple(specs),
                     only=cli.get("only"),
                     failed=bool(cli.get("failed")) or _flag(env.get("SKILLMAKE_FAILED")),
                     resample=bool(cli.get("resample")) or _flag(env.get("SKILLMAKE_RESAMPLE")))


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() not in ("", "0", "false", "no", "off")


def cell_tags(item: Item) -> tuple[str, ...]:
    """A case's tags and its spec's: a tag on the spec applies to every case in it."""
    return (*item.case.tags, *item.spec.tags)


def matches(selection: Selection, item: Item) -> bool:
    """Whether the cell passes the `--spec`, `-k` and `--tag` filters (`--failed` needs the last reports: see
    choose)."""
    if (selection.specs and item.spec.name not in selection.specs) or selection.only == "triggers":
        return False
    tags = cell_tags(item)
    if selection.tags and not set(selection.tags) & set(tags):
        return False
    return selection.expr is None or selection.expr.matches(item.name, tags)


@dataclass(frozen=True, slots=True, kw_only=True)
class Chosen:
    """The cells a run works on (None: all of them) and what was said about them."""

    names: frozenset[str] | None
    resample: bool
    stored_failures: int = 0  # --failed cells whose failing result is stored and would be reused

    def has(self, item: Item) -> bool:
        return self.names is None or item.name in self.names

    def has_trigger(self, item: TriggerItem) -> bool:
        return self.names is None or f"trigger:{item.name}" in self.names

    def wants(self, item: Item | TriggerItem) -> bool:
        return self.has_trigger(item) if isinstance(item, TriggerItem) else self.has(item)

    def touches(self, plan: SpecPlan) -> bool:
        return self.names is None or any(i.name in self.names for i in plan.items) or any(
            self.has_trigger(t) for t in plan.triggers)


def choose(project: Project | None, plans: Sequence[SpecPlan], selection: Selection) -> Chosen:
    """The cells `selection` picks (`project`: where `--failed` reads the last reports; None without it)."""
    if not selection.filters:
        return Chosen(names=None, resample=selection.resample)
    names: set[str] = set()
    stored = 0
    for plan in plans:
        failing = failed_cells(project, plan) if project is not None and selection.failed else None
        for item in plan.items:
            if not matches(selection, item) or (failing is not None and item.name not in failing):
                continue
            names.add(item.name)
            if failing is not None and item.trial_cached and item.grade_cached:
                stored += 1
        failed_queries = failed_triggers(project, plan) if project is not None and selection.failed else None
        for trigger in plan.triggers:
            if (selection.specs and trigger.spec.name not in selection.specs) or selection.only in ("cases", "trials"):
                continue
            tags = (*trigger.spec.tags, TRIGGER_TAG)
            if selection.tags and not set(selection.tags) & set(tags):
                continue
            if selection.expr is not None and not selection.expr.matches(trigger.name, tags):
                continue
            if failed_queries is not None and trigger.query.id not in failed_queries:
                continue
            names.add(f"trigger:{trigger.name}")
    return Chosen(names=frozenset(names), resample=selection.resample, stored_failures=stored)


TRIGGER_TAG = "trigger"  # every trigger trial carries it: `--tag trigger` selects them, `-k 'not trigger'` skips them


def failed_triggers(project: Project, plan: SpecPlan) -> set[str]:
    """Ids of the queries that do not pass on the records the spec's trigger runs map to now (a query with a run
    not stored yet has no passing result). Read from the records, as the report is, never from report.json."""
    from skillmake.results.triggers import trigger_section
    from skillmake.triggers.views import record_of

    if not plan.triggers:
        return set()
    runs = [(t.query, t.k, record_of(project, plan.spec, t.tkey.key) if t.cached else None) for t in plan.triggers]
    section = trigger_section(plan.spec, runs, skill=plan.triggers[0].offered.name) or {}
    passed = {q["id"] for q in section.get("queries", ()) if q.get("pass")}
    return {t.query.id for t in plan.triggers if t.query.id not in passed or not t.cached}


def failed_cells(project: Project, plan: SpecPlan) -> set[str]:
    """Cells whose last result did not pass: fail, cheat, or none at all (never run, or it ended in error, timeout
    or judge_error). The last result is the stored grade under the cell's keys now, else — the cell is stale — the
    one its view was last checked out from (a passing cell whose case changed is not selected).

    Read from the records, never from report.json: a report is a rendering anyone can edit or break, and one
    that does not parse must not make `--failed` re-run passing trials."""
    from skillmake.results.checkout import shown_keys
    from skillmake.store.objects import GRADE_SCHEMA

    out: set[str] = set()
    for item in plan.items:
        key = item.grade_key if item.trial_cached and item.grade_cached else None
        if key is None:
            key = shown_keys(trial_dir(project.runs_dir, item.spec, item.case, item.arm.name, item.k).root)[1]
        grade = project.store.get_action(key, schema=GRADE_SCHEMA) if key else None
        if grade is None or grade.get("outcome") != "pass":
            out.add(item.name)
    return out


# --- the tasks named on the command line ------------------------------------------------------------------------

_GLOB = frozenset("*?[")
# What a doit group name runs (its tasks and their task_dep): a grade needs its trial, a report everything.
_GROUP_KINDS: dict[str, frozenset[str]] = {
    "trial": frozenset({"trial"}), "grade": frozenset({"trial", "grade"}), "trigger": frozenset({"trigger"}),
    "report": frozenset({"trial", "grade", "trigger"}), "thresholds": frozenset({"trial", "grade", "trigger"}),
    "validate": frozenset()}


@dataclass(frozen=True, slots=True)
class Targets:
    """The tasks a command line names (doit's task names and globs, or `skillmake explain`'s patterns), as which
    trials, grades and trigger trials they make run. `explain` and a run both ask `wants`, so they cannot
    disagree about what would run or which judges it needs. Empty: every task."""

    patterns: tuple[str, ...] = ()

    def wants(self, kind: str, item: Item | TriggerItem) -> bool:
        """Whether the named tasks run `item`'s task of `kind` ("trial", "grade" or "trigger")."""
        return not self.patterns or any(_target_wants(p, kind, item) for p in self.patterns)

    def unmatched(self, plans: Sequence[SpecPlan]) -> list[str]:
        """The globs among the patterns that name no task of these plans (a typo must not select nothing)."""
        if not self.patterns:
            return []
        items: list[Item | TriggerItem] = [*(i for p in plans for i in p.items),
                                           *(t for p in plans for t in p.triggers)]
        out = []
        for pattern in self.patterns:
            kind, sep, _ = pattern.partition(":")
            if not (_GLOB & set(pattern)) or not sep or kind not in ("trial", "grade", "trigger", "report"):
                continue
            if not any(_target_wants(pattern, k, i) for i in items for k in ("trial", "grade", "trigger")):
                out.append(pattern)
        return out

    def unknown(self, plans: Sequence[SpecPlan], *, reports: Iterable[str] = ()) -> str | None:
        """The first task name (no glob) of ours that names no task (`trial:a/on/with_skill/0`), as one line with
        the closest task name: doit would print its raw "Invalid parameter". None when every name is a task.
        Plans no spec's items when no such name is given (a no-op over settled specs plans none of them)."""
        from skillmake.core.errors import did_you_mean

        asked = [p for p in self.patterns if _names_a_task(p)]
        if not asked:
            return None
        names = [*(f"{kind}:{i.name}" for p in plans for i in p.items for kind in ("trial", "grade")),
                 *(f"trigger:{t.name}" for p in plans for t in p.triggers),
                 *(f"report:{p.spec.name}" for p in plans), *(f"report:{name}" for name in reports)]
        known = set(names)
        for pattern in asked:
            if pattern not in known:
                return f"{pattern!r} is not a task{did_you_mean(pattern, names)}"
        return None


def _names_a_task(pattern: str) -> bool:
    """Whether `pattern` is one of our task names, not a glob (`trial:a/on/with_skill/0`)."""
    kind, sep, _ = pattern.partition(":")
    return bool(sep) and kind in ("trial", "grade", "trigger", "report") and not (_GLOB & set(pattern))


def _target_wants(pattern: str, kind: str, item: Item | TriggerItem) -> bool:
    is_trigger = isinstance(item, TriggerItem)
    if (kind == "trigger") != is_trigger:
        return False
    group, sep, rest = pattern.partition(":")
    if not sep:
        if pattern in _GROUP_KINDS:
            return kind in _GROUP_KINDS[pattern]
        return _cell_matches(pattern, item)  # explain's spec names and cells: everything of those cells
    if group == "report":
        return fnmatch.fnmatchcase(item.spec.name, rest)
    if group not in ("trial", "grade", "trigger") or kind not in _GROUP_KINDS[group]:
        return False  # validate:FILE runs no trial; thresholds:… is no task
    return _cell_matches(rest, item)


def _cell_matches(cell: str, item: Item | TriggerItem) -> bool:
    if "/" not in cell:
        return fnmatch.fnmatchcase(item.spec.name, cell)
    return fnmatch.fnmatchcase(item.name, cell) or fnmatch.fnmatchcase(item.name, cell + "/*")


def judged_specs(plans: Sequence[SpecPlan], chosen: Chosen, targets: Targets) -> list[Spec]:
    """The specs whose judges this run (or `explain` of it) would call: a grade with a judge that is stale (or
    resampled), of a selected cell, that the named tasks make run. A trigger trial is judged by no model."""
    return [p.spec for p in plans if not (p.settled and not chosen.resample)  # a settled spec grades nothing
            and any(i.case.has_judge and (chosen.resample or not i.grade_cached) and chosen.has(i)
                   and targets.wants("grade", i) for i in p.items)]


def nothing_selected(plans: Sequence[SpecPlan], selection: Selection, targets: Targets) -> str | None:
    """One line when `-k`, `--tag`, `--spec` or a task glob matches no cell at all (not counting `--failed`,
    which rightly finds nothing once everything passes); None when something matches."""
    unmatched = targets.unmatched(plans)
    if unmatched:
        return f"{unmatched[0]!r} matches no task (tasks are trial:<spec>/<case>/<arm>/<k>, grade:…, trigger:…, " \
               "report:<spec>; `skillmake list --all` lists them)"
    if selection.expr is None and not selection.tags:
        return None
    loose = Selection(expr=selection.expr, tags=selection.tags, specs=selection.specs, only=selection.only)
    if choose(None, plans, loose).names:
        return None
    trials = sum(len(p.items) + len(p.triggers) for p in plans)  # case x arm x k, and trigger runs: trials, not cells
    return f"{loose.describe()} selects none of the {trials} trials"
