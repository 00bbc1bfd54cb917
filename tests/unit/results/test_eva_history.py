"""eva's `.eval.jsonl` rows and the promotion state: built from the report's verdict, written and read against
their schemas, never losing a row or a decision already on disk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft7Validator
from results_fixtures import make_spec, scenario

from skillmake.commands.promote import promoted, read_state, state_path
from skillmake.core.errors import RecordError, SkillmakeError
from skillmake.results import build_report
from skillmake.results.eva_history import append_eva_row, eva_history_path, eva_row, read_eva_rows
from skillmake.spec.adapters.eva import is_eva_spec
from skillmake.spec.loader import load_spec
from skillmake.spec.model import Skill, Thresholds

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "tests" / "data" / "schemas"
SEEDS = REPO / "tests" / "data" / "seeds" / "eva"
TS = "2026-11-23T16:02:11+00:00"
RESULTS = "sha256:" + "ab" * 32


# --- the schemas ---------------------------------------------------------------------------------------------

def _examples(kind: str) -> list[tuple[str, Path]]:
    return [(n, p) for n in ("eva-history", "promotion") for p in sorted((EXAMPLES / n / kind).glob("*.json"))]


@pytest.mark.parametrize("name", ["eva-history", "promotion"])
def test_the_schemas_are_draft_07_with_examples(name: str) -> None:
    schema = json.loads((REPO / "schemas" / f"{name}.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(schema)
    assert list((EXAMPLES / name / "good").glob("*.json"))
    assert len(list((EXAMPLES / name / "bad").glob("*.json"))) >= 3


@pytest.mark.parametrize(("name", "path"), _examples("good"), ids=lambda v: getattr(v, "stem", v))
def test_good_examples_validate(name: str, path: Path) -> None:
    schema = json.loads((REPO / "schemas" / f"{name}.schema.json").read_text())
    assert [e.message for e in Draft7Validator(schema).iter_errors(json.loads(path.read_text()))] == []


@pytest.mark.parametrize(("name", "path"), _examples("bad"), ids=lambda v: getattr(v, "stem", v))
def test_bad_examples_fail(name: str, path: Path) -> None:
    schema = json.loads((REPO / "schemas" / f"{name}.schema.json").read_text())
    assert list(Draft7Validator(schema).iter_errors(json.loads(path.read_text())))


def test_eva_rows_stay_open_and_promotion_state_is_closed() -> None:
    """eva's format may carry fields eva writes; the promotion state is skillmake's own."""
    assert "additionalProperties" not in json.loads((REPO / "schemas" / "eva-history.schema.json").read_text())
    assert json.loads((REPO / "schemas" / "promotion.schema.json").read_text())["additionalProperties"] is False


# --- a row from a report ------------------------------------------------------------------------------------

def _report(**spec_kw: Any) -> dict[str, Any]:
    trials, grades = scenario()  # greeting passes 2/2 with the skill, question 1/2
    return build_report(make_spec(**spec_kw), trials, grades, generated=TS)


def test_a_row_has_evas_fields_only_counted_over_the_cases_of_the_arms_with_the_prompt() -> None:
    row = eva_row(_report(), ts=TS)
    assert row == {"ts": TS, "all_passed": False, "total": 2, "passed": 1, "failed_cases": ["question"]}


def test_all_passed_is_the_reports_verdict_not_a_count_of_its_own() -> None:
    """A threshold the report fails makes the row red even if every case passed: one verdict."""
    report = _report(thresholds=Thresholds(min_pass_rate=0.7))  # 3 of 4 with_skill trials pass: 0.75
    assert report["verdict"]["passed"] is True
    assert eva_row(report, ts=TS)["all_passed"] is True
    report = _report(thresholds=Thresholds(min_pass_rate=0.9))
    assert report["verdict"]["passed"] is False
    assert eva_row(report, ts=TS)["all_passed"] is False


# --- appending and reading ---------------------------------------------------------------------------------

ROW = {"ts": TS, "all_passed": True, "total": 1, "passed": 1, "failed_cases": []}


def test_rows_are_appended_one_per_call_never_deduplicated(tmp_path: Path) -> None:
    path = tmp_path / ".eval.jsonl"
    append_eva_row(path, ROW)
    append_eva_row(path, ROW)  # eva writes one row per invocation, even when it says the same
    assert read_eva_rows(path.read_bytes()) == [ROW, ROW]
    assert path.read_bytes().count(b"\n") == 2


def test_rows_already_there_and_a_torn_line_are_kept_as_they_are(tmp_path: Path) -> None:
    path = tmp_path / ".eval.jsonl"
    eva_wrote = b'{"ts": "2026-11-20T09:12:03", "all_passed": false, "total": 1, "passed": 0, ' \
                b'"failed_cases": ["a"], "model": "opus"}\n{"ts": "2026-11-2'
    path.write_bytes(eva_wrote)
    append_eva_row(path, ROW)
    data = path.read_bytes()
    assert data.startswith(eva_wrote + b"\n")
    rows = read_eva_rows(data)
    assert [r["all_passed"] for r in rows] == [False, True] and rows[0]["model"] == "opus"


def test_a_row_that_does_not_match_evas_schema_is_never_written(tmp_path: Path) -> None:
    path = tmp_path / ".eval.jsonl"
    with pytest.raises(RecordError):
        append_eva_row(path, {**ROW, "total": -1})
    assert not path.exists()


def test_a_file_that_cannot_be_written_is_one_error_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / ".eval.jsonl"
    path.mkdir()  # not a file
    with pytest.raises(SkillmakeError) as caught:
        append_eva_row(path, ROW)
    assert "cannot add a row to eva's history" in caught.value.render()
    assert "hint:" in caught.value.render()


def test_rows_read_back_are_checked_against_the_schema() -> None:
    data = b'{"ts": "x", "all_passed": "yes", "total": 1, "passed": 1, "failed_cases": []}\n[]\n' + orjson.dumps(ROW)
    assert read_eva_rows(data) == [ROW]


# --- which specs are eva's -----------------------------------------------------------------------------------

def _eva_spec(tmp_path: Path, name: str = "diff-surgeon") -> Any:
    shutil.copytree(SEEDS / name, tmp_path / "prompts" / name)
    return load_spec(str(tmp_path / "prompts" / name / "eval.yml"), root=str(tmp_path))


def test_an_eva_eval_is_told_apart_from_a_native_spec_and_its_history_sits_beside_it(tmp_path: Path) -> None:
    spec = _eva_spec(tmp_path)
    assert is_eva_spec(spec)
    assert eva_history_path(spec.path) == tmp_path / "prompts" / "diff-surgeon" / ".eval.jsonl"
    assert not is_eva_spec(make_spec())
    from dataclasses import replace

    # A native spec testing the very same prompt.xml is not eva's: no .eval.jsonl for it.
    native = replace(spec, path=str(tmp_path / "twin.eval.yaml"))
    assert not is_eva_spec(native)
    other = replace(spec, skill=Skill(name="x", path=str(tmp_path / "other.xml"), kind="prompt"))
    assert not is_eva_spec(other)


# --- the promotion state -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("spec", "state"), [
    ("/p/prompts/diff/eval.yml", "/p/prompts/diff/promotion.json"),
    ("/p/prompts/diff/eval.yaml", "/p/prompts/diff/promotion.json"),
    ("/p/shout.eval.yaml", "/p/shout.promotion.json"),
    ("/p/medieval.eval.json", "/p/medieval.promotion.json"),
    ("/p/skills/x/evals/evals.json", "/p/skills/x/evals/promotion.json"),
    ("/p/.claude/commands/fmt.eval.json", "/p/.claude/commands/fmt.promotion.json"),
])
def test_the_state_sits_beside_its_spec(spec: str, state: str) -> None:
    assert str(state_path(spec)) == state


def test_promotion_walks_draft_tested_ready_and_keeps_every_step() -> None:
    tested = promoted(None, spec="diff", results=RESULTS, ts=TS)
    assert tested["state"] == "tested"
    ready = promoted(tested, spec="diff", results=RESULTS, ts="later")
    assert ready["state"] == "ready"
    assert [(h["from"], h["to"], h["ts"]) for h in ready["history"]] == [("draft", "tested", TS),
                                                                          ("tested", "ready", "later")]


def test_a_missing_state_is_draft_and_a_broken_one_is_an_error_never_a_reset(tmp_path: Path) -> None:
    path = tmp_path / "promotion.json"
    assert read_state(path) is None
    path.write_text('{"schema": "skillmake/promotion@1", "spec": "d", "state": "shipped", "history": []}')
    with pytest.raises(RecordError):
        read_state(path)
    path.write_text("{")
    with pytest.raises(SkillmakeError) as caught:
        read_state(path)
    assert "delete" in caught.value.render()
