"""The judges against the loopback fake API: verdicts, precedence, retries, errors, and the judge key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from skillmake.run.judges import JudgeOutcome, judge_case, judge_key, resolve, retry
from skillmake.run.judges import criteria as criteria_judge
from skillmake.run.judges import rubric as rubric_judge
from skillmake.spec.model import AgentConfig, Case, Criterion, JudgeConfig, Skill, Spec, Thresholds
from tests.fakeapi import FakeAPI, Reply
from tests.fakeapi.fixtures import judged_by_fake_api

REPO = Path(__file__).resolve().parents[3]
KEY = "sk-test-judge-secret-1234567890"  # distinctive, so a leak anywhere is easy to find
MESSAGES = "/v1/messages"
CHAT = "/v1/chat/completions"


def verdict(data: dict[str, Any]) -> Reply:
    return Reply.tool_use("record_verdict", data)


def make_spec(**judge: Any) -> Spec:
    return Spec(name="demo", path="/p/demo.eval.yaml", relpath="demo.eval.yaml",
                skill=Skill(name="demo", path="/p/demo", kind="folder"), agent=AgentConfig(kind="command"),
                arms=(), cases=(), judge=JudgeConfig(**judge))


def make_case(**fields: Any) -> Case:
    return Case(id="c1", index=0, prompt="Summarise the report.", **fields)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    with judged_by_fake_api(monkeypatch, KEY) as fake:
        yield fake


@pytest.fixture
def waits(judge_waits: list[float]) -> list[float]:
    return judge_waits


def no_secret(outcome: JudgeOutcome) -> None:
    assert KEY not in repr(outcome)


# -- rubric (eva) --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("score", "passed"), [(5, True), (4, True), (3, False), (1, False)])
def test_rubric_passes_at_the_default_threshold_of_4(api: FakeAPI, score: int, passed: bool) -> None:
    api.enqueue(verdict({"score": score, "reason": "because"}), endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(rubric="Is the summary faithful?"), output="text", files={})
    assert out.error is None
    [entry] = out.expectations
    assert entry["passed"] is passed
    assert entry["score"] == (score - 1) / 4 == out.score
    assert entry["text"] == "Is the summary faithful?"
    assert entry["id"] == "rubric" and entry["source"] == "judge"
    assert f"SCORE={score}" in entry["evidence"] and "because" in entry["evidence"]
    assert out.usage.requests == 1 and api.count(MESSAGES) == 1


def test_rubric_threshold_comes_from_the_case_then_the_spec(api: FakeAPI) -> None:
    api.enqueue(verdict({"score": 4, "reason": "ok"}), verdict({"score": 3, "reason": "ok"}), endpoint=MESSAGES)
    strict = judge_case(make_spec(pass_threshold=3), make_case(rubric="r", pass_threshold=5), output="x", files={})
    lenient = judge_case(make_spec(pass_threshold=3), make_case(rubric="r"), output="x", files={})
    assert strict.expectations[0]["passed"] is False
    assert lenient.expectations[0]["passed"] is True


def test_rubric_accepts_evas_plain_text_verdict(api: FakeAPI) -> None:
    api.enqueue(Reply.text("SCORE=2 REASON=It invents a number."), endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(rubric="r"), output="x", files={})
    assert out.error is None
    assert out.expectations[0]["passed"] is False and out.score == 0.25
    assert "It invents a number." in out.expectations[0]["evidence"]


def test_anthropic_request_forces_the_tool_without_sampling_parameters(api: FakeAPI) -> None:
    api.enqueue(verdict({"score": 5, "reason": "ok"}), endpoint=MESSAGES)
    judge_case(make_spec(), make_case(rubric="Is it polite?"), output="Dear user, thanks.", files={})
    [request] = api.requests
    body = request.json or {}
    assert body["model"] == "claude-sonnet-4-6"
    assert body["tool_choice"] == {"type": "tool", "name": "record_verdict"}
    assert body["tools"][0]["input_schema"] == rubric_judge.SCHEMA
    assert body["thinking"] == {"type": "disabled"}
    assert "temperature" not in body
    assert request.contains("Is it polite?") and request.contains("Dear user, thanks.")
    assert request.contains("Summarise the report.")  # the task the agent was given


# -- criteria (clauditor L3) ---------------------------------------------------------------------------------


def test_criteria_scores_evidence_and_mean(api: FakeAPI) -> None:
    case = make_case(criteria=(Criterion(id="distance", criterion="Within 5 miles?"),
                               Criterion(id="ages", criterion="Right for ages 4-6?")))
    api.enqueue(verdict({"criteria": [
        {"id": "ages", "passed": False, "score": 0.5, "evidence": "one venue is 18+", "reasoning": "partly"},
        {"id": "distance", "passed": True, "score": 1.0, "evidence": "all in Cupertino", "reasoning": "yes"},
    ]}), endpoint=MESSAGES)
    out = judge_case(make_spec(), case, output="venues…", files={})
    assert out.error is None
    assert [(e["id"], e["passed"], e["score"]) for e in out.expectations] == [("distance", True, 1.0),
                                                                              ("ages", False, 0.5)]
    assert out.expectations[1]["text"] == "Right for ages 4-6?"
    assert "one venue is 18+" in out.expectations[1]["evidence"]
    assert out.score == 0.75
    assert api.requests[0].contains("id: distance") and api.requests[0].contains("Within 5 miles?")


@pytest.mark.parametrize("items", [
    [{"id": "a", "passed": True, "score": 1.0, "evidence": "", "reasoning": ""}],  # b is missing
    [{"id": "a", "passed": True, "score": 1.5, "evidence": "", "reasoning": ""},
     {"id": "b", "passed": True, "score": 1.0, "evidence": "", "reasoning": ""}],  # score out of range
    [{"id": "a", "passed": "yes", "score": 1.0, "evidence": "", "reasoning": ""},
     {"id": "b", "passed": True, "score": 1.0, "evidence": "", "reasoning": ""}],  # not a boolean
])
def test_criteria_reply_that_breaks_the_contract_is_a_judge_error(api: FakeAPI, items: list[dict[str, Any]]) -> None:
    case = make_case(criteria=(Criterion(id="a", criterion="A?"), Criterion(id="b", criterion="B?")))
    api.enqueue(verdict({"criteria": items}), endpoint=MESSAGES)
    out = judge_case(make_spec(), case, output="x", files={})
    assert out.error is not None and "criteria judge" in out.error
    assert out.expectations == () and out.score is None


# -- expectations (skill-creator, caliper expect) ------------------------------------------------------------


def test_expectations_one_verdict_each_with_evidence(api: FakeAPI) -> None:
    case = make_case(expectations=("The CSV keeps all 150 rows", "A summary line is printed"),
                     expected_output="A cleaned CSV")
    api.enqueue(verdict({"expectations": [
        {"id": "E1", "passed": False, "evidence": "Expected 150 rows, got 148."},
        {"id": "E2", "passed": True, "evidence": "Last line: 'cleaned 148 rows'"},
    ]}), endpoint=MESSAGES)
    out = judge_case(make_spec(), case, output="cleaned 148 rows", files={"out.csv": b"a,b\n1,2\n"})
    assert out.error is None
    assert [(e["text"], e["passed"], e["evidence"]) for e in out.expectations] == [
        ("The CSV keeps all 150 rows", False, "Expected 150 rows, got 148."),
        ("A summary line is printed", True, "Last line: 'cleaned 148 rows'")]
    assert out.score == 0.5
    item_schema = json.loads((REPO / "schemas/grade-record.schema.json").read_text())[
        "properties"]["expectations"]["items"]
    for entry in out.expectations:
        jsonschema.validate(entry, item_schema)
    request = api.requests[0]
    assert request.contains("E1: The CSV keeps all 150 rows") and request.contains("A cleaned CSV")
    assert request.contains('<file name="out.csv"') and request.contains("a,b")


def test_binary_files_are_named_not_shown(api: FakeAPI) -> None:
    api.enqueue(verdict({"expectations": [{"id": "E1", "passed": True, "evidence": "png present"}]}))
    judge_case(make_spec(), make_case(expectations=("A chart is written",)), output="done",
               files={"chart.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR"})
    text = api.requests[0].text()
    assert 'name="chart.png"' in text and "binary file, not shown" in text and "IHDR" not in text


# -- sections (clauditor L2) ---------------------------------------------------------------------------------


SECTIONS = ({"name": "Restaurants", "tiers": [{"label": "default", "min_entries": 2, "max_entries": 3, "fields": [
    {"id": "r_name", "name": "name", "required": True},
    {"id": "r_phone", "name": "phone", "required": True, "format": "phone_us"},
    {"id": "r_zip", "name": "zip", "format": r"\d{5}"},
]}]},)


def test_sections_extraction_then_deterministic_checks(api: FakeAPI) -> None:
    api.enqueue(verdict({"Restaurants": {"default": [
        {"name": "Paesano", "phone": "(408) 217-9327", "zip": "95113"},
        {"name": "Orchard", "phone": "call us", "zip": None},
        {"name": None, "phone": "408-555-0199", "zip": "9511"},
        {"name": "Extra", "phone": "650-555-0100", "zip": 94301},
    ]}}), endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(sections=SECTIONS), output="…", files={})
    assert out.error is None
    by_id = {e["id"]: e for e in out.expectations}
    assert by_id["Restaurants/default:count"]["passed"] is True
    assert by_id["Restaurants/default:count_max"]["passed"] is False  # 4 > 3
    assert by_id["r_name"]["passed"] is False and "entry 3" in by_id["r_name"]["evidence"]
    assert by_id["r_name"]["score"] == 0.75
    assert by_id["r_phone"]["passed"] is True  # present everywhere…
    assert by_id["r_phone:format"]["passed"] is False  # …but "call us" is no phone number
    assert "'call us'" in by_id["r_phone:format"]["evidence"]
    assert by_id["r_zip:format"]["passed"] is False and "'9511'" in by_id["r_zip:format"]["evidence"]
    assert by_id["r_zip:format"]["score"] == 2 / 3  # 95113 and 94301 (a number, read as text) match
    assert "r_zip" not in by_id  # optional: no presence check
    sent = (api.requests[0].json or {})["tools"][0]["input_schema"]
    entry = sent["properties"]["Restaurants"]["properties"]["default"]["items"]
    assert entry["required"] == ["name", "phone", "zip"] and entry["additionalProperties"] is False


def test_sections_with_no_entries_fail_only_the_count(api: FakeAPI) -> None:
    api.enqueue(verdict({"Restaurants": {"default": []}}), endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(sections=SECTIONS), output="nothing found", files={})
    failed = [e["id"] for e in out.expectations if not e["passed"]]
    assert failed == ["Restaurants/default:count"]
    assert out.score == 0.5  # count 0, count_max 1; the vacuous field checks carry no score


def test_sections_reply_missing_a_tier_is_a_judge_error(api: FakeAPI) -> None:
    api.enqueue(verdict({"Restaurants": {}}), endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(sections=SECTIONS), output="x", files={})
    assert out.error is not None and "does not match the schema" in out.error


# -- replies that are no verdict -----------------------------------------------------------------------------


@pytest.mark.parametrize("reply", [
    Reply.text("I think the output is pretty good overall."),
    Reply.text(""),
    verdict({"score": 9, "reason": "off the scale"}),
    verdict({"reason": "no score"}),
    Reply.text("cut off mid-", stop_reason="max_tokens"),
])
def test_unparseable_or_invalid_reply_is_an_error_never_a_fail(api: FakeAPI, reply: Reply) -> None:
    api.enqueue(reply, endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(rubric="r"), output="x", files={})
    assert out.error is not None and out.error.startswith("rubric judge (claude-sonnet-4-6)")
    assert out.expectations == () and out.score is None
    assert out.usage.requests == 1


def test_judges_stop_at_the_first_error(api: FakeAPI) -> None:
    api.enqueue(Reply.text("no idea"), endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(rubric="r", expectations=("e",)), output="x", files={})
    assert out.error is not None and api.count() == 1


def test_a_case_without_judges_makes_no_call(api: FakeAPI) -> None:
    out = judge_case(make_spec(), make_case(), output="x", files={})
    assert out == JudgeOutcome() and api.count() == 0
    assert judge_key(make_spec(), make_case()) == {}


# -- retries -------------------------------------------------------------------------------------------------


def test_429_then_success_honours_retry_after_and_counts_requests(api: FakeAPI, waits: list[float]) -> None:
    api.enqueue(Reply.fault("429", retry_after=1), verdict({"score": 5, "reason": "ok"}), endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(rubric="r"), output="x", files={})
    assert out.error is None and out.expectations[0]["passed"] is True
    assert out.usage.requests == 2 and api.count(MESSAGES) == 2
    assert waits == [1.0]


def test_persistent_500_is_an_error_after_the_attempt_limit(api: FakeAPI, waits: list[float]) -> None:
    api.default = Reply.fault("500")
    out = judge_case(make_spec(), make_case(rubric="r"), output="x", files={})
    assert out.error is not None and "HTTP 500" in out.error and f"after {retry.MAX_ATTEMPTS} attempts" in out.error
    assert out.usage.requests == retry.MAX_ATTEMPTS == api.count(MESSAGES)
    assert len(waits) == retry.MAX_ATTEMPTS - 1
    no_secret(out)


def test_a_retry_after_beyond_the_budget_gives_up_at_once(api: FakeAPI, waits: list[float]) -> None:
    api.enqueue(Reply.fault("429", retry_after=3600), endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(rubric="r"), output="x", files={})
    assert out.error is not None and "retry budget" in out.error
    assert api.count() == 1 and waits == []


@pytest.mark.parametrize("fault", ["non_json", "truncated", "529", "reset"])
def test_garbled_or_overloaded_replies_are_retried(api: FakeAPI, waits: list[float], fault: str) -> None:
    api.enqueue(Reply.fault(fault), verdict({"score": 4, "reason": "ok"}), endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(rubric="r"), output="x", files={})
    assert out.error is None and out.usage.requests == 2 and api.count(MESSAGES) == 2


def test_a_hung_request_times_out_and_is_retried(api: FakeAPI, waits: list[float],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "REQUEST_TIMEOUT_S", 0.5)
    api.enqueue(Reply.fault("hang", seconds=10), verdict({"score": 4, "reason": "ok"}), endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(rubric="r"), output="x", files={})
    assert out.error is None and out.usage.requests == 2


def test_a_client_error_is_not_retried_and_names_the_fix(api: FakeAPI, waits: list[float]) -> None:
    api.enqueue(Reply.fault("401"), endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(rubric="r"), output="x", files={})
    assert out.error is not None and "HTTP 401" in out.error and "ANTHROPIC_API_KEY" in out.error
    assert api.count() == 1 and waits == []
    no_secret(out)


# -- providers and precedence --------------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "path"), [
    ("claude-haiku-4-5", MESSAGES), ("gpt-5.4-mini", CHAT), ("o3", CHAT), ("gpt-4.1", CHAT),
])
def test_provider_is_inferred_from_the_model_name(api: FakeAPI, model: str, path: str) -> None:
    api.default = (verdict({"score": 4, "reason": "ok"}) if path == MESSAGES
                   else Reply.text(json.dumps({"score": 4, "reason": "ok"})))
    out = judge_case(make_spec(model=model), make_case(rubric="r"), output="x", files={})
    assert out.error is None and out.expectations[0]["passed"] is True
    [request] = api.requests
    assert request.path == path and request.model == model
    assert judge_key(make_spec(model=model), make_case(rubric="r"))["provider"] == (
        "anthropic" if path == MESSAGES else "openai")


def test_openai_request_uses_a_strict_schema_and_temperature_only_where_allowed(api: FakeAPI) -> None:
    api.default = Reply.text(json.dumps({"score": 4, "reason": "ok"}))
    judge_case(make_spec(model="gpt-5.4"), make_case(rubric="r"), output="x", files={})
    judge_case(make_spec(model="gpt-4.1"), make_case(rubric="r"), output="x", files={})
    reasoning, classic = (r.json or {} for r in api.requests)
    fmt = reasoning["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == rubric_judge.SCHEMA
    assert "temperature" not in reasoning and classic["temperature"] == 0


def test_provider_precedence_env_then_spec_then_model_then_anthropic(api: FakeAPI,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve.choose(make_spec()) == resolve.Choice(provider="anthropic", model="claude-sonnet-4-6")
    monkeypatch.setenv(resolve.PROVIDER_ENV, "openai")
    assert resolve.choose(make_spec()) == resolve.Choice(provider="openai", model="gpt-5.4")
    assert resolve.choose(make_spec(model="claude-haiku-4-5")).provider == "openai"  # env beats inference
    assert resolve.choose(make_spec(provider="anthropic")).provider == "openai"  # the environment beats the spec
    api.default = Reply.text(json.dumps({"score": 4, "reason": "ok"}))
    assert judge_case(make_spec(), make_case(rubric="r"), output="x", files={}).error is None
    assert api.requests[0].path == CHAT and api.requests[0].model == "gpt-5.4"


def test_an_unsupported_provider_is_a_judge_error_without_calls(api: FakeAPI) -> None:
    out = judge_case(make_spec(provider="gemini"), make_case(rubric="r"), output="x", files={})
    assert out.error is not None and "'gemini'" in out.error and api.count() == 0


# -- the judge key -------------------------------------------------------------------------------------------


def test_judge_key_changes_with_model_provider_template_and_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    case = make_case(rubric="r", criteria=(Criterion(id="a", criterion="A?"),))
    base = judge_key(make_spec(), case)
    assert base["provider"] == "anthropic" and base["model"] == "claude-sonnet-4-6"
    assert base["prompts"] == {"rubric": "rubric@1", "criteria": "criteria@1"}
    assert judge_key(make_spec(model="claude-opus-4-6"), case) != base
    assert judge_key(make_spec(model="gpt-5.4"), case)["provider"] == "openai"
    assert judge_key(make_spec(pass_threshold=5), case) != base
    assert judge_key(make_spec(), replace(case, prompt="Another task")) != base  # the judge sees the task
    monkeypatch.setattr(criteria_judge, "PROMPT_VERSION", 2)
    assert judge_key(make_spec(), case) != base


def test_judge_key_ignores_what_judges_do_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    case = make_case(rubric="r")
    base = judge_key(make_spec(), case)
    other = replace(make_spec(), trials=5, timeout=10.0, description="new", tags=("x",),
                    thresholds=Thresholds(min_pass_rate=0.9), agent=AgentConfig(kind="command", model="m"))
    assert judge_key(other, case) == base
    assert judge_key(make_spec(), replace(case, timeout=5.0, tags=("slow",), setup="true")) == base
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    assert judge_key(make_spec(), case) == base  # no key, no URL
    assert KEY not in json.dumps(base) and "127.0.0.1" not in json.dumps(base)


def test_no_api_key_in_anything_returned(api: FakeAPI) -> None:
    api.enqueue(verdict({"score": 4, "reason": "ok"}), Reply.fault("403"), endpoint=MESSAGES)
    for _ in range(2):
        out = judge_case(make_spec(), make_case(rubric="r"), output="x", files={})
        no_secret(out)
    assert KEY not in json.dumps(judge_key(make_spec(), make_case(rubric="r")))
    assert api.requests[0].headers.get("x-api-key") == KEY or KEY in api.requests[0].headers.get(
        "authorization", "")  # the key did reach the (fake) API


def test_usage_is_summed_over_judges_and_priced(api: FakeAPI) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 100}
    api.enqueue(Reply.tool_use("record_verdict", {"score": 4, "reason": "ok"}, usage=usage),
                Reply.tool_use("record_verdict", {"expectations": [{"id": "E1", "passed": True, "evidence": "x"}]},
                               usage=usage), endpoint=MESSAGES)
    out = judge_case(make_spec(), make_case(rubric="r", expectations=("e",)), output="x", files={})
    assert out.error is None and len(out.expectations) == 2
    assert out.usage.input_tokens == 2000 and out.usage.output_tokens == 200 and out.usage.requests == 2
    assert out.usage.cost_usd == pytest.approx(2 * (1000 * 3 + 100 * 15) / 1e6)


@pytest.mark.parametrize(("model", "variable"), [("claude-sonnet-4-6", "ANTHROPIC_API_KEY"),
                                                 ("gpt-5.4", "OPENAI_API_KEY")])
def test_missing_credentials_are_a_judge_error_naming_the_variable(api: FakeAPI, monkeypatch: pytest.MonkeyPatch,
                                                                   model: str, variable: str) -> None:
    monkeypatch.delenv(variable)
    out = judge_case(make_spec(model=model), make_case(rubric="r"), output="x", files={})
    assert out.error is not None and variable in out.error
    assert out.usage.requests == 0 and api.count() == 0


def test_the_agents_model_variables_do_not_move_the_judge(api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-haiku-4-5")
    monkeypatch.setenv("OPENAI_MODEL", "gpt-5.4-nano")
    assert judge_key(make_spec(), make_case(rubric="r"))["model"] == "claude-sonnet-4-6"
    api.default = verdict({"score": 4, "reason": "ok"})
    judge_case(make_spec(), make_case(rubric="r"), output="x", files={})
    assert api.requests[0].model == "claude-sonnet-4-6"


def test_an_anthropic_auth_token_works_in_place_of_a_key(api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", KEY)
    api.default = verdict({"score": 4, "reason": "ok"})
    out = judge_case(make_spec(), make_case(rubric="r"), output="x", files={})
    assert out.error is None
    assert api.requests[0].headers.get("authorization") == f"Bearer {KEY}"
