"""The -k expression parser and the selection read from the command line or the environment."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from skillmake.engine import select
from skillmake.engine.select import ExpressionError, parse


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("SKILLMAKE_K", "SKILLMAKE_TAGS", "SKILLMAKE_FAILED", "SKILLMAKE_RESAMPLE"):
        monkeypatch.delenv(var, raising=False)
    select.reset()
    yield
    select.reset()


NAME = "summarize/long-doc/with_skill/0"


@pytest.mark.parametrize(("expr", "expected"), [
    ("summarize", True),
    ("SUMMARIZE", True),  # case-insensitive, as pytest's -k
    ("long", True),  # a substring of the case
    ("without_skill", False),
    ("with_skill", True),
    ("summarize/long-doc", True),
    ("summarize and long", True),
    ("summarize and short", False),
    ("short or long", True),
    ("not long", False),
    ("not not long", True),
    ("summarize and not (short or without)", True),
    ("(short or long) and with_skill", True),
    ("short or long and without", False),  # and binds tighter than or
    ("slow", True),  # a tag
    ("not slow", False),
    ("/0", True),
])
def test_expression_matches_name_and_tags(expr: str, expected: bool) -> None:
    assert parse(expr).matches(NAME, ["slow", "regression"]) is expected


def test_keywords_inside_names_are_names() -> None:
    assert parse("android").matches("spec/android/arm/0")
    assert parse("notes").matches("spec/notes/arm/0")


@pytest.mark.parametrize(("expr", "column", "got"), [
    ("alpha and", 10, "the end of the expression"),
    ("alpha beta", 7, "'beta'"),
    ("(alpha", 7, "the end of the expression"),
    ("alpha)", 6, "')'"),
    ("and alpha", 1, "'and'"),
    ("not", 4, "the end of the expression"),
    ("alpha or ()", 11, "')'"),
])
def test_bad_expression_names_its_column(expr: str, column: int, got: str) -> None:
    with pytest.raises(ExpressionError, match=re.escape(f"at column {column}: expected ") + f".*; got {re.escape(got)}"
                       ) as info:
        parse(expr)
    assert info.value.column == column
    assert "hint: -k takes names joined by and, or, not" in info.value.render()


def test_python_is_never_evaluated() -> None:
    # Names, not code: a call is a syntax error at its parenthesis, and a dotted name is just a substring.
    with pytest.raises(ExpressionError, match="column 11"):
        parse("__import__('os')")
    assert not parse("os.system").matches(NAME)
    assert parse("True").matches("spec/true/arm/0") and not parse("True").matches(NAME)


def test_environment_fills_what_the_command_line_leaves_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLMAKE_K", "beta")
    monkeypatch.setenv("SKILLMAKE_RESAMPLE", "yes")
    select.set_command_line(k=None, tags=["x"], failed=False, resample=False)
    sel = select.current()
    assert sel.expr is not None and sel.expr.text == "beta"
    assert (sel.tags, sel.failed, sel.resample) == (("x",), False, True)


def test_command_line_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLMAKE_K", "beta")
    monkeypatch.setenv("SKILLMAKE_TAGS", "slow, fast,,")
    monkeypatch.setenv("SKILLMAKE_FAILED", "1")
    monkeypatch.setenv("SKILLMAKE_RESAMPLE", "0")
    env = select.current()
    assert env.expr is not None and env.expr.text == "beta"
    assert env.tags == ("slow", "fast")
    assert env.failed and not env.resample
    select.set_command_line(k="alpha", tags=["x"], failed=False, resample=True)
    cli = select.current()
    assert cli.expr is not None and cli.expr.text == "alpha"
    assert (cli.tags, cli.failed, cli.resample) == (("x",), True, True)  # a flag left off: the environment
    assert cli.active and cli.filters


def test_empty_selection_selects_everything() -> None:
    sel = select.current()
    assert not sel.active and not sel.filters
    select.set_command_line(k="  ", tags=[], failed=False, resample=True)
    sel = select.current()
    assert sel.expr is None and sel.active and not sel.filters  # --resample alone: every cell


def test_set_command_line_rejects_a_bad_expression() -> None:
    with pytest.raises(ExpressionError, match="column 7"):
        select.set_command_line(k="alpha (", tags=[], failed=False, resample=False)


def test_describe_names_the_filters() -> None:
    select.set_command_line(k="one", tags=["a", "b"], failed=True, resample=False)
    assert select.current().describe() == "-k 'one' --tag a --tag b --failed"
