"""Judges accept what models really return: every judge kind, every provider, through the real SDKs (and a
stand-in `claude` CLI) against the loopback fake API.

A verdict is read when the fields the judge needs are valid, however it arrives: a tool call with extra keys,
keys in another order, the JSON wrapped in prose or a ```json fence, a score written as text ("4", "4/5").
A verdict that still lacks or breaks a field is a judge_error whose message says where and what to do.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from skillmake.run.agents.base import Usage
from skillmake.run.judges import JudgeOutcome, judge_case, verdict
from skillmake.run.judges import criteria as criteria_judge
from skillmake.run.judges import expectations as expectations_judge
from skillmake.run.judges import rubric as rubric_judge
from skillmake.run.judges import sections as sections_judge
from skillmake.run.judges.base import ProviderReply, ReplyError
from skillmake.spec.model import AgentConfig, Case, Criterion, JudgeConfig, Skill, Spec
from tests.fakeapi import FakeAPI, Reply
from tests.fakeapi.claude_cli import FakeClaude
from tests.fakeapi.fixtures import judged_by_fake_api

KEY = "sk-test-judge-replies-0123456789"
MESSAGES = "/v1/messages"
CHAT = "/v1/chat/completions"
PROVIDERS = ("anthropic", "openai", "claude-code")


def make_spec(provider: str) -> Spec:
    judge = {"anthropic": JudgeConfig(), "openai": JudgeConfig(model="gpt-5.4"),
             "claude-code": JudgeConfig(provider="claude-code")}[provider]
    return Spec(name="demo", path="/p/demo.eval.yaml", relpath="demo.eval.yaml",
                skill=Skill(name="demo", path="/p/demo", kind="folder"), agent=AgentConfig(kind="command"),
                arms=(), cases=(), judge=judge)


# One case and one well-formed verdict per judge kind; `verdicts()` of that verdict is the expected outcome.
CASES: dict[str, Case] = {
    "rubric": Case(id="c1", index=0, prompt="Summarise.", rubric="Is it faithful?"),
    "criteria": Case(id="c1", index=0, prompt="Plan a day.", criteria=(
        Criterion(id="distance", criterion="Within 5 miles?"), Criterion(id="ages", criterion="For ages 4-6?"))),
    "expectations": Case(id="c1", index=0, prompt="Clean the CSV.",
                         expectations=("All 150 rows are kept", "A summary line is printed")),
    "sections": Case(id="c1", index=0, prompt="List venues.", sections=(
        {"name": "Venues", "tiers": [{"label": "default", "min_entries": 1, "max_entries": 3, "fields": [
            {"id": "v_name", "name": "name", "required": True},
            {"id": "v_zip", "name": "zip", "format": r"\d{5}"}]}]},)),
}
VERDICTS: dict[str, dict[str, Any]] = {
    "rubric": {"score": 4, "reason": "Faithful, one figure rounded."},
    "criteria": {"criteria": [
        {"id": "distance", "passed": True, "score": 1.0, "evidence": "all in Cupertino", "reasoning": "yes"},
        {"id": "ages", "passed": False, "score": 0.5, "evidence": "one venue is 18+", "reasoning": "partly"}]},
    "expectations": {"expectations": [
        {"id": "E1", "passed": False, "evidence": "148 rows, not 150"},
        {"id": "E2", "passed": True, "evidence": "last line: cleaned 148 rows"}]},
    "sections": {"Venues": {"default": [{"name": "Paesano", "zip": 95113}, {"name": "Orchard", "zip": "95014"}]}},
}
MODULES = {"rubric": rubric_judge, "criteria": criteria_judge, "expectations": expectations_judge,
           "sections": sections_judge}


def expected(kind: str) -> tuple[dict[str, Any], ...]:
    return tuple(MODULES[kind].verdicts(make_spec("anthropic"), CASES[kind], VERDICTS[kind]))


def loosen(value: Any) -> Any:
    """What a loose model sends: keys in reverse order, extra keys at every level, numbers as text."""
    if isinstance(value, dict):
        out = {k: loosen(v) for k, v in reversed(list(value.items()))}
        out.update(confidence="high", notes={"extra": True})
        return out
    if isinstance(value, list):
        return [loosen(v) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


# -- serving a reply through each provider -------------------------------------------------------------------


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    with judged_by_fake_api(monkeypatch, KEY) as fake:
        yield fake


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeClaude:
    fake = FakeClaude(tmp_path)
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(fake.path))
    return fake


@pytest.fixture
def waits(judge_waits: list[float]) -> list[float]:
    return judge_waits


Serve = Callable[..., None]


@pytest.fixture
def serve(api: FakeAPI, claude: FakeClaude) -> Serve:
    """serve(provider, data=…) answers with the provider's structured channel (tool call, JSON response
    format, --json-schema's structured_output); serve(provider, text=…) with plain text instead."""

    def answer(provider: str, *, data: dict[str, Any] | None = None, text: str = "") -> None:
        if provider == "anthropic":
            api.enqueue(Reply.tool_use("record_verdict", data) if data is not None else Reply.text(text),
                        endpoint=MESSAGES)
        elif provider == "openai":
            api.enqueue(Reply.text(json.dumps(data) if data is not None else text), endpoint=CHAT)
        else:
            claude.answer(structured=data, text=text)

    return answer


