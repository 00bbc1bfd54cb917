"""skill-creator's results kept: integer eval ids, assertion names, eval_metadata.json and benchmark.json's
iteration history (with skill-creator's timestamps); and none of it changes a key of a spec that does not use it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from skillmake.results import benchmark_json, grading_json
from skillmake.results.benchmark import skill_creator_time, with_history
from skillmake.results.checkout import eval_metadata
from skillmake.run.judges import expectations as judge
from skillmake.run.keys import KeyMaker, grade_part
from skillmake.spec.loader import load_spec
from skillmake.spec.model import WITH_SKILL, Spec
from skillmake.spec.schema import validate_record

sys.path.insert(0, str(Path(__file__).parent))
from results_fixtures import trial_record

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "tests" / "data" / "schemas" / "eval-metadata"
TS = "2026-11-22T20:10:00+00:00"

PLAIN = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
baseline: true
cases:
  - id: eval-3
    prompt: do it
    expected_output: it is done
    expectations: [The output says done, The output is short]
"""
NAMED = PLAIN.replace("  - id: eval-3\n", "  - id: eval-3\n    eval_id: 3\n").replace(
    "expectations: [The output says done, The output is short]",
    "expectations: [{text: The output says done, name: says_done}, The output is short]")
# Computed by the code before eval_id and named expectations existed (HEAD of issue 10's first wave).
PLAIN_GRADE_PART = "sha256:22ae0b6b3ffb2ff9c66c1afb727e450b78239723d67c14a21251ab469f4d9d7e"
PLAIN_TRIAL_KEY = "sha256:aebbdaabf6510501bb94a7e7f2d66e21cefa9b8c1dce5b047608c2b7e71403dc"


