from __future__ import annotations

import pytest

from skillmake.core.errors import SpecError
from skillmake.spec.source import MAX_DEPTH, escape, read_source


def test_yaml_keeps_yes_no_and_dates_as_written() -> None:
    src = read_source("s.yaml", "a: yes\nb: no\nc: 2024-01-01\nd: true\ne: 3\n")
    assert src.data == {"a": "yes", "b": "no", "c": "2024-01-01", "d": True, "e": 3}


def test_yaml_positions_are_one_based() -> None:
    src = read_source("s.yaml", "a:\n  b: [1, 2]\n")
    assert src.positions["/a/b/1"] == (2, 10)
    assert src.key_positions["/a/b"] == (2, 3)


def test_yaml_duplicate_keys_are_refused() -> None:
    with pytest.raises(SpecError, match=r"s.yaml:2:1 /a: duplicate key 'a'"):
        read_source("s.yaml", "a: 1\na: 2\n")


def test_yaml_python_tags_are_refused() -> None:
    with pytest.raises(SpecError, match=r"s.yaml:1:4 /a: YAML tag '!!python/object:os.system' on this value is not "
                                        r"allowed"):
        read_source("s.yaml", "a: !!python/object:os.system {}\n")


def test_json_positions_and_duplicates() -> None:
    src = read_source("s.json", '{\n  "a": [1, {"b": "c"}]\n}')
    assert src.data == {"a": [1, {"b": "c"}]}
    assert src.positions["/a/1/b"] == (2, 18)
    with pytest.raises(SpecError, match=r"s.json:1:10 /a: duplicate key"):
        read_source("s.json", '{"a": 1, "a": 2}')


def test_json_syntax_error_is_located() -> None:
    with pytest.raises(SpecError, match=r"s.json:2:1 .*expected"):
        read_source("s.json", '{"a": 1,\n}')


@pytest.mark.parametrize("brk", ["\u2028", "\u2029", "\x85"])
def test_yaml_line_breaks_an_editor_does_not_show_leave_later_lines_where_they_are(brk: str) -> None:
    """libyaml ends a line at NEL, LS and PS (YAML 1.1); an editor does not: positions must be the editor's."""
    text = f'a: "one{brk}still one"\nb: \'x{brk}y\'\nc:\n  d: 1\n'
    src = read_source("s.yaml", text)
    assert src.data["a"].startswith("one") and src.data["c"] == {"d": 1}  # NEL folds to a space, as YAML says
    assert src.positions["/c/d"] == (4, 6)
    assert src.key_positions["/b"] == (2, 1)
    with pytest.raises(SpecError, match=r"s.yaml:5:3 /c/d: duplicate key 'd'"):
        read_source("s.yaml", text + "  d: 2\n")
    with pytest.raises(SpecError, match=r"s.yaml:3:4 /: not valid YAML: the '\[' here is never closed"):
        read_source("s.yaml", f'a: "x{brk}y"\nb: 1\nc: [1, 2\n')


@pytest.mark.parametrize(("value", "tag"), [
    ("!!binary aGVsbG8=", "!!binary"), ("!!timestamp 2024-01-01", "!!timestamp"), ("!custom x", "!custom")])
def test_yaml_takes_no_tags_that_keep_a_value_as_its_text(value: str, tag: str) -> None:
    with pytest.raises(SpecError, match=rf"s.yaml:3:10 /b/p: YAML tag '{tag}' on this value is not allowed"):
        read_source("s.yaml", f"a: 1\nb:\n  p:     {value}\n")


def test_json_lone_surrogates_are_refused_where_their_string_starts() -> None:
    with pytest.raises(SpecError, match=r"s.json:2:12 /: not valid JSON: a lone surrogate \\ud800 in this string"):
        read_source("s.json", '{"a": 1,\n "prompt": "bad \\ud800 here"}')
    with pytest.raises(SpecError, match=r"lone surrogate \\udc00"):
        read_source("s.json", '{"\\udc00": 1}')
    assert read_source("s.json", '{"a": "\\ud83d\\ude00"}').data == {"a": "\U0001F600"}


@pytest.mark.parametrize(("name", "text", "where"), [
    ("s.yaml", "a: 1\nb: 9223372036854775808\n", "s.yaml:2:4 /b"),
    ("s.yaml", "b: -9223372036854775808\n", "s.yaml:1:4 /b"),
    ("s.json", '{"a": 1,\n "b": 9223372036854775808}', "s.json:2:7 /"),
])
def test_integers_past_64_bits_are_refused(name: str, text: str, where: str) -> None:
    with pytest.raises(SpecError, match=rf"{where}: .*number too large: more than 64 bits"):
        read_source(name, text)
    assert read_source(name, text.replace("922337203685477580", "92233720368547758")).data  # one digit fewer: fine


# Pins from the mutation run (bench/mutation.py): validation's locating, through read_source and Source.locate.
def where(exc: pytest.ExceptionInfo[SpecError]) -> tuple[int, int]:
    loc = exc.value.loc
    assert loc is not None
    return loc.line, loc.col


