"""One validation run reports every error of a file: the rules the schema cannot express run over every part of
the spec that passed the schema, even when another part did not, and never trip over the parts that failed."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from skillmake.core.errors import SpecErrors
from skillmake.spec.loader import load_spec
from skillmake.spec.rules import Rules
from skillmake.spec.schema import spec_errors
from skillmake.spec.source import read_source

REPO = Path(__file__).resolve().parents[3]
FULL = REPO / "tests" / "data" / "valid" / "full.eval.yaml"

SPEC = """\
skill: skills/ok
agent: {kind: command, command: [python3], modle: m}
cases:
  - id: one
    prompt: p
    input_files: [missing.txt]
    checks:
      - {type: regex, pattern: "(a"}
      - {type: python, code: "x ="}
      - {type: contains, needle: x, nedle: y}
  - id: one
    prompt: 5
    checks:
      - {type: json_schema, schema: {type: 5}}
"""


def messages(tmp_path: Path, text: str, *, schema_valid: set[str] | None = None) -> list[str]:
    (tmp_path / "skills/ok").mkdir(parents=True, exist_ok=True)
    (tmp_path / "skills/ok/SKILL.md").write_text("---\nname: ok\n---\nok\n")
    (tmp_path / "s.eval.yaml").write_text(text)
    try:
        load_spec(str(tmp_path / "s.eval.yaml"), root=str(tmp_path), schema_valid=schema_valid)
    except SpecErrors as exc:
        return [f"{e.loc.pointer if e.loc else ''}: {e.message}" for e in exc.errors]
    return []


def test_schema_errors_and_rule_errors_come_in_one_run(tmp_path: Path) -> None:
    assert messages(tmp_path, SPEC) == [
        "/agent/modle: unknown key 'modle'",
        "/cases/0/input_files/0: input file 'missing.txt' does not exist",
        "/cases/0/checks/0/pattern: bad regular expression '(a': missing ), unterminated subpattern at position 0",
        "/cases/0/checks/1/code: Python syntax error in code: invalid syntax (code line 1)",
        "/cases/0/checks/2/nedle: unknown key 'nedle'",
        "/cases/1/id: duplicate case id 'one'",
        "/cases/1/prompt: expected a string, got integer 5",
        "/cases/1/checks/0/schema/type: not a valid JSON Schema: 5 is not valid under any of the given schemas",
    ]


def test_a_value_that_failed_the_schema_gets_no_second_error(tmp_path: Path) -> None:
    text = ("skill: skills/ok\nagent: {kind: command, command: [python3]}\ncases:\n"
            "  - {id: a, prompt: p, checks: [{type: regex, pattern: ''}, {type: regexp, pattern: '('}]}\n"
            "  - {id: 'a b', prompt: p, checks: [{type: contains, needle: x}]}\n"
            "  - {id: a, prompt: p, rubrik: r}\n")
    assert messages(tmp_path, text) == [
        "/cases/0/checks/0/pattern: must not be empty",
        "/cases/0/checks/1/type: 'regexp' is not a check type",
        "/cases/1/id: 'a b' is not a valid name here",
        "/cases/2/id: duplicate case id 'a'",
        "/cases/2/rubrik: unknown key 'rubrik'",
    ]


def test_rules_run_on_a_cache_hit_too(tmp_path: Path) -> None:
    text = ("skill: skills/ok\nagent: {kind: command, command: [python3]}\n"
            "cases: [{id: a, prompt: p, checks: [{type: regex, pattern: '('}]}]\n")
    seen: set[str] = set()
    first = messages(tmp_path, text, schema_valid=seen)
    assert len(seen) == 1  # the text passed the schema; only a rule failed
    assert messages(tmp_path, text, schema_valid=seen) == first
    assert first == ["/cases/0/checks/0/pattern: bad regular expression '(': missing ), unterminated subpattern "
                     "at position 0"]


def _pointers(value: Any, pointer: str = "") -> list[str]:
    out = [pointer]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _pointers(item, f"{pointer}/{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _pointers(item, f"{pointer}/{i}")
    return out


def _replace(data: Any, pointer: str, new: Any) -> Any:
    tokens = pointer.split("/")[1:]
    node = data
    for token in tokens[:-1]:
        node = node[int(token)] if isinstance(node, list) else node[token]
    node[int(tokens[-1]) if isinstance(node, list) else tokens[-1]] = new
    return data


@pytest.mark.parametrize("wrong", [None, 5, "x", [], {}, [5], {"x": 1}], ids=repr)
def test_rules_never_crash_on_any_value_of_any_wrong_type(wrong: Any) -> None:
    """Every value of a complete spec, replaced by a value of each type: errors come back, never an exception."""
    src = read_source(str(FULL))
    original = src.data
    for pointer in _pointers(original)[1:]:
        src.data = _replace(copy.deepcopy(original), pointer, copy.deepcopy(wrong))
        errors = spec_errors(src)
        rules = Rules(src, str(FULL), "full.eval.yaml", root=str(REPO), bad=[e.loc.pointer for e in errors if e.loc])
        rules.run()
