"""The clauditor adapter: its own schema (good and bad examples), and the translation into a native spec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from skillmake.core.errors import SpecErrors
from skillmake.spec.adapters import adapter
from skillmake.spec.adapters.clauditor import ADAPTER, harness, judge_provider, skill_of
from skillmake.spec.adapters.detect import foreign_format
from skillmake.spec.loader import load_spec
from skillmake.spec.source import read_source

REPO = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((REPO / "schemas" / "clauditor.schema.json").read_text())
EXAMPLES = REPO / "tests" / "data" / "schemas" / "clauditor"
GOOD = sorted((EXAMPLES / "good").iterdir())
BAD = sorted((EXAMPLES / "bad").iterdir())
SEEDS = REPO / "tests" / "data" / "seeds" / "clauditor"
NO_CLAUDE = {"PATH": "/nonexistent"}


def test_the_schema_is_draft_07_and_has_examples() -> None:
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(SCHEMA)
    assert len(GOOD) >= 3 and len(BAD) >= 10


@pytest.mark.parametrize("path", GOOD, ids=[p.name for p in GOOD])
def test_good_examples_validate_and_are_detected(path: Path) -> None:
    data = json.loads(path.read_text())
    assert list(Draft7Validator(SCHEMA).iter_errors(data)) == []
    assert foreign_format(frozenset(data), str(path)) == "clauditor"


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_bad_examples_fail(path: Path) -> None:
    assert list(Draft7Validator(SCHEMA).iter_errors(json.loads(path.read_text())))


def test_the_registry_finds_the_adapter() -> None:
    assert adapter("clauditor") is ADAPTER


def _translate(tmp_path: Path, data: dict[str, Any], *, name: str = "greet.eval.json",
               environ: dict[str, str] | None = None) -> dict[str, Any]:
    (tmp_path / "greet.md").write_text("Greet $ARGUMENTS.\n")
    spec = tmp_path / name
    spec.write_text(json.dumps(data))
    return ADAPTER.translate(read_source(str(spec)), path=str(spec), root=str(tmp_path),
                             environ=environ or NO_CLAUDE).data


def test_one_case_named_after_the_skill_with_test_args(tmp_path: Path) -> None:
    data = _translate(tmp_path, {"skill_name": "greet", "test_args": "--name Ada", "user_prompt": "hi",
                                 "assertions": [{"id": "a", "type": "contains", "needle": "Ada"}]})
    assert data["skill"] == "greet.md"
    assert data["cases"] == [{"id": "greet", "args": "--name Ada", "user_prompt": "hi",
                              "checks": [{"id": "a", "type": "contains", "needle": "Ada"}]}]


def test_without_test_args_the_skill_runs_with_none(tmp_path: Path) -> None:
    data = _translate(tmp_path, {"assertions": [{"type": "has_urls"}]})
    assert (data["cases"][0]["id"], data["cases"][0]["args"]) == ("greet", "")


def test_variance_thresholds_and_settings(tmp_path: Path) -> None:
    data = _translate(tmp_path, {
        "assertions": [{"id": "u", "type": "has_urls"}], "variance": {"n_runs": 5, "min_stability": 0.9},
        "grading_criteria": [{"id": "c", "criterion": "ok?"}], "grade_thresholds": {"min_pass_rate": 0.6},
        "timeout": 600,
        "sync_tasks": True, "allow_hang_heuristic": False, "system_prompt": "be careful",
        "trigger_tests": {"should_trigger": ["a"], "should_not_trigger": ["b"]},
        "output_file": "out.md", "output_files": ["research/*.md"], "description": "d"})
    assert "trials" not in data  # clauditor's grade and validate run once; n_runs is read by neither
    # clauditor's defaults fill what grade_thresholds leaves out (min_mean_score 0.5)
    assert data["thresholds"] == {"min_pass_rate": 0.6, "min_mean_score": 0.5, "min_stability": 0.9}
    assert data["agent"] == {"kind": "codex", "sync_tasks": True, "allow_hang_heuristic": False}
    assert (data["timeout"], data["system_prompt"], data["description"]) == (600, "be careful", "d")
    assert data["trigger_tests"] == {"should_trigger": ["a"], "should_not_trigger": ["b"]}
    assert (data["cases"][0]["output_file"], data["cases"][0]["output_files"]) == ("out.md", ["research/*.md"])


def test_nulls_mean_unset(tmp_path: Path) -> None:
    data = _translate(tmp_path, {"assertions": [{"type": "has_urls"}], "timeout": None, "grading_model": None,
                                 "variance": None, "system_prompt": None})
    assert not {"timeout", "trials", "thresholds", "system_prompt", "judge"} & set(data)


def test_section_fields_are_required_unless_they_say_not(tmp_path: Path) -> None:
    data = _translate(tmp_path, {"sections": [{"name": "V", "tiers": [{"fields": [
        {"name": "name"}, {"name": "zip", "required": False}]}]}]})
    fields = data["cases"][0]["sections"][0]["tiers"][0]["fields"]
    assert fields == [{"name": "name", "required": True}, {"name": "zip", "required": False}]


def test_grading_criteria_become_criteria_with_the_judge(tmp_path: Path) -> None:
    data = _translate(tmp_path, {"grading_criteria": [{"id": "c", "criterion": "Good?"}],
                                 "grading_model": "claude-sonnet-4-6", "transport": "api"})
    assert data["cases"][0]["criteria"] == [{"id": "c", "criterion": "Good?"}]
    assert data["judge"] == {"provider": "anthropic", "model": "claude-sonnet-4-6"}


@pytest.mark.parametrize(("spec", "environ", "kind"), [
    ({}, NO_CLAUDE, "codex"),
    ({"harness": "claude-code"}, NO_CLAUDE, "claude-code"),
    ({"harness": "codex"}, {"CLAUDITOR_HARNESS": "claude-code", **NO_CLAUDE}, "claude-code"),
    ({"harness": "codex"}, {"CLAUDITOR_HARNESS": "", **NO_CLAUDE}, "codex"),  # empty is unset; an invalid value
    # is refused, as clauditor refuses it (test_clauditor_edges::test_the_resolvers_refuse_what_clauditor_refuses)
])
def test_harness_precedence(spec: dict[str, Any], environ: dict[str, str], kind: str) -> None:
    assert harness(spec, environ)[0] == kind


def test_harness_auto_takes_claude_when_it_is_found(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    claude.write_text("#!/bin/sh\n")
    claude.chmod(0o755)
    assert harness({}, {"PATH": str(tmp_path)})[0] == "claude-code"
    assert harness({"harness": "auto"}, {"SKILLMAKE_CLAUDE": str(claude), **NO_CLAUDE})[0] == "claude-code"
    assert judge_provider({}, {"PATH": str(tmp_path)})[0] == "claude-code"


@pytest.mark.parametrize(("spec", "environ", "provider"), [
    ({}, NO_CLAUDE, "anthropic"),
    ({"transport": "cli"}, NO_CLAUDE, "claude-code"),
    ({"transport": "cli"}, {"CLAUDITOR_TRANSPORT": "api", **NO_CLAUDE}, "anthropic"),
    ({"grading_model": "gpt-5.4"}, NO_CLAUDE, "openai"),
    ({"grading_provider": "openai"}, NO_CLAUDE, "openai"),
    ({"grading_provider": "openai"}, {"CLAUDITOR_GRADING_PROVIDER": "anthropic", **NO_CLAUDE}, "anthropic"),
])
def test_judge_provider_precedence(spec: dict[str, Any], environ: dict[str, str], provider: str) -> None:
    assert judge_provider(spec, environ)[0] == provider


def test_the_skill_is_found_by_placement(tmp_path: Path) -> None:
    (tmp_path / "cmd.md").write_text("x")
    assert skill_of(str(tmp_path / "cmd.eval.json"), str(tmp_path)) == "cmd.md"
    folder = tmp_path / "skills" / "s"
    (folder / "assets").mkdir(parents=True)
    (folder / "SKILL.md").write_text("x")
    assert skill_of(str(folder / "SKILL.eval.json"), str(tmp_path)) == "."
    assert skill_of(str(folder / "assets" / "s.eval.json"), str(tmp_path)) == ".."
    assert skill_of(str(tmp_path / "other.eval.json"), str(tmp_path)) is None


def test_no_skill_beside_the_spec_is_an_error_at_its_top(tmp_path: Path) -> None:
    spec = tmp_path / "lost.eval.json"
    spec.write_text('{"assertions": [{"id": "u", "type": "has_urls"}]}')
    with pytest.raises(SpecErrors, match=r"lost.eval.json:1:1 /: no skill for this clauditor spec"):
        load_spec(str(spec), root=str(tmp_path))


def test_errors_in_the_translation_land_on_the_seed_lines(tmp_path: Path) -> None:
    (tmp_path / "greet.md").write_text("x")
    spec = tmp_path / "greet.eval.json"
    spec.write_text('{\n  "skill_name": "greet",\n  "assertions": [\n    {"id": "a", "type": "regex", "pattern": "x"}'
                    '\n  ],\n  "input_files": ["nope.csv"]\n}\n')
    with pytest.raises(SpecErrors) as caught:
        load_spec(str(spec), root=str(tmp_path))
    (error,) = caught.value.errors
    assert error.loc is not None
    assert (error.loc.line, error.loc.col, error.loc.pointer) == (6, 19, "/input_files/0")


def test_the_reference_examples_load(tmp_path: Path) -> None:
    spec = load_spec(str(SEEDS / "commands/.claude/commands/find-kid-activities.eval.json"),
                     root=str(SEEDS / "commands"))
    assert (spec.skill.kind, spec.skill.name, spec.trials) == ("command", "find-kid-activities", 1)
    (case,) = spec.cases
    assert [c.label for c in case.checks] == ["contains_venues", "has_entries_3", "has_urls_3", "min_length_500",
                                              "no_error"]
    assert [c.id for c in case.criteria] == ["distance_match", "age_appropriate", "cost_tier_match"]
    assert [f.dest for f in case.input_files] == ["sample-venues.csv"]
    assert spec.thresholds.min_stability == 0.8 and spec.judge.model == "claude-sonnet-4-6"
