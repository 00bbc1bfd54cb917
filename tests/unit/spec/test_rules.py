"""Specs that pass the schema but can never pass a trial: contradicting bounds, checks on files never captured."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillmake.core.errors import SpecErrors
from skillmake.spec.loader import load_spec

HEAD = "skill: skills/ok\nagent: {kind: command, command: [python3]}\n"


def load(tmp_path: Path, body: str) -> list[str]:
    """The rendered errors of a spec (empty when it loads)."""
    (tmp_path / "skills/ok").mkdir(parents=True, exist_ok=True)
    (tmp_path / "skills/ok/SKILL.md").write_text("---\nname: ok\n---\nok\n")
    (tmp_path / "in.txt").write_text("x")
    path = tmp_path / "s.eval.yaml"
    path.write_text(HEAD + body)
    try:
        load_spec(str(path), root=str(tmp_path))
    except SpecErrors as exc:
        return [f"{e.loc.line}:{e.loc.col} {e.loc.pointer}: {e.message}" if e.loc else e.message for e in exc.errors]
    return []


def case(checks: str, extra: str = "") -> str:
    return f"cases:\n  - id: a\n    prompt: p\n{extra}    checks:\n{checks}"


def test_row_count_min_above_max(tmp_path: Path) -> None:
    errors = load(tmp_path, case("      - {type: csv_row_count, min: 5, max: 2}\n"))
    assert errors == ["7:36 /cases/0/checks/0/min: min 5 is greater than max 2: no row count can pass"]


@pytest.mark.parametrize(("bounds", "ok"), [("min: 2, max: 2", True), ("min: 2, max: 5", True),
                                            ("min: 3", True), ("max: 0", True), ("min: 3, max: 1", False)])
def test_row_count_bounds_that_can_pass_are_fine(tmp_path: Path, bounds: str, ok: bool) -> None:
    errors = load(tmp_path, case(f"      - {{type: csv_row_count, {bounds}}}\n"))
    assert (errors == []) is ok, errors


def test_row_count_with_count_and_a_bound(tmp_path: Path) -> None:
    errors = load(tmp_path, case("      - {type: csv_row_count, count: 3, min: 1}\n"))
    assert errors == ["7:46 /cases/0/checks/0/min: csv_row_count sets both 'count' and 'min': count wins, "
                      "'min' is ignored"]


def test_min_length_above_max_length_on_the_same_target(tmp_path: Path) -> None:
    checks = ("      - {type: min_length, length: 50}\n      - {type: max_length, length: 10}\n"
              "      - {type: max_length, length: 100, file: out.txt}\n")
    errors = load(tmp_path, case(checks, "    output_files: [out.txt]\n"))
    assert errors == ["8:36 /cases/0/checks/0/length: min_length 50 is greater than the max_length 10 of "
                      "/cases/0/checks/1: no output can pass both"]


def test_bounds_on_different_targets_do_not_contradict(tmp_path: Path) -> None:
    checks = "      - {type: min_tokens, count: 50}\n      - {type: max_tokens, count: 10, file: out.txt}\n"
    assert load(tmp_path, case(checks, "    output_files: [out.txt]\n")) == []


def test_a_check_on_a_file_never_captured(tmp_path: Path) -> None:
    errors = load(tmp_path, case("      - {type: file_exists, file: notes.md}\n"))
    assert errors == ["7:35 /cases/0/checks/0/file: file_exists check reads 'notes.md', which the case never "
                      "captures (it captures no files)"]


@pytest.mark.parametrize("capture", [
    "    output_files: [notes.md]\n",
    "    output_files: ['*.md']\n",
    "    output_files: ['**/*.md']\n",
    "    output_file: notes.md\n",
    "    output_files: [./notes.md]\n",
])
def test_a_check_on_a_captured_file_is_fine(tmp_path: Path, capture: str) -> None:
    assert load(tmp_path, case("      - {type: file_contains, file: ./notes.md, needle: x}\n", capture)) == []


def test_spec_level_output_files_count_unless_the_case_sets_its_own(tmp_path: Path) -> None:
    check = "      - {type: is_json, file: out.json}\n"
    assert load(tmp_path, "output_files: [out.json]\n" + case(check)) == []
    errors = load(tmp_path, "output_files: [out.json]\n" + case(check, "    output_files: [other.json]\n"))
    assert errors == ["9:31 /cases/0/checks/0/file: is_json check reads 'out.json', which the case never captures "
                      "(it captures 'other.json')"]


def test_a_glob_that_cannot_match_the_file(tmp_path: Path) -> None:
    errors = load(tmp_path, case("      - {type: file_exists, file: sub/a.md}\n", "    output_files: ['*.md']\n"))
    assert errors == ["8:35 /cases/0/checks/0/file: file_exists check reads 'sub/a.md', which the case never "
                      "captures (it captures '*.md')"]


def test_a_check_on_a_staged_input_says_so(tmp_path: Path) -> None:
    errors = load(tmp_path, case("      - {type: file_exists, file: in.txt}\n", "    input_files: [in.txt]\n"))
    assert errors == ["8:35 /cases/0/checks/0/file: file_exists check reads 'in.txt', a staged input file the "
                      "case never captures (it captures no files)"]