def judge(provider: str, kind: str) -> JudgeOutcome:
    return judge_case(make_spec(provider), CASES[kind], output="the agent's output", files={})


def prose(data: Any) -> str:
    return ("Here is my verdict after reading the output carefully.\n\n" + json.dumps(data, indent=2) +
            "\n\nLet me know if you need anything else.")


def fenced(data: Any) -> str:
    return "Verdict:\n```json\n" + json.dumps(data, indent=2) + "\n```\n"


KINDS = tuple(CASES)


# -- accepted ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_structured_verdict_with_extra_keys_other_order_and_text_numbers(serve: Serve, provider: str,
                                                                          kind: str) -> None:
    serve(provider, data=loosen(VERDICTS[kind]))
    out = judge(provider, kind)
    assert out.error is None
    assert out.expectations == expected(kind)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("wrap", [prose, fenced], ids=["prose", "fence"])
def test_text_verdict_wrapped_in_prose_or_a_fence(serve: Serve, provider: str, kind: str,
                                                  wrap: Callable[[Any], str]) -> None:
    serve(provider, text=wrap(loosen(VERDICTS[kind])))
    out = judge(provider, kind)
    assert out.error is None
    assert out.expectations == expected(kind)


def test_the_reported_case_a_rubric_tool_call_with_passed_and_evidence(api: FakeAPI) -> None:
    """Seen in the field: `Additional properties are not allowed ('evidence', 'passed' were unexpected)`."""
    api.enqueue(Reply.tool_use("record_verdict", {"score": 4, "reason": "good", "passed": True,
                                                  "evidence": "quotes the total"}), endpoint=MESSAGES)
    out = judge("anthropic", "rubric")
    assert out.error is None and out.score == 0.75 and out.expectations[0]["passed"] is True


@pytest.mark.parametrize(("score", "points"), [("4", 4), ("4/5", 4), (" 4 / 5 ", 4), (4.0, 4), ("4.0", 4),
                                               ("2", 2), ("5/5", 5)])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_rubric_score_written_as_text(serve: Serve, provider: str, score: Any, points: int) -> None:
    serve(provider, data={"score": score, "reason": "ok"})
    out = judge(provider, "rubric")
    assert out.error is None
    assert out.score == (points - 1) / 4 and f"SCORE={points} " in out.expectations[0]["evidence"]


@pytest.mark.parametrize(("score", "value"), [("0.5", 0.5), ("1/2", 0.5), ("50%", 0.5), ("1", 1.0), (1, 1.0)])
def test_criteria_score_written_as_text(serve: Serve, score: Any, value: float) -> None:
    data = {"criteria": [{**item, "score": score} for item in VERDICTS["criteria"]["criteria"]]}
    serve("anthropic", data=data)
    out = judge("anthropic", "criteria")
    assert out.error is None and [e["score"] for e in out.expectations] == [value, value]


def test_text_booleans_and_missing_text_fields_are_read(serve: Serve) -> None:
    serve("anthropic", data={"expectations": [{"id": "e1", "passed": "TRUE"}, {"id": "E2", "passed": "false",
                                                                                "evidence": "none"}]})
    out = judge("anthropic", "expectations")
    assert out.error is None
    assert [(e["passed"], e["evidence"]) for e in out.expectations] == [(True, "(no evidence given)"),
                                                                        (False, "none")]


def test_a_missing_extracted_field_reads_as_not_found(serve: Serve) -> None:
    serve("anthropic", data={"Venues": {"default": [{"name": "Paesano"}, {"zip": "95014"}]}})
    out = judge("anthropic", "sections")
    assert out.error is None
    by_id = {e["id"]: e for e in out.expectations}
    assert by_id["v_name"]["passed"] is False and "entry 2" in by_id["v_name"]["evidence"]


def test_anthropic_asks_for_strict_tool_use(serve: Serve, api: FakeAPI) -> None:
    serve("anthropic", data=VERDICTS["rubric"])
    assert judge("anthropic", "rubric").error is None
    [tool] = (api.requests[0].json or {})["tools"]
    assert tool["strict"] is True and tool["input_schema"] == rubric_judge.SCHEMA


