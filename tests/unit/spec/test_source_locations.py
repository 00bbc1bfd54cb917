"""Each error is located where a person fixes it, and says what is wrong there."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillmake.core.errors import SpecError, SpecErrors
from skillmake.spec.loader import load_spec
from skillmake.spec.source import read_source


def syntax(name: str, text: str | None) -> str:
    with pytest.raises(SpecError) as info:
        read_source(name, text)
    return str(info.value)


def spec_errors(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "skills/ok").mkdir(parents=True, exist_ok=True)
    (tmp_path / "skills/ok/SKILL.md").write_text("---\nname: ok\n---\nok\n")
    (tmp_path / "s.eval.yaml").write_text(text)
    with pytest.raises(SpecErrors) as info:
        load_spec(str(tmp_path / "s.eval.yaml"), root=str(tmp_path))
    return [str(e).split("\n")[0] for e in info.value.errors]


def test_unclosed_bracket_is_reported_where_it_opens() -> None:
    text = "a:\n  b: [1, 2\nc: 3\nd: 4\n"
    assert syntax("s.yaml", text).startswith("s.yaml:2:6 /: not valid YAML: the '[' here is never closed\n")


def test_unclosed_brace_at_the_end_of_the_file() -> None:
    assert syntax("s.yaml", "a: 1\nb: {c: 1\n").startswith("s.yaml:2:4 /: not valid YAML: the '{' here is never closed")


def test_wrong_closing_bracket_is_reported_at_it() -> None:
    assert syntax("s.yaml", "a: [1, 2}\n").startswith(
        "s.yaml:1:9 /: not valid YAML: found '}' inside the '[' opened at column 4, where ',' or ']' belongs")


@pytest.mark.parametrize("quote", ['"', "'"])
def test_unclosed_quote_is_reported_where_it_opens(quote: str) -> None:
    text = f"a: 1\nb: {quote}open\nc: 2\nd: 3\n"
    assert syntax("s.yaml", text).startswith(f"s.yaml:2:4 /: not valid YAML: the quote {quote!r} here is never closed")


def test_missing_colon_is_reported_on_the_key_that_lacks_it() -> None:
    message = syntax("s.yaml", "agent:\n  kind command\n  model: x\n")
    assert message == ("s.yaml:2:3 /: not valid YAML: 'kind command' has no ':' after its key\n"
                       "  hint: write 'kind: command' (a key, a colon, a space, then the value)")


def test_missing_colon_in_a_list_item() -> None:
    message = syntax("s.yaml", "cases:\n  - id one\n    prompt: x\n")
    assert message.startswith("s.yaml:2:5 /: not valid YAML: 'id one' has no ':' after its key\n")


def test_missing_colon_before_a_nested_block() -> None:
    message = syntax("s.yaml", "cases:\n  - id: one\n    checks\n      - a\n")
    assert message.startswith("s.yaml:3:5 /: not valid YAML: 'checks' has no ':' after its key\n")


def test_a_key_indented_too_deep_is_not_called_a_missing_colon() -> None:
    message = syntax("s.yaml", "agent:\n  kind: command\n   model: x\n")
    assert message.startswith("s.yaml:3:4 /: not valid YAML: this line is indented deeper than 'kind' on line 2")


def test_latin1_byte_has_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "s.eval.yaml"
    path.write_bytes("a: 1\nb: caf\u00e9 cr\u00e8me\n".encode("latin-1"))
    message = syntax(str(path), None)
    assert message.startswith(f"{path}:2:7 /: not UTF-8: byte 0xE9 ('é' in Latin-1/Windows-1252)")


def test_column_after_multibyte_characters_counts_characters(tmp_path: Path) -> None:
    path = tmp_path / "s.eval.yaml"
    path.write_bytes("a: \u00e9\u00e9 ".encode() + b"\xff\n")
    assert syntax(str(path), None).startswith(f"{path}:1:7 /: not UTF-8: byte 0xFF")


@pytest.mark.parametrize("name", ["s.eval.json", "s.eval.yaml"])
def test_a_byte_order_mark_is_accepted(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + b'{"a": [1,\r\n  2]}\r\n')
    src = read_source(str(path))
    assert src.data == {"a": [1, 2]}
    assert src.positions["/a/1"] == (2, 3)


def test_json_messages_are_whole_sentences() -> None:
    unterminated = syntax("s.json", '{"a": "open')
    assert unterminated.startswith("s.json:1:7 /: not valid JSON: a string that starts here is never closed\n")
    newline = syntax("s.json", '{"a": "open\n, "b": 1}')
    assert newline.startswith("s.json:1:7 /: not valid JSON: this string is not closed before the end of its line")
    escape = syntax("s.json", '{"a": "C:\\data"}')
    assert escape.startswith("s.json:1:10 /: not valid JSON: an invalid escape inside a string\n")
    for message in (unterminated, newline, escape):
        assert not message.split("\n")[0].endswith(" at")


def test_a_tag_on_a_key_is_named_and_refused() -> None:
    message = syntax("s.yaml", "a: 1\n!!python/name:os.system : x\n")
    assert message == ("s.yaml:2:1 /: YAML tag '!!python/name:os.system' on a key is not allowed "
                       "(it asks the loader for Python code)\n"
                       "  hint: remove the tag: a spec holds plain strings, numbers, lists and mappings, and takes "
                       "no tags")


def test_a_tag_on_a_value_is_named() -> None:
    assert syntax("s.yaml", "a: !custom x\n").startswith(
        "s.yaml:1:4 /a: YAML tag '!custom' on this value is not allowed")


def test_a_big_spec_without_aliases_has_no_value_limit() -> None:
    src = read_source("s.yaml", "a: [" + ",".join(["1"] * 300_000) + "]\n")
    assert len(src.data["a"]) == 300_000


def test_aliases_that_expand_too_far_are_refused() -> None:
    text = "a: &a [" + ",".join(["x"] * 600) + "]\nb: [" + ",".join(["*a"] * 600) + "]\n"
    assert "YAML aliases expand to more than 250,000 values" in syntax("s.yaml", text)


def test_a_few_aliases_are_fine() -> None:
    assert read_source("s.yaml", "a: &a [1, 2]\nb: *a\nc: *a\n").data == {"a": [1, 2], "b": [1, 2], "c": [1, 2]}


def test_a_wrong_item_in_a_block_list_is_reported_at_the_item(tmp_path: Path) -> None:
    errors = spec_errors(tmp_path, "skill: skills/ok\nagent:\n  kind: command\n  command:\n    - python3\n    - 5\n"
                                   "cases: [{id: a, prompt: p, checks: [{type: contains, needle: x}]}]\n")
    assert errors == ["s.eval.yaml:6:7 /agent/command/1: expected a string, got integer 5"]


def test_an_empty_list_item_says_so(tmp_path: Path) -> None:
    with pytest.raises(SpecErrors) as info:
        (tmp_path / "skills/ok").mkdir(parents=True)
        (tmp_path / "skills/ok/SKILL.md").write_text("---\nname: ok\n---\nok\n")
        (tmp_path / "s.eval.yaml").write_text("skill: skills/ok\nagent: {kind: command, command: x}\ncases:\n"
                                              "  - id: a\n    prompt: p\n    checks:\n      -\n"
                                              "      - {type: contains, needle: x}\n")
        load_spec(str(tmp_path / "s.eval.yaml"), root=str(tmp_path))
    [error] = info.value.errors
    assert (error.message, error.hint) == ("expected an object, got null",
                                           "write the item after the '-', or delete the line")


def test_an_inline_schema_error_is_at_the_keyword(tmp_path: Path) -> None:
    errors = spec_errors(tmp_path, "skill: skills/ok\nagent: {kind: command, command: x}\ncases:\n  - id: a\n"
                                   "    prompt: p\n    output_files: [o.json]\n    checks:\n"
                                   "      - type: json_schema\n        file: o.json\n        schema:\n"
                                   "          type: object\n          properties:\n            n:\n"
                                   "              minimum: zero\n")
    assert errors == ["s.eval.yaml:14:15 /cases/0/checks/0/schema/properties/n/minimum: not a valid JSON Schema: "
                      "'zero' is not of type 'number'"]


@pytest.mark.parametrize(("body", "expected"), [
    ("input_files: [a]\n", "/input_files: 'input_files' belongs in a case, not at the top level"),
    ("model: m\n", "/model: 'model' belongs in 'agent', not at the top level"),
    ("rubric: r\n", "/rubric: 'rubric' belongs in a case, not at the top level"),
    ("forbidden_files: [x]\n", "/forbidden_files: 'forbidden_files' belongs in 'sandbox', not at the top level"),
    ("tirals: 3\n", "/tirals: unknown key 'tirals'"),
])
def test_a_key_valid_elsewhere_is_pointed_there(tmp_path: Path, body: str, expected: str) -> None:
    errors = spec_errors(tmp_path, "skill: skills/ok\nagent: {kind: command, command: x}\n" + body +
                         "cases: [{id: a, prompt: p, checks: [{type: contains, needle: x}]}]\n")
    assert [e.split(" ", 1)[1] for e in errors] == [expected]


def test_a_key_of_another_check_type_names_the_types(tmp_path: Path) -> None:
    (tmp_path / "skills/ok").mkdir(parents=True)
    (tmp_path / "skills/ok/SKILL.md").write_text("---\nname: ok\n---\nok\n")
    (tmp_path / "s.eval.yaml").write_text("skill: skills/ok\nagent: {kind: command, command: x}\ncases:\n"
                                          "  - {id: a, prompt: p, checks: [{type: regex, pattern: a, needle: x}]}\n")
    with pytest.raises(SpecErrors) as info:
        load_spec(str(tmp_path / "s.eval.yaml"), root=str(tmp_path))
    [error] = info.value.errors
    assert error.message == "'needle' is not a key of a regex check"
    assert error.hint == ("'needle' belongs to contains, not_contains, icontains and file_contains checks; "
                          "a regex check takes pattern")


def test_regex_errors_without_a_position_do_not_say_none(tmp_path: Path) -> None:
    errors = spec_errors(tmp_path, "skill: skills/ok\nagent: {kind: command, command: x}\n"
                                   "cases: [{id: a, prompt: p, checks: [{type: regex, pattern: '(?<=a+)b'}]}]\n")
    assert errors == ["s.eval.yaml:3:60 /cases/0/checks/0/pattern: bad regular expression '(?<=a+)b': "
                      "look-behind requires fixed-width pattern"]
