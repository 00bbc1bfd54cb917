"""skill-creator's evals.json: its own schema (good/bad examples), the translation into a native spec, and a corpus
of malformed files each reported at its own line:col under the seed's pointers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from skillmake.core.errors import SpecErrors
from skillmake.spec.adapters import skill_creator
from skillmake.spec.adapters.detect import foreign_format
from skillmake.spec.loader import load_spec
from skillmake.spec.source import read_source

REPO = Path(__file__).resolve().parents[3]
SEEDS = REPO / "tests" / "data" / "seeds" / "skill-creator"
INVALID = SEEDS / "invalid"
AGENT = {"kind": "command", "command": ["true"]}
SCHEMAS = ["skill-creator", "skill-creator-trigger-eval-set"]


def _examples(verdict: str) -> list[Path]:
    return sorted(p for name in SCHEMAS for p in (REPO / "tests/data/schemas" / name / verdict).glob("*.json"))


def _schema(path: Path) -> Draft7Validator:
    schema = json.loads((REPO / "schemas" / f"{path.parts[-3]}.schema.json").read_text())
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


@pytest.mark.parametrize("path", _examples("good"), ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_good_examples_pass_their_schema(path: Path) -> None:
    assert list(_schema(path).iter_errors(json.loads(path.read_text()))) == []


@pytest.mark.parametrize("path", _examples("bad"), ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_bad_examples_fail_their_schema(path: Path) -> None:
    assert list(_schema(path).iter_errors(json.loads(path.read_text())))


def test_both_examples_of_the_seed_documents_are_detected_as_skill_creator() -> None:
    for skill in ("example-skill", "reference-skill"):
        path = SEEDS / skill / "evals" / "evals.json"
        assert foreign_format(frozenset(json.loads(path.read_text())), str(path)) == "skill-creator"


@pytest.mark.parametrize("eval_id", [0, 1, 7, 42, 1000])
def test_case_ids_are_lossless(eval_id: int) -> None:
    assert skill_creator.case_id(eval_id) == f"eval-{eval_id}"
    assert skill_creator.eval_id_of(skill_creator.case_id(eval_id)) == eval_id


@pytest.mark.parametrize("case", ["one", "eval-", "eval-x", "eval-01", "evals-1", "x-1"])
def test_other_case_ids_have_no_eval_id(case: str) -> None:
    assert skill_creator.eval_id_of(case) is None


def _translate(path: Path, root: Path) -> skill_creator.Translation:
    return skill_creator.ADAPTER.translate(read_source(str(path)), path=str(path), root=str(root))


def test_the_seed_documents_example_translates_field_by_field() -> None:
    t = _translate(SEEDS / "example-skill" / "evals" / "evals.json", SEEDS)
    assert t.data == {
        "name": "example-skill", "skill": "..", "agent": {"kind": "claude-code"}, "baseline": True,
        "cases": [
            {"id": "eval-0", "eval_id": 0, "prompt": "The user's task prompt",
             "expected_output": "Brief description of what success looks like",
             "expectations": [{"text": "Human-readable description of what this checks", "name": "assertion_id",
                               "type": "file_exists|row_count|contains_text|custom"}]},
            {"id": "eval-1", "eval_id": 1, "prompt": "Another test prompt",
             "expected_output": "Expected result description",
             "input_files": ["../path/to/input/file"], "expectations": ["Expected result description"]},
        ]}
    # Native pointers land on the seed's own fields.
    assert t.seed_pointer("/cases/0/expectations/0") == "/evals/0/assertions/0"
    assert t.seed_pointer("/cases/0/expectations/0/text") == "/evals/0/assertions/0/description"
    assert t.seed_pointer("/cases/0/expectations/0/name") == "/evals/0/assertions/0/name"
    assert t.seed_pointer("/cases/0/eval_id") == "/evals/0/id"
    assert t.seed_pointer("/cases/1/expectations/0") == "/evals/1/expected_output"
    assert t.seed_pointer("/cases/1/input_files/0") == "/evals/1/files/0"
    assert t.seed_pointer("/cases/1/id") == "/evals/1/id"
    assert t.seed_pointer("/name") == "/skill_name"
    assert not any(n.startswith("assertions[].name") for n in t.notes)  # kept: the expectation's name
    assert not any(n.startswith("assertions[].type") for n in t.notes)  # kept: the expectation's type


def test_expectations_and_files_relative_to_the_skill_folder() -> None:
    t = _translate(SEEDS / "reference-skill" / "evals" / "evals.json", SEEDS)
    case = t.data["cases"][0]
    assert case["id"] == "eval-1"
    assert case["input_files"] == ["files/sample1.pdf"]  # evals/files/sample1.pdf from the skill's folder
    assert case["expectations"] == ["The output includes X", "The skill used script Y"]
    assert t.seed_pointer("/cases/0/expectations/1") == "/evals/0/expectations/1"
    assert t.data["name"] == "reference-skill"  # the skill folder's name, not skill_name


def test_expectations_come_before_assertions_and_category_is_a_tag(tmp_path: Path) -> None:
    skill = tmp_path / "docs"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: docs\ndescription: d\n---\nbody\n")
    shutil.copy(REPO / "tests/data/schemas/skill-creator/good/wild-extras.json", skill / "evals" / "evals.json")
    t = _translate(skill / "evals" / "evals.json", tmp_path)
    case = t.data["cases"][0]
    assert case["expectations"] == ["Names four forms", {"text": "A plan is given", "name": "has_plan"}]
    assert case["tags"] == ["classification"]
    assert case["input_files"] == ["../SKILL.md"]
    assert t.data["description"] == "Sample evaluation prompts."
    assert t.seed_pointer("/cases/0/expectations/1/text") == "/evals/0/assertions/0/description"


def test_the_loaded_spec_runs_each_eval_with_and_without_the_skill() -> None:
    spec = load_spec(str(SEEDS / "example-skill" / "evals" / "evals.json"), root=str(SEEDS), default_agent=AGENT)
    assert spec.name == "example-skill"
    assert spec.skill.path == str(SEEDS / "example-skill") and spec.skill.kind == "folder"
    assert [a.name for a in spec.arms] == ["with_skill", "without_skill"]
    assert [c.id for c in spec.cases] == ["eval-0", "eval-1"]
    assert spec.cases[1].input_files[0].dest == "file"


def test_a_trigger_eval_set_beside_evals_json_becomes_trigger_tests(tmp_path: Path) -> None:
    shutil.copytree(SEEDS / "example-skill", tmp_path / "example-skill")
    shutil.copy(REPO / "tests/data/schemas/skill-creator-trigger-eval-set/good/seed-example.json",
                tmp_path / "example-skill" / "evals" / "trigger-eval-set.json")
    spec = load_spec(str(tmp_path / "example-skill" / "evals" / "evals.json"), root=str(tmp_path),
                     default_agent=AGENT)
    assert spec.trigger_tests is not None
    assert [(q.query, q.should_trigger) for q in spec.trigger_tests.queries] == [
        ("ok so my boss sent me this xlsx file and wants me to add a profit margin column", True),
        ("extract tables from this PDF and put them in a spreadsheet", True),
        ("write me a fibonacci function", False)]
    assert (spec.trigger_tests.runs, spec.trigger_tests.threshold) == (3, 0.5)  # run_eval.py's defaults


def _skill_project(root: Path, evals: Path) -> Path:
    skill = root / "myskill"
    (skill / "evals" / "files").mkdir(parents=True)
    (skill / "evals" / "more").mkdir()
    (skill / "SKILL.md").write_text("---\nname: myskill\ndescription: d\n---\nbody\n")
    (skill / "evals" / "files" / "data.csv").write_text("a\n")
    (skill / "evals" / "more" / "data.csv").write_text("b\n")
    shutil.copy(evals, skill / "evals" / "evals.json")
    triggers = evals.with_name(evals.name[: -len(".json")] + ".triggers.json")
    if triggers.exists():
        shutil.copy(triggers, skill / "evals" / "trigger-eval-set.json")
    return skill / "evals" / "evals.json"


CORPUS = sorted(p for p in INVALID.glob("*.json") if not p.name.endswith(".triggers.json"))


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 10
    assert all(p.with_suffix(".err").is_file() for p in CORPUS)


@pytest.mark.parametrize("seed", CORPUS, ids=lambda p: p.stem)
def test_each_malformed_file_is_reported_at_its_own_line_and_pointer(seed: Path, tmp_path: Path) -> None:
    path = _skill_project(tmp_path, seed)
    with pytest.raises(SpecErrors) as caught:
        load_spec(str(path), root=str(tmp_path), default_agent=AGENT)
    assert str(caught.value) + "\n" == seed.with_suffix(".err").read_text()


def test_a_native_rule_error_lands_on_the_seed_field_it_came_from(tmp_path: Path) -> None:
    """An unsafe spec name comes from the folder name; the native rule's error is shown at skill_name."""
    skill = tmp_path / "my skill"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (skill / "evals" / "evals.json").write_text(
        '{\n  "skill_name": "s",\n  "evals": [{"id": 0, "prompt": "p", "expectations": ["e"]}]\n}\n')
    with pytest.raises(SpecErrors) as caught:
        load_spec(str(skill / "evals" / "evals.json"), root=str(tmp_path), default_agent=AGENT)
    (error,) = caught.value.errors
    assert error.loc is not None
    assert (error.loc.line, error.loc.col, error.loc.pointer) == (2, 17, "/skill_name")


def test_a_skill_folder_without_skill_md_is_an_error_at_the_top(tmp_path: Path) -> None:
    (tmp_path / "loose" / "evals").mkdir(parents=True)
    path = tmp_path / "loose" / "evals" / "evals.json"
    path.write_text('{"skill_name": "s", "evals": [{"id": 0, "prompt": "p", "expectations": ["e"]}]}\n')
    with pytest.raises(SpecErrors, match=r"loose/evals/evals.json:1:1 /: the skill folder 'loose' has no SKILL.md"):
        load_spec(str(path), root=str(tmp_path), default_agent=AGENT)