YAML = "cases:\n  - id: one\n    checks:\n      - {type: contains, needle: x}\n"


def test_locate_finds_a_value_its_key_or_the_nearest_ancestor() -> None:
    src = read_source("s.yaml", YAML)
    assert (src.locate("/cases/0/checks/0/needle").line, src.locate("/cases/0/checks/0/needle").col) == (4, 34)
    key = src.locate("/cases/0/checks", key=True)
    assert (key.line, key.col, key.pointer) == (3, 5, "/cases/0/checks")
    value = src.locate("/cases/0/checks")
    assert (value.line, value.col) == (4, 7)
    missing = src.locate("/cases/0/checks/0/nope/deeper", key=True)  # no such key: the nearest value that exists
    assert (missing.line, missing.col, missing.pointer) == (4, 9, "/cases/0/checks/0/nope/deeper")
    item = src.locate("/cases/0", key=True)  # a list item has no key: its value
    assert (item.line, item.col) == (2, 5)
    assert (src.locate("/nothing").line, src.locate("/nothing").col) == (1, 1)


def test_json_locate_and_positions_of_every_kind_of_value() -> None:
    text = '{"a": true,\n "b": [false, null, -1.5e2, 7, "s"],\n "c": {}, "d": []}'
    src = read_source("s.json", text)
    assert src.data == {"a": True, "b": [False, None, -150.0, 7, "s"], "c": {}, "d": []}
    assert isinstance(src.data["b"][3], int) and isinstance(src.data["b"][2], float)
    assert src.positions["/a"] == (1, 7)
    assert [src.positions[f"/b/{i}"] for i in range(5)] == [(2, 8), (2, 15), (2, 21), (2, 29), (2, 32)]
    assert src.key_positions["/c"] == (3, 2) and src.positions["/d"] == (3, 16)
    assert src.positions[""] == (1, 1)
    key = src.locate("/b/4", key=True)
    assert (key.line, key.col) == (2, 32)
    assert (src.locate("/b", key=True).line, src.locate("/b", key=True).col) == (2, 2)


def test_pointers_escape_tilde_and_slash() -> None:
    assert escape("a/b~c") == "a~1b~0c" and escape(3) == "3"
    src = read_source("s.yaml", "x/y: 1\nm~n: 2\n")
    assert src.positions["/x~1y"] == (1, 6) and src.key_positions["/m~0n"] == (2, 1)


@pytest.mark.parametrize(("text", "message", "line_col"), [
    ('{"a": 1,}', "trailing comma", (1, 9)),
    ('[1,\n ]', "trailing comma", (2, 2)),
    ('{"a" 1}', "expected ':' after the key", (1, 6)),
    ('{"a": 1 "b": 2}', "expected ',' or '}'", (1, 9)),
    ("[1 2]", "expected ',' or ']'", (1, 4)),
    ("{1: 2}", "expected a string key", (1, 2)),
    ('{"a": 1} x', "extra data after the JSON value", (1, 10)),
    ('{"a": ', "unexpected end of file", (1, 7)),
    ('{"a": @}', "expected a value", (1, 7)),
])
def test_json_syntax_errors_say_what_and_where(text: str, message: str, line_col: tuple[int, int]) -> None:
    with pytest.raises(SpecError, match=message) as exc:
        read_source("s.json", text)
    assert where(exc) == line_col


def test_a_duplicate_key_names_the_line_of_the_first() -> None:
    with pytest.raises(SpecError) as exc:
        read_source("s.json", '{"a": 1,\n "a": 2}')
    assert where(exc) == (2, 2) and "already set at line 1" in str(exc.value)
    with pytest.raises(SpecError) as exc:
        read_source("s.yaml", "a: 1\nb: 2\na: 3\n")
    assert where(exc) == (3, 1) and "already set at line 1" in str(exc.value)


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_nesting_is_allowed_up_to_the_limit(suffix: str) -> None:
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert read_source(f"s{suffix}", ok).data is not None
    deep = "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2)
    with pytest.raises(SpecError, match="nested more than"):
        read_source(f"s{suffix}", deep)


def test_yaml_errors_are_located_with_the_usual_fix() -> None:
    with pytest.raises(SpecError, match="tab character") as exc:
        read_source("s.yaml", "a:\n\tb: 1\n")
    assert where(exc)[0] == 2
    with pytest.raises(SpecError, match="second document") as exc:
        read_source("s.yaml", "a: 1\n---\nb: 2\n")
    assert where(exc)[0] == 2
    with pytest.raises(SpecError) as exc:
        read_source("s.yaml", 'a: "open\nb: 2\n')
    assert "the quote '\"' here is never closed" in str(exc.value)
    assert where(exc) == (1, 4)
    with pytest.raises(SpecError, match="U\\+0007") as exc:
        read_source("s.yaml", "a: 1\nb: x\x07\n")
    assert where(exc) == (2, 5)
    with pytest.raises(SpecError, match="plain strings"):
        read_source("s.yaml", "? [a]\n: 1\n")
    assert read_source("s.yaml", "# only a comment\n").data is None
