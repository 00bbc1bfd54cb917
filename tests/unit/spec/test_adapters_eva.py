"""eva's eval.yml → the native spec: its own schema, the translation and where each native field came from."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from skillmake.core.errors import SpecErrors
from skillmake.spec.adapters import adapter
from skillmake.spec.adapters.detect import foreign_format
from skillmake.spec.loader import load_spec
from skillmake.spec.source import read_source

REPO = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((REPO / "schemas" / "eva.schema.json").read_text())
EXAMPLES = REPO / "tests" / "data" / "schemas" / "eva"
SEEDS = REPO / "tests" / "data" / "seeds" / "eva"


def _examples(kind: str) -> list[Path]:
    return sorted((EXAMPLES / kind).glob("*.yaml"))


def test_the_schema_is_draft_07_and_closed() -> None:
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(SCHEMA)
    assert SCHEMA["additionalProperties"] is False
    assert SCHEMA["definitions"]["case"]["additionalProperties"] is False
    assert len(_examples("good")) >= 3 and len(_examples("bad")) >= 5


@pytest.mark.parametrize("path", _examples("good"), ids=lambda p: p.stem)
def test_good_example_validates(path: Path) -> None:
    assert list(Draft7Validator(SCHEMA).iter_errors(read_source(str(path)).data)) == []


@pytest.mark.parametrize("path", _examples("bad"), ids=lambda p: p.stem)
def test_bad_example_fails(path: Path) -> None:
    assert list(Draft7Validator(SCHEMA).iter_errors(read_source(str(path)).data))


def _translate(path: Path, root: Path | None = None) -> Any:
    src = read_source(str(path))
    return adapter("eva").translate(src, path=str(path.resolve()), root=str((root or path.parent).resolve()))


def test_eval_yml_is_detected_as_eva() -> None:
    for seed in ("diff-surgeon", "rejects-empty"):
        path = SEEDS / seed / "eval.yml"
        assert foreign_format(frozenset(read_source(str(path)).data), str(path)) == "eva"


def test_the_case_shape_example_translates_field_by_field() -> None:
    t = _translate(SEEDS / "diff-surgeon" / "eval.yml", SEEDS)
    assert t.data["name"] == "diff-surgeon"  # named after its folder
    assert t.data["skill"] == "prompt.xml"
    assert t.data["agent"] == {"kind": "claude-code", "model": "claude-opus-4-7"}
    assert t.data["timeout"] == 60
    assert "judge" not in t.data  # eva names the judge model per case
    (case,) = t.data["cases"]
    assert case["judge"] == {"model": "claude-haiku-4-5-20251001"}
    assert case["id"] == "small-file-happy-path"
    assert "small.py" in case["prompt"] and "rename total to sum" in case["prompt"]  # inputs_from's inputs.yml
    assert case["checks"] == [{"type": "contains", "needle": "<diff>"}, {"type": "max_tokens", "count": 2000}]
    assert case["rubric"] == "Score the diff for surgical-ness, 1-5." and case["pass_threshold"] == 4
    assert t.notes == ()


def test_native_pointers_map_back_to_the_seed() -> None:
    t = _translate(SEEDS / "diff-surgeon" / "eval.yml", SEEDS)
    assert t.seed_pointer("/agent/model") == "/defaults/model"
    assert t.seed_pointer("/timeout") == "/defaults/timeout_s"
    assert t.seed_pointer("/cases/0/id") == "/cases/0/name"
    assert t.seed_pointer("/cases/0/checks/1/count") == "/cases/0/assert/1/max_tokens"
    assert t.seed_pointer("/cases/0/pass_threshold") == "/cases/0/judge/pass_threshold"
    assert t.seed_pointer("/cases/0/judge/model") == "/cases/0/judge/model"
    assert t.seed_pointer("/cases/0/prompt") == "/cases/0/inputs_from"
    assert t.seed_pointer("/skill") == ""


def _eva(tmp_path: Path, eval_yml: str, prompt: str = "<p>{{x}}</p>", files: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "evals" / "demo"
    folder.mkdir(parents=True)
    (folder / "eval.yml").write_text(eval_yml)
    (folder / "prompt.xml").write_text(prompt)
    for rel, text in (files or {}).items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return folder / "eval.yml"


ONE = "cases:\n  - name: a\n    inputs_from: ex\n    rubric: good?\n"


def test_inputs_from_is_looked_up_under_the_root_first(tmp_path: Path) -> None:
    path = _eva(tmp_path, ONE, files={"ex/inputs.yml": "x: root\n", "evals/demo/ex/inputs.yml": "x: prompt dir\n"})
    assert _translate(path, tmp_path).data["cases"][0]["prompt"] == "<p>root</p>"


def test_inputs_from_falls_back_to_the_prompt_folder(tmp_path: Path) -> None:
    path = _eva(tmp_path, ONE, files={"evals/demo/ex/inputs.yml": "x: prompt dir\n"})
    assert _translate(path, tmp_path).data["cases"][0]["prompt"] == "<p>prompt dir</p>"


def test_inline_inputs_win_over_inputs_from(tmp_path: Path) -> None:
    spec = ONE.replace("    rubric", "    inputs: {x: inline, n: 3}\n    rubric")
    path = _eva(tmp_path, spec, "<p>{{ x }} {{n}}</p>", files={"ex/inputs.yml": "x: file\n"})
    assert _translate(path, tmp_path).data["cases"][0]["prompt"] == "<p>inline 3</p>"


def test_every_assert_op_becomes_its_native_check(tmp_path: Path) -> None:
    ops = ("[{contains: a}, {not_contains: b}, {contains_any: [c, d]}, {contains_all: [e]}, {matches: f}, "
           "{not_matches: g}, {min_tokens: 1}, {max_tokens: 9}, {json_schema: {type: object}}, "
           "{json_schema: s.json}]")
    path = _eva(tmp_path, f"cases:\n  - name: a\n    inputs: {{x: y}}\n    assert: {ops}\n")
    assert _translate(path, tmp_path).data["cases"][0]["checks"] == [
        {"type": "contains", "needle": "a"}, {"type": "not_contains", "needle": "b"},
        {"type": "contains_any", "needles": ["c", "d"]}, {"type": "contains_all", "needles": ["e"]},
        {"type": "matches", "pattern": "f"}, {"type": "not_matches", "pattern": "g"},
        {"type": "min_tokens", "count": 1}, {"type": "max_tokens", "count": 9},
        {"type": "json_schema", "schema": {"type": "object"}}, {"type": "json_schema", "schema_file": "s.json"}]


def test_each_case_keeps_its_own_judge_model(tmp_path: Path) -> None:
    spec = ("cases:\n  - {name: a, inputs: {x: y}, rubric: r, judge: {model: m1}}\n"
            "  - {name: b, inputs: {x: y}, rubric: r, judge: {model: m2, pass_threshold: 3}}\n"
            "  - {name: c, inputs: {x: y}, rubric: r}\n")
    t = _translate(_eva(tmp_path, spec), tmp_path)
    assert "judge" not in t.data and t.notes == ()
    assert [c.get("judge") for c in t.data["cases"]] == [{"model": "m1"}, {"model": "m2"}, None]
    assert t.data["cases"][1]["pass_threshold"] == 3


def test_the_project_agent_runs_eva_with_evas_model(tmp_path: Path) -> None:
    (tmp_path / "skillmake.toml").write_text('agent = {kind = "command", command = ["python3", "a.py"]}\n')
    path = _eva(tmp_path, "defaults: {model: m}\ncases:\n  - {name: a, inputs: {x: y}, rubric: r}\n")
    assert _translate(path, tmp_path).data["agent"] == {"kind": "command", "command": ["python3", "a.py"],
                                                        "model": "m"}


def test_triggering_queries_become_trigger_tests(tmp_path: Path) -> None:
    spec = ("triggering: {should_trigger: [q1], should_not_trigger: [q2], judge: x}\n"
            "cases:\n  - {name: a, inputs: {x: y}, rubric: r}\n")
    t = _translate(_eva(tmp_path, spec), tmp_path)
    assert t.data["trigger_tests"] == {"should_trigger": ["q1"], "should_not_trigger": ["q2"]}
    assert t.notes and "judge" in t.notes[0]


def test_every_translation_error_is_collected_and_located(tmp_path: Path) -> None:
    spec = ("cases:\n  - {name: a, inputs: {y: z}, rubric: r}\n"
            "  - {name: b, inputs_from: nowhere, rubric: r}\n")
    with pytest.raises(SpecErrors) as caught:
        _translate(_eva(tmp_path, spec), tmp_path)
    found = [(e.loc.pointer, e.loc.line) for e in caught.value.errors if e.loc]
    assert found == [("/cases/0/inputs", 2), ("/cases/1/inputs_from", 3)]


def test_inputs_from_outside_the_project_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "ex"
    outside.mkdir(parents=True)
    (outside / "inputs.yml").write_text("x: secret\n")
    project = tmp_path / "p"
    project.mkdir()
    path = _eva(project, ONE.replace("inputs_from: ex", f"inputs_from: {os.path.relpath(outside, project)}"))
    with pytest.raises(SpecErrors, match="outside the project root"):
        _translate(path, project)


def _native(tmp_path: Path, case: str, skill: str = "prompt.xml") -> Path:
    (tmp_path / "prompt.xml").write_text("<task>Rename {{ old }} to {{new}}.</task>\n")
    (tmp_path / "cmd.md").write_text("A command.\n")
    path = tmp_path / "n.eval.yaml"
    path.write_text(f"skill: {skill}\nagent: {{kind: command, command: [cat]}}\ncases:\n  - id: a\n{case}"
                    "    checks: [{type: contains, needle: x}]\n")
    return path


def test_a_native_cases_inputs_render_the_prompt_file_when_the_spec_is_loaded(tmp_path: Path) -> None:
    path = _native(tmp_path, "    inputs: {old: total, new: sum}\n")
    assert load_spec(str(path), root=str(tmp_path)).cases[0].prompt == "<task>Rename total to sum.</task>\n"
    (tmp_path / "prompt.xml").write_text("<task>Now call {{old}} {{new}}.</task>\n")
    assert load_spec(str(path), root=str(tmp_path)).cases[0].prompt == "<task>Now call total sum.</task>\n"


@pytest.mark.parametrize(("case", "skill", "message"), [
    ("    inputs: {old: total}\n", "prompt.xml", "the prompt file uses {{new}}, which this case's inputs do not give"),
    ("    prompt: p\n    inputs: {old: a, new: b}\n", "prompt.xml", "either `prompt` or `inputs`, not both"),
    ("    inputs: {old: a, new: b}\n", "cmd.md", "`inputs` needs a prompt file as the skill"),
])
def test_native_inputs_errors_are_located_at_the_case(tmp_path: Path, case: str, skill: str, message: str) -> None:
    with pytest.raises(SpecErrors) as raised:
        load_spec(str(_native(tmp_path, case, skill)), root=str(tmp_path))
    assert [e.loc.pointer for e in raised.value.errors if e.loc] == ["/cases/0/inputs"]
    assert message in raised.value.errors[0].message
