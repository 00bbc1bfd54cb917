from __future__ import annotations

import pytest

from skillmake.errors import SpecError
from skillmake.source import read_source


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
