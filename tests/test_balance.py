"""The suite's own plumbing (tests/balance.py, tests/bytecode.py): heaviest files first, each file's tests kept
together and in order; the package's bytecode current after the session's compile."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from tests import balance, bytecode


def items(*nodeids: str) -> list[pytest.Item]:
    return cast(list[pytest.Item], [SimpleNamespace(nodeid=n) for n in nodeids])


def test_the_heaviest_file_goes_first_and_each_file_stays_whole_and_in_order() -> None:
    heavy = next(iter(balance.WEIGHTS))  # the table's heaviest file
    units = [f"tests/unit/core/test_x.py::test_{i}" for i in range(100)]  # many quick tests: xdist's own pick
    new = [f"tests/functional/test_new.py::test_{i}" for i in range(4)]  # few slow ones: xdist sent them last
    given = items(*units[:50], f"{heavy}::test_b", *new, *units[50:], f"{heavy}::test_a")
    ordered = [i.nodeid for i in balance.order(given)]
    assert ordered[:2] == [f"{heavy}::test_b", f"{heavy}::test_a"]  # collection order within the file
    assert ordered[2:] == [*new, *units]
    assert sorted(ordered) == sorted(i.nodeid for i in given)


def test_a_file_missing_from_the_table_is_weighed_by_its_tests_and_folder() -> None:
    assert balance.weight_of("tests/e2e/test_new.py", 2) > balance.weight_of("tests/unit/core/test_new.py", 60)
    assert balance.weight_of("tests/functional/test_new.py", 1000) == balance.UNLISTED
    assert all(weight >= 5 for weight in balance.WEIGHTS.values())


def test_the_tables_files_exist() -> None:
    root = Path(__file__).resolve().parent.parent
    missing = [path for path in balance.WEIGHTS if not (root / path).is_file()]
    assert missing == [], "remove these from tests/balance.py's WEIGHTS, or re-measure"


def test_every_module_of_the_package_has_current_bytecode() -> None:
    """After compile_package (which pytest_configure runs before any test), Python would use each of these .pyc."""
    assert bytecode.compile_package()
    stale: list[Any] = []
    for source in bytecode.PACKAGE.rglob("*.py"):
        cached = Path(importlib.util.cache_from_source(str(source)))
        header = cached.read_bytes()[:16] if cached.exists() else b""
        stat = source.stat()
        if header[8:16] != (int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + (
                stat.st_size & 0xFFFFFFFF).to_bytes(4, "little"):
            stale.append(source)
    assert stale == []
