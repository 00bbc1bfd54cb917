"""YAML parse errors explained at their cause: the line that opens an unclosed bracket or quote, the key that
lost its ':', a line indented too deep (libyaml reports where it gave up, often a line later or the end of file)."""

from __future__ import annotations

import re
from typing import Any

import yaml

from skillmake.core.errors import Location, SpecError

Position = tuple[int, int]  # 1-based line, column


def explain(path: str, text: str, exc: yaml.MarkedYAMLError) -> SpecError:
    """A YAML parse error in words a spec author acts on: at the line to fix (where the unclosed bracket or quote
    opens, the key that lacks its ':'), saying what is wrong there, with the usual fix."""
    lines = text.split("\n")  # as an editor counts lines (source.py made the marks agree); not splitlines()
    problem = exc.problem or exc.context or "syntax error"
    context = exc.context or ""
    problem_at = _mark(exc.problem_mark or exc.context_mark)
    opened_at = _mark(exc.context_mark) if exc.context_mark else None
    line, col = problem_at
    here = lines[line - 1] if 0 < line <= len(lines) else ""
    if "\t" in here[: max(col, 1)] and "cannot start any token" in problem:
        return SpecError("not valid YAML: a tab character where YAML expects spaces", loc=_at(path, problem_at),
                         hint="indent with spaces only (YAML does not allow tabs for indentation)")
    if problem == "but found another document":
        return SpecError("not valid YAML: a second document ('---') after the spec", loc=_at(path, problem_at),
                         hint="a spec file holds one YAML document; remove the '---' and what follows, "
                              "or move it to its own .eval.yaml")
    if opened_at and context.startswith("while parsing a flow "):
        return _unclosed_flow(path, lines, context, problem, opened_at, problem_at)
    if opened_at and "quoted scalar" in context and problem_at[0] > opened_at[0]:
        quote = _char(lines, opened_at)
        inner = '\\" for a quote inside it' if quote == "'\"'" else "'' for a quote inside it"
        return SpecError(f"not valid YAML: the quote {quote} here is never closed", loc=_at(path, opened_at),
                         hint=f"close it with {quote} at the end of the value (write {inner})")
    if opened_at and context == "while scanning a simple key" and "expected ':'" in problem:
        found = _missing_colon(path, lines, opened_at[0])
        if found:
            return found
    if problem.startswith("mapping values are not allowed"):
        found = _mapping_value_cause(path, lines, line)
        if found:
            return found
    message = f"not valid YAML: {problem}"
    if exc.context and exc.context_mark and exc.problem:
        message += f" ({exc.context} that starts at line {exc.context_mark.line + 1})"
    return SpecError(message, loc=_at(path, problem_at),
                     hint="fix the YAML syntax at that line (indentation, quoting, a missing ':')")


def _mark(mark: Any) -> Position:
    return (mark.line + 1, mark.column + 1) if mark else (1, 1)


def _at(path: str, position: Position) -> Location:
    return Location(path=path, line=position[0], col=position[1])


def _char(lines: list[str], position: Position) -> str:
    line, col = position
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return repr(text[col - 1]) if 0 < col <= len(text) else "the bracket"


def _unclosed_flow(path: str, lines: list[str], context: str, problem: str, opened_at: Position,
                   problem_at: Position) -> SpecError:
    """An unclosed '[' or '{': libyaml stops where it gave up (often the end of the file); the cause is the opener."""
    bracket = _char(lines, opened_at)
    closer = "']'" if "sequence" in context else "'}'"
    if problem_at[0] == opened_at[0]:  # on the line it opens: what was found in place of ',' or the closer
        found = _char(lines, problem_at)
        return SpecError(f"not valid YAML: found {found} inside the {bracket} opened at column {opened_at[1]}, "
                         f"where ',' or {closer} belongs", loc=_at(path, problem_at),
                         hint=f"close the {bracket} with {closer}, separate items with ',', or quote a value "
                              f"that contains {found}")
    return SpecError(f"not valid YAML: the {bracket} here is never closed", loc=_at(path, opened_at),
                     hint=f"add the closing {closer} (the parser reached line {problem_at[0]} without finding it), "
                          f"or quote the value if the {bracket} is text")


_ITEM = re.compile(r"^(\s*)(?:-\s+)*")


def _content(text: str) -> tuple[int, str]:
    """(column, text) of a line's content after its indentation and any '- ' list markers."""
    m = _ITEM.match(text)
    start = m.end() if m else 0
    return start + 1, text[start:].rstrip()


def _missing_colon(path: str, lines: list[str], line: int) -> SpecError | None:
    """The error for a key on `line` written without its ':' (None when that line does not look like one)."""
    if not 0 < line <= len(lines):
        return None
    col, content = _content(lines[line - 1])
    if not content or content.startswith("#") or ":" in content or content[:1] in "[{\"'|>&*!":
        return None
    key, _, rest = content.partition(" ")
    fix = f"{key}: {rest.strip()}" if rest.strip() else f"{key}:"
    return SpecError(f"not valid YAML: {content!r} has no ':' after its key", loc=Location(path=path, line=line,
                     col=col), hint=f"write {fix!r} (a key, a colon, a space, then the value)")


def _mapping_value_cause(path: str, lines: list[str], line: int) -> SpecError | None:
    """libyaml says "mapping values are not allowed" at the ':' of the line *after* the cause: a key above that
    lost its ':' (the two lines read as one text), or a key indented deeper than the one before it."""
    above = line - 1
    while above > 0 and (not lines[above - 1].strip() or lines[above - 1].lstrip().startswith("#")):
        above -= 1
    if above <= 0 or line > len(lines):
        return None
    missing = _missing_colon(path, lines, above)
    if missing:
        return missing
    col, _ = _content(lines[line - 1])
    above_col, above_content = _content(lines[above - 1])
    if ":" in above_content and col > above_col:
        key = above_content.split(":", 1)[0]
        return SpecError(f"not valid YAML: this line is indented deeper than {key!r} on line {above}, "
                         f"as if it continued that value", loc=Location(path=path, line=line, col=col),
                         hint=f"indent it by {above_col - 1} space(s), like {key!r}, if it is a key of the same "
                              f"mapping")
    return None