def load(root: Path, text: str) -> Spec:
    if not (root / "skills/s/SKILL.md").exists():
        (root / "skills/s").mkdir(parents=True)
        (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
        (root / "agent.py").write_text("print('hi')\n")
    (root / "p.eval.yaml").write_text(text)
    return load_spec(str(root / "p.eval.yaml"), root=str(root))


def keys_of(root: Path, spec: Spec) -> tuple[str, str]:
    case = spec.cases[0]
    return grade_part(spec, case).digest, KeyMaker(str(root)).trial_key(spec, case, spec.arms[0], 0).key


def judged(trial: dict[str, Any], *verdicts: bool, outcome: str = "fail") -> dict[str, Any]:
    """A grade whose expectations came from the expectations judge (ids expectation-0, -1, …)."""
    from results_fixtures import grade_record

    grade = grade_record(trial, outcome)
    grade["expectations"] = [{"text": f"statement {i}", "passed": p, "evidence": "seen", "source": "judge",
                              "id": judge.entry_id(i), "score": 1.0 if p else 0.0} for i, p in enumerate(verdicts)]
    return grade


# --- keys: a spec that does not use the features keeps its keys ---------------------------------------------

def test_a_plain_spec_keeps_the_keys_it_had(tmp_path: Path) -> None:
    assert keys_of(tmp_path, load(tmp_path, PLAIN)) == (PLAIN_GRADE_PART, PLAIN_TRIAL_KEY)


def test_eval_id_and_names_are_labels_not_key_inputs(tmp_path: Path) -> None:
    """Naming an expectation or giving the eval id re-runs and re-grades nothing: the judge never sees either."""
    assert keys_of(tmp_path, load(tmp_path, NAMED)) == (PLAIN_GRADE_PART, PLAIN_TRIAL_KEY)
    renamed = load(tmp_path, NAMED.replace("name: says_done", "name: other").replace("eval_id: 3", "eval_id: 9"))
    assert keys_of(tmp_path, renamed) == (PLAIN_GRADE_PART, PLAIN_TRIAL_KEY)
    reworded = load(tmp_path, NAMED.replace("text: The output says done", "text: The output says finished"))
    assert keys_of(tmp_path, reworded)[0] != PLAIN_GRADE_PART  # the text is what the judge grades


# --- the model ---------------------------------------------------------------------------------------------

def test_named_expectations_load_as_texts_and_names(tmp_path: Path) -> None:
    case = load(tmp_path, NAMED).cases[0]
    assert case.expectations == ("The output says done", "The output is short")
    assert case.expectation_names == ("says_done", None)
    assert (case.expectation_name(0), case.expectation_name(1)) == ("says_done", None)
    assert (case.eval_id, case.result_id) == (3, 3)


def test_a_plain_case_has_no_names_and_its_position_as_result_id(tmp_path: Path) -> None:
    case = load(tmp_path, PLAIN).cases[0]
    assert case.expectation_names == ()
    assert (case.eval_id, case.result_id) == (None, 0)
    unnamed = load(tmp_path, PLAIN.replace("[The output says done,", "[{text: The output says done},")).cases[0]
    assert unnamed.expectations == case.expectations and unnamed.expectation_names == ()


# --- names flow to grade records, grading.json and benchmark.json --------------------------------------------

def test_named_puts_the_spec_names_on_the_judge_verdicts(tmp_path: Path) -> None:
    case = load(tmp_path, NAMED).cases[0]
    grade = judged(trial_record("eval-3", WITH_SKILL, 0), True, False)
    grade["expectations"].insert(0, {"text": "check", "passed": True, "evidence": "", "source": "check",
                                     "id": judge.entry_id(0)})  # a check whose id happens to look alike
    out = judge.named(case, grade["expectations"])
    assert [e["id"] for e in out] == [judge.entry_id(0), "says_done", judge.entry_id(1)]
    assert grade["expectations"][1]["id"] == judge.entry_id(0)  # the stored record is left as it was
    plain = load(tmp_path, PLAIN).cases[0]
    assert judge.named(plain, grade["expectations"]) == grade["expectations"]


def test_grading_json_names_only_named_expectations() -> None:
    grade = judged(trial_record("eval-3", WITH_SKILL, 0), True, False)
    grade["expectations"][0]["id"] = "says_done"
    out = grading_json(grade, names={"says_done"})
    validate_record("grading.schema.json", out, what="grading")
    assert out["expectations"] == [{"text": "statement 0", "passed": True, "evidence": "seen", "name": "says_done"},
                                   {"text": "statement 1", "passed": False, "evidence": "seen"}]
    assert all("name" not in e for e in grading_json(grade)["expectations"])  # the shape without names


def test_benchmark_takes_eval_id_and_assertion_names(tmp_path: Path) -> None:
    spec = load(tmp_path, NAMED)
    trial = trial_record("eval-3", WITH_SKILL, 0)
    grade = judged(trial, True, False)
    grade["expectations"] = judge.named(spec.cases[0], grade["expectations"])
    bench = benchmark_json(spec, [trial], [grade], timestamp=TS)
    validate_record("benchmark.schema.json", bench, what="benchmark")
    test = bench["iterations"][0]["configurations"][0]["tests"][0]
    assert (test["eval_id"], test["eval_name"]) == (3, "eval-3")
    assert [a["name"] for a in test["assertions"]] == ["says_done", judge.entry_id(1)]


def test_benchmark_eval_id_is_the_position_without_one(tmp_path: Path) -> None:
    spec = load(tmp_path, PLAIN)
    test = benchmark_json(spec, [], [], timestamp=TS)["iterations"][0]["configurations"][0]["tests"][0]
    assert test["eval_id"] == 0


def test_evals_json_ids_reach_the_benchmark(tmp_path: Path) -> None:
    skill = tmp_path / "docs"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: docs\ndescription: d\n---\nbody\n")
    (skill / "evals/evals.json").write_text(json.dumps({"skill_name": "docs", "evals": [
        {"id": 7, "prompt": "p", "expectations": ["e"]},
        {"id": 2, "prompt": "q", "assertions": [{"name": "has_plan", "description": "A plan is given"}]}]}))
    spec = load_spec(str(skill / "evals/evals.json"), root=str(tmp_path),
                     default_agent={"kind": "command", "command": ["true"]})
    assert [(c.id, c.eval_id) for c in spec.cases] == [("eval-7", 7), ("eval-2", 2)]
    assert spec.cases[1].expectation_names == ("has_plan",)
    tests = benchmark_json(spec, [], [], timestamp=TS)["iterations"][0]["configurations"][0]["tests"]
    assert [t["eval_id"] for t in tests] == [7, 2]


# --- eval_metadata.json ------------------------------------------------------------------------------------

def test_eval_metadata_of_a_case(tmp_path: Path) -> None:
    spec = load(tmp_path, NAMED.replace("    prompt: do it\n",
                                        "    prompt: do it\n    checks: [{id: short, type: max_length, length: 9}]\n"))
    out = eval_metadata(spec, spec.cases[0])
    validate_record("eval-metadata.schema.json", out, what="eval metadata")
    assert out == {"eval_id": 3, "eval_name": "eval-3", "prompt": "do it", "assertions": [
        {"name": "short", "description": "short", "type": "max_length"},
        {"name": "says_done", "description": "The output says done"},
        {"name": judge.entry_id(1), "description": "The output is short"}]}


def test_eval_metadata_of_a_plain_case_uses_its_position(tmp_path: Path) -> None:
    spec = load(tmp_path, PLAIN)
    assert eval_metadata(spec, spec.cases[0])["eval_id"] == 0


def _schema() -> Draft7Validator:
    schema = json.loads((REPO / "schemas" / "eval-metadata.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


@pytest.mark.parametrize("path", sorted((EXAMPLES / "good").glob("*.json")), ids=lambda p: p.stem)
def test_eval_metadata_good_examples(path: Path) -> None:
    assert [e.message for e in _schema().iter_errors(json.loads(path.read_text()))] == []


@pytest.mark.parametrize("path", sorted((EXAMPLES / "bad").glob("*.json")), ids=lambda p: p.stem)
def test_eval_metadata_bad_examples(path: Path) -> None:
    assert list(_schema().iter_errors(json.loads(path.read_text())))


# --- benchmark.json's iteration history --------------------------------------------------------------------

@pytest.mark.parametrize(("given", "shown"), [
    ("2026-11-22T20:10:00+00:00", "2026-11-22T20:10:00Z"),
    ("2026-11-22T20:10:00Z", "2026-11-22T20:10:00Z"),
    ("2026-11-22T21:10:00.123456+01:00", "2026-11-22T20:10:00Z"),
    ("2026-11-22T20:10:00", "2026-11-22T20:10:00Z"),
    ("not a time", "not a time"),
])
def test_timestamps_in_skill_creators_form(given: str, shown: str) -> None:
    assert skill_creator_time(given) == shown


def _bench(tmp_path: Path, *verdicts: bool, ts: str) -> dict[str, Any]:
    spec = load(tmp_path, PLAIN)
    trial = trial_record("eval-3", WITH_SKILL, 0)
    return benchmark_json(spec, [trial], [judged(trial, *verdicts)], timestamp=ts)


def test_the_history_grows_when_results_change(tmp_path: Path) -> None:
    first = with_history(None, _bench(tmp_path, True, False, ts="2026-11-22T20:00:00+00:00"))
    assert [(i["iteration"], i["timestamp"]) for i in first["iterations"]] == [(1, "2026-11-22T20:00:00Z")]
    second = with_history(first, _bench(tmp_path, True, True, ts="2026-11-22T21:00:00+00:00"))
    validate_record("benchmark.schema.json", second, what="benchmark")
    assert [(i["iteration"], i["timestamp"]) for i in second["iterations"]] == [
        (1, "2026-11-22T20:00:00Z"), (2, "2026-11-22T21:00:00Z")]
    assert second["iterations"][0] == first["iterations"][0]  # the past is kept as it was
    rates = [i["configurations"][0]["overall"]["pass_rate"] for i in second["iterations"]]
    assert rates == [0.5, 1.0]


def test_the_history_stays_when_results_do_not_change(tmp_path: Path) -> None:
    first = with_history(None, _bench(tmp_path, True, False, ts="2026-11-22T20:00:00+00:00"))
    again = with_history(first, _bench(tmp_path, True, False, ts="2026-11-23T08:00:00+00:00"))
    assert again == first  # not even the timestamp moves


def test_the_history_starts_again_for_another_skill_or_none(tmp_path: Path) -> None:
    first = with_history(None, _bench(tmp_path, True, False, ts=TS))
    other = dict(first, skill_name="other")
    changed = _bench(tmp_path, True, True, ts=TS)
    assert [i["iteration"] for i in with_history(other, changed)["iterations"]] == [1]
    assert [i["iteration"] for i in with_history({"skill_name": "s", "iterations": []}, changed)["iterations"]] == [1]
