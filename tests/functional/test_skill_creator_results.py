"""skill-creator's results from a real `skillmake` run over an evals.json: eval_metadata.json per eval, integer eval
ids and assertion names in grading.json, grade.json, report.json and benchmark.json, and benchmark.json's iteration
history (the command agent; the expectations judge at the fake API)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.functional.project import AGENT, Project

REPO = Path(__file__).resolve().parents[2]
CONFIG = 'agent = {{kind = "command", command = ["python3", "{root}/agent.py"]}}\n'
JUDGE = "/v1/chat/completions"
EVALS = {"skill_name": "docs", "evals": [
    {"id": 5, "prompt": "say hello", "expected_output": "a shout",
     "assertions": [{"name": "shouts", "description": "The answer is in uppercase", "type": "custom"}]},
    {"id": 2, "prompt": "say bye", "expectations": ["The answer ends with an exclamation mark"]},
]}


def judge(request: Recorded) -> Reply:
    """Every expectation passes when the agent shouted (the skill says so), fails otherwise."""
    text = request.text()
    ids = re.findall(r"^- (E\d+): ", text, flags=re.MULTILINE)
    shouted = re.search(r"[A-Z]{3,}!", text) is not None
    return Reply.text(json.dumps({"expectations": [{"id": i, "passed": shouted, "evidence": "as written"}
                                                   for i in ids]}))


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        fake.script = judge
        yield fake


def env(api: FakeAPI) -> dict[str, str]:
    return {**api.openai_env(), "SKILLMAKE_JUDGE_PROVIDER": "openai", "SKILLMAKE_JUDGE_MODEL": "gpt-5.4-mini"}


def project(root: Path) -> Project:
    return Project.empty(root, {
        "agent.py": AGENT, "skillmake.toml": CONFIG.format(root=root),
        "docs/SKILL.md": "---\nname: docs\ndescription: shouts\n---\nAnswer in UPPERCASE.\n",
        "docs/evals/evals.json": json.dumps(EVALS, indent=2) + "\n"})


def read(p: Project, rel: str) -> dict[str, Any]:
    return dict(json.loads((p.root / ".skillmake" / rel).read_text()))


def valid(schema: str, data: dict[str, Any]) -> dict[str, Any]:
    validator = Draft7Validator(json.loads((REPO / "schemas" / f"{schema}.schema.json").read_text()))
    assert [e.message for e in validator.iter_errors(data)] == []
    return data


def test_eval_metadata_is_written_per_eval(api: FakeAPI, tmp_path: Path) -> None:
    p = project(tmp_path / "proj")
    assert p.run(env=env(api)).code == 0
    five = valid("eval-metadata", read(p, "runs/docs/eval-5/eval_metadata.json"))
    assert five == {"eval_id": 5, "eval_name": "eval-5", "prompt": "say hello",
                    "assertions": [{"name": "shouts", "description": "The answer is in uppercase", "type": "custom"}]}
    two = valid("eval-metadata", read(p, "runs/docs/eval-2/eval_metadata.json"))
    assert (two["eval_id"], two["assertions"]) == (2, [{"name": "expectation-0",
                                                        "description": "The answer ends with an exclamation mark"}])


def test_eval_ids_and_assertion_names_reach_every_result_file(api: FakeAPI, tmp_path: Path) -> None:
    p = project(tmp_path / "proj")
    assert p.run(env=env(api)).code == 0
    cell = "runs/docs/eval-5/without_skill/trial-0"
    grading = valid("grading", read(p, f"{cell}/grading.json"))
    assert grading["expectations"] == [{"text": "The answer is in uppercase", "passed": False,
                                        "evidence": "as written", "name": "shouts"}]
    assert [e["id"] for e in read(p, f"{cell}/grade.json")["expectations"]] == ["shouts"]
    plain = read(p, "runs/docs/eval-2/without_skill/trial-0/grading.json")
    assert "name" not in plain["expectations"][0]  # an unnamed expectation: skill-creator's exact shape
    report = read(p, "reports/docs/report.json")
    failures = {r["case"]: [f["id"] for f in r["failures"]] for r in report["rows"] if r["arm"] == "without_skill"}
    assert failures == {"eval-5": ["shouts"], "eval-2": ["expectation-0"]}
    bench = valid("benchmark", read(p, "reports/docs/benchmark.json"))
    tests = bench["iterations"][0]["configurations"][0]["tests"]
    assert [(t["eval_id"], t["eval_name"]) for t in tests] == [(5, "eval-5"), (2, "eval-2")]
    assert [a["name"] for a in tests[0]["assertions"]] == ["shouts"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", bench["iterations"][0]["timestamp"])


def test_renaming_an_assertion_relabels_without_running_or_judging(api: FakeAPI, tmp_path: Path) -> None:
    p = project(tmp_path / "proj")
    assert p.run(env=env(api)).agent_calls == 4
    judged = api.count(JUDGE)
    p.replace("docs/evals/evals.json", '"name": "shouts"', '"name": "is_uppercase"')
    again = p.run(env=env(api))
    assert (again.code, again.agent_calls, api.count(JUDGE) - judged) == (0, 0, 0), again.out + again.err
    grading = read(p, "runs/docs/eval-5/with_skill/trial-0/grading.json")
    assert [e["name"] for e in grading["expectations"]] == ["is_uppercase"]
    assert read(p, "runs/docs/eval-5/eval_metadata.json")["assertions"][0]["name"] == "is_uppercase"
    bench = read(p, "reports/docs/benchmark.json")
    assert bench["iterations"][-1]["configurations"][0]["tests"][0]["assertions"][0]["name"] == "is_uppercase"


def test_an_assertions_type_is_kept_in_eval_metadata_and_an_edit_runs_nothing(api: FakeAPI, tmp_path: Path) -> None:
    p = project(tmp_path / "proj")
    assert p.run(env=env(api)).agent_calls == 4
    assertion = read(p, "runs/docs/eval-5/eval_metadata.json")["assertions"][0]
    assert (assertion["name"], assertion["type"]) == ("shouts", "custom")
    judged = api.count(JUDGE)
    p.replace("docs/evals/evals.json", '"type": "custom"', '"type": "contains_text"')
    again = p.run(env=env(api))  # a label: the judge grades the description, so nothing runs or is judged again
    assert (again.code, again.agent_calls, api.count(JUDGE) - judged) == (0, 0, 0), again.out + again.err
    assert read(p, "runs/docs/eval-5/eval_metadata.json")["assertions"][0]["type"] == "contains_text"


def test_benchmark_keeps_one_iteration_per_change_of_results(api: FakeAPI, tmp_path: Path) -> None:
    """Needs results/publish.py to write with_history(previous benchmark.json, this run's) (see the report)."""
    p = project(tmp_path / "proj")
    assert p.run(env=env(api)).code == 0
    first = read(p, "reports/docs/benchmark.json")
    assert [i["iteration"] for i in first["iterations"]] == [1]
    assert p.run(env=env(api)).agent_calls == 0
    assert read(p, "reports/docs/benchmark.json") == first  # nothing changed: no iteration, same timestamp
    p.replace("docs/SKILL.md", "Answer in UPPERCASE.", "Answer quietly.")
    assert p.run(env=env(api)).agent_calls == 2  # the with_skill trials: now they fail
    bench = valid("benchmark", read(p, "reports/docs/benchmark.json"))
    assert [i["iteration"] for i in bench["iterations"]] == [1, 2]
    assert bench["iterations"][0] == first["iterations"][0]
    rates = [i["configurations"][0]["overall"]["pass_rate"] for i in bench["iterations"]]
    assert rates == [1.0, 0.0]