def test_openai_asks_for_a_strict_json_schema(serve: Serve, api: FakeAPI) -> None:
    serve("openai", data=VERDICTS["criteria"])
    assert judge("openai", "criteria").error is None
    fmt = (api.requests[0].json or {})["response_format"]
    assert fmt["json_schema"]["strict"] is True and fmt["json_schema"]["schema"] == criteria_judge.SCHEMA


def test_claude_code_is_given_the_schema(serve: Serve, claude: FakeClaude) -> None:
    serve("claude-code", data=VERDICTS["expectations"])
    assert judge("claude-code", "expectations").error is None
    [argv] = claude.calls()
    assert json.loads(argv[argv.index("--json-schema") + 1]) == expectations_judge.SCHEMA


def test_a_model_without_strict_tool_use_is_asked_again_without_it(api: FakeAPI, waits: list[float]) -> None:
    api.enqueue(Reply.error(400, "tools.0.strict: Extra inputs are not permitted"),
                Reply.tool_use("record_verdict", VERDICTS["rubric"]), endpoint=MESSAGES)
    out = judge("anthropic", "rubric")
    assert out.error is None and out.usage.requests == 2
    first, second = ((r.json or {})["tools"][0] for r in api.requests)
    assert first["strict"] is True and "strict" not in second


def test_other_bad_requests_are_not_retried(api: FakeAPI, waits: list[float]) -> None:
    api.enqueue(Reply.error(400, "max_tokens: must be at most 4096"), endpoint=MESSAGES)
    out = judge("anthropic", "rubric")
    assert out.error is not None and "HTTP 400" in out.error and api.count() == 1


# -- refused -------------------------------------------------------------------------------------------------


MALFORMED: dict[str, tuple[dict[str, Any], str]] = {
    "rubric": ({"score": "excellent", "reason": "x"}, "at score"),
    "criteria": ({"criteria": [{**VERDICTS["criteria"]["criteria"][0], "passed": "yes"},
                               VERDICTS["criteria"]["criteria"][1]]}, "at criteria/0/passed"),
    "expectations": ({"expectations": [{"id": "E1", "evidence": "x"}, {"id": "E2", "passed": True}]},
                     "'passed' is a required property"),
    "sections": ({"Venues": {"tier": []}}, "'default' is a required property"),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_malformed_verdict_stays_a_judge_error_with_a_clear_message(serve: Serve, provider: str,
                                                                      kind: str) -> None:
    data, where = MALFORMED[kind]
    serve(provider, data=data)
    out = judge(provider, kind)
    assert out.expectations == () and out.score is None
    assert out.error is not None
    assert out.error.startswith(f"{kind} judge (") and "gave no usable verdict" in out.error
    assert "does not match the schema" in out.error and where in out.error
    assert out.error.endswith("it is judged again on the next build (if this repeats, try another judge.model)")


@pytest.mark.parametrize("score", ["8/10", "4/10", "80%", "four", "", "4.5", 0, 6])
def test_rubric_scores_that_cannot_be_placed_are_refused(serve: Serve, score: Any) -> None:
    serve("anthropic", data={"score": score, "reason": "x"})
    out = judge("anthropic", "rubric")
    assert out.error is not None and out.expectations == ()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_prose_without_a_verdict_is_a_judge_error(serve: Serve, provider: str) -> None:
    serve(provider, text="The output looks fine to me {overall}.")
    out = judge(provider, "criteria")
    assert out.error is not None and "holds no verdict" in out.error


# -- the reader on its own -----------------------------------------------------------------------------------


def test_the_first_candidate_that_fits_wins() -> None:
    text = 'Draft: {"score": 9}. Final: {"score": 3, "reason": "meh"}'
    reply = ProviderReply(data=None, text=text, usage=Usage())
    request = rubric_judge.request(make_spec("anthropic"), CASES["rubric"], "x")
    assert verdict.read(rubric_judge, request, reply) == {"score": 3, "reason": "meh"}


def test_a_one_key_wrapper_and_a_bare_list_are_unwrapped() -> None:
    assert verdict.fit({"record_verdict": {"score": "5", "reason": "x"}}, rubric_judge.SCHEMA) == {
        "score": 5, "reason": "x"}
    items = [{"id": "E1", "passed": True, "evidence": "x"}]
    assert verdict.fit(items, expectations_judge.SCHEMA) == {"expectations": items}


def test_an_unfit_verdict_names_the_field() -> None:
    with pytest.raises(ReplyError, match=r"at expectations/0/passed: 'maybe' is not of type 'boolean'"):
        verdict.fit({"expectations": [{"id": "E1", "passed": "maybe", "evidence": ""}]}, expectations_judge.SCHEMA)

