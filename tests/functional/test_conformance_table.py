"""docs/formats.md's conformance table is generated from scripts/conformance.py, and every row is backed by tests:
a supported, partial or refused row names tests that exist and are not expected to fail (the suite runs them), a
gap row says why, and the page holds exactly the generated section (`python scripts/conformance.py --write`)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("skillmake_conformance", ROOT / "scripts" / "conformance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


conformance = load()
ROWS = [(fmt, r) for fmt, rows in conformance.FORMATS.items() for r in rows]


@cache
def functions_of(path: str) -> dict[str, bool]:
    """The test functions of a file: name → whether it is marked xfail."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return {node.name: any("xfail" in ast.unparse(d) for d in node.decorator_list)
            for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_the_four_formats_and_only_known_statuses() -> None:
    assert list(conformance.FORMATS) == ["clauditor", "skill-creator", "caliper", "eva"]
    assert {r.status for _, r in ROWS} <= set(conformance.STATUSES)


@pytest.mark.parametrize(("fmt", "row"), ROWS, ids=[f"{f}:{r.field[:40]}" for f, r in ROWS])
def test_each_row_is_backed_by_tests_or_justified(fmt: str, row: object) -> None:
    status, note, tests = row.status, row.note, row.tests  # type: ignore[attr-defined]
    if status in conformance.PASSING:
        assert tests, f"{fmt}: a {status} row names the tests that prove it"
    if status in ("gap", "elsewhere"):
        assert note.strip(), f"{fmt}: a {status} row says why"
    for test in tests:
        path, _, name = test.partition("::")
        found = functions_of(path)
        assert name in found, f"{test} does not exist"
        if status in conformance.PASSING:
            assert not found[name], f"{test} is expected to fail, so it proves no {status} row"


def test_the_xfail_tests_a_gap_row_cites_by_name_exist() -> None:
    """A gap row's note may name the xfail(strict) test that pins the fix; that test must exist and be xfail."""
    cited = {word.strip("`,()") for _, r in ROWS if r.status == "gap"
             for word in r.note.split() if word.startswith("`test_")}
    catalogue = functions_of("tests/functional/test_incremental_seeds.py")
    for name in cited:
        assert catalogue.get(name) is True, f"{name} is not an xfail test of test_incremental_seeds.py"


def test_docs_formats_holds_exactly_the_generated_section() -> None:
    text = conformance.DOC.read_text(encoding="utf-8")
    assert conformance.current(text) == conformance.section(), "run: python scripts/conformance.py --write"


def test_no_gap_row_in_the_conformance_section_lacks_a_reason() -> None:
    for line in conformance.section().splitlines():
        if "**GAP**" in line:
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert cells[2] not in ("", "—"), line
