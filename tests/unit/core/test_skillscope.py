"""skillscope.not_skill, the rule of what in a SKILL.md folder is the skill (docs/keys.md), case by case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillmake.core.skillscope import RESULTS_MAX_BYTES, not_skill, results_file
from skillmake.spec.model import Skill
from skillmake.spec.skillfiles import manifest


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    top = tmp_path / "skill"
    for rel, text in {"SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n", **files}.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text)
    return top


def _files(top: Path) -> list[str]:
    return sorted(manifest(Skill(name="s", path=str(top), kind="folder"))["files"])


SKILL_FILES = {"reference.md": "x", "scripts/run.sh": "echo", "data/table.json": '{"rows": [1, 2]}',
               "data/list.json": "[1, 2]", "notes/assertions/a.py": "x",  # not at the top: part of the skill
               "data/schema.json": '{"$id": "https://example.com/s.json"}', "data/run.json": '{"run_id": "x"}'}
NOT_SKILL = {"s.eval.yaml": "x", "sub/t.eval.json": "{}", "h.eval.jsonl": "{}", "s.promotion.json": "{}",
             "skillmake.toml": "", "sub/skillmake.toml": "", "eval.json": "{}", "evals/evals.json": "{}",
             "assertions/check.py": "x", ".caliper/results/s/1.json": "{}", ".clauditor/iteration-1/g.json": "{}",
             ".git/HEAD": "x", "__pycache__/a.pyc": "x", ".pytest_cache/v": "x", ".skillmake/x": "x",
             "out.json": json.dumps({"version": 1, "run_id": "r", "reports": []}),
             "results/caliper.json": json.dumps({"task_results": [], "aggregate": {}}),
             "schemas/spec.schema.json": json.dumps({"$id": "https://skillmake.dev/schemas/spec.schema.json"})}


def test_only_the_skills_own_files_are_hashed(tmp_path: Path) -> None:
    top = _folder(tmp_path, {**SKILL_FILES, **NOT_SKILL})
    assert _files(top) == sorted(["SKILL.md", *SKILL_FILES])


def test_writing_what_is_not_the_skill_changes_no_digest(tmp_path: Path) -> None:
    top = _folder(tmp_path, SKILL_FILES)
    before = manifest(Skill(name="s", path=str(top), kind="folder"))
    for rel, text in NOT_SKILL.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text)
        assert manifest(Skill(name="s", path=str(top), kind="folder")) == before, rel


def test_assertions_is_the_skills_own_folder_without_a_spec_beside_it(tmp_path: Path) -> None:
    top = _folder(tmp_path, {"assertions/check.py": "x"})
    assert "assertions/check.py" in _files(top)
    (top / "s.eval.yaml").write_text("x")
    assert "assertions/check.py" not in _files(top)


@pytest.mark.parametrize(("text", "expected"), [
    ('{"run_id": "r", "reports": []}', True),
    ('{"task_results": [], "aggregate": {}}', True),
    ('{"$id": "https://skillmake.dev/schemas/x.schema.json"}', True),
    ('{"run_id": "r"}', False),
    ('{"$id": "https://example.com/x"}', False),
    ('["run_id", "reports"]', False),
    ('{"run_id": "r", "reports": [}', False),
])
def test_results_files_by_content(tmp_path: Path, text: str, expected: bool) -> None:
    path = tmp_path / "f.json"
    path.write_text(text)
    assert results_file(str(path)) is expected


def test_a_large_json_file_is_never_sniffed(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"run_id": "r", "reports": [], "pad": "' + "x" * RESULTS_MAX_BYTES + '"}')
    assert not results_file(str(path))
    assert not not_skill(str(tmp_path), "big.json", top=str(tmp_path))


def test_an_edited_file_is_sniffed_again(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text('{"rows": []}')
    assert not results_file(str(path))
    path.write_text('{"run_id": "a-longer-run", "reports": []}')
    assert results_file(str(path))
