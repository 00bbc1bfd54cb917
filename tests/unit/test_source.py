from __future__ import annotations

import pytest

from skillmake.core.errors import SpecError
from skillmake.spec.source import read_source


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
