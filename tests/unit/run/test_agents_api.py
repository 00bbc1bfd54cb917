"""The anthropic and openai agents, the settings resolution and the price table, against the fake API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillmake.core import pricing
from skillmake.core.redact import REDACTED
from skillmake.run.agents import AgentResult, TrialRequest, api_call, get_agent
from skillmake.spec import settings
from skillmake.spec.model import AgentConfig, Case, Skill, Spec
from tests.fakeapi import FakeAPI, Reply

KEY = "sk-test-0123456789abcdef-secret"
KINDS = ("anthropic", "openai")
ENDPOINT = {"anthropic": "/v1/messages", "openai": "/v1/responses"}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        for name, value in fake.env(KEY).items():
            monkeypatch.setenv(name, value)
        yield fake


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the retry waits instead of sleeping through them."""
    recorded: list[float] = []
    monkeypatch.setattr(api_call, "_sleep", recorded.append)
    return recorded


def trial(kind: str, tmp_path: Path, *, model: str | None = None, max_tokens: int | None = None,
          system_prompt: str | None = "You are terse.", timeout: float = 10.0,
          env: tuple[tuple[str, str], ...] = ()) -> TrialRequest:
    agent = AgentConfig(kind=kind, model=model, max_tokens=max_tokens, env=env)
    case = Case(id="c1", index=0, prompt="Say hi.")
    skill = Skill(name="demo", path=str(tmp_path / "skill"), kind="folder")
    spec = Spec(name="demo", path=str(tmp_path / "demo.eval.yaml"), relpath="demo.eval.yaml", skill=skill,
                agent=agent, arms=(), cases=(case,))
    return TrialRequest(spec=spec, case=case, arm_name="with_skill", k=0, agent=agent, skill=skill,
                        prompt="Say hi.", system_prompt=system_prompt, workspace=str(tmp_path),
                        home=str(tmp_path / "home"), env={}, timeout=timeout)


def run(kind: str, tmp_path: Path, **kwargs: object) -> AgentResult:
    return get_agent(kind).run(trial(kind, tmp_path, **kwargs))  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", KINDS)
def test_text_reply_with_usage_and_cost(api: FakeAPI, tmp_path: Path, kind: str) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 200}
    api.enqueue(Reply.text("hi there", usage=usage), endpoint=ENDPOINT[kind])
    model = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-5.4-mini"}[kind]
    result = run(kind, tmp_path, model=model)
    assert (result.outcome, result.output, result.error) == ("completed", "hi there", None)
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.requests) == (1000, 200, 1)
    expected = {"anthropic": (1000 * 3.0 + 200 * 15.0) / 1e6, "openai": (1000 * 0.75 + 200 * 4.5) / 1e6}[kind]
    assert result.usage.cost_usd == pytest.approx(expected)
    assert get_agent(kind).version(AgentConfig(kind=kind)) is None


def test_anthropic_request_shape(api: FakeAPI, tmp_path: Path) -> None:
    api.default = Reply.text("ok")
    run("anthropic", tmp_path, max_tokens=321)
    body = api.requests[0].json or {}
    assert body["model"] == settings.DEFAULT_ANTHROPIC_MODEL and body["max_tokens"] == 321
    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    assert body["messages"] == [{"role": "user", "content": "Say hi."}]


def test_a_skill_without_a_body_sends_no_system_prompt(api: FakeAPI, tmp_path: Path) -> None:
    """A SKILL.md that is only frontmatter has the body "\n": sent as a system block, the API answered 400 "system:
    text content blocks must contain non-whitespace text" (the fake refuses it as the API does)."""
    api.default = Reply.text("ok")
    result = run("anthropic", tmp_path, system_prompt="\n")
    assert (result.outcome, result.error) == ("completed", None) and api.rejected == []
    assert "system" not in (api.requests[0].json or {})


def test_openai_request_shape(api: FakeAPI, tmp_path: Path) -> None:
    api.default = Reply.text("ok")
    run("openai", tmp_path, system_prompt=None)
    body = api.requests[0].json or {}
    assert body["model"] == settings.DEFAULT_OPENAI_MODEL and body["input"] == "Say hi."
    assert "instructions" not in body and "max_output_tokens" not in body and body["store"] is False


def test_openai_cached_tokens_are_kept_apart(api: FakeAPI, tmp_path: Path) -> None:
    api.enqueue(Reply.text("ok", usage={"input_tokens": 1000, "output_tokens": 10, "cache_read_input_tokens": 400}))
    result = run("openai", tmp_path, model="gpt-5.4")
    assert (result.usage.input_tokens, result.usage.cache_read_tokens) == (600, 400)
    assert result.usage.cost_usd == pytest.approx((600 * 2.5 + 400 * 0.25 + 10 * 15.0) / 1e6)


@pytest.mark.parametrize("kind", KINDS)
def test_429_then_success_is_retried_and_counted(api: FakeAPI, tmp_path: Path, waits: list[float],
                                                 kind: str) -> None:
    api.enqueue(Reply.fault("429", retry_after=2), Reply.fault("529"), Reply.text("finally"))
    result = run(kind, tmp_path)
    assert (result.outcome, result.output, result.usage.requests) == ("completed", "finally", 3)
    assert waits == [2.0, 1.0]  # the server's retry-after, then backoff
    assert api.count(ENDPOINT[kind]) == 3
    transcript = json.loads(result.transcript or b"")
    assert transcript["attempts"] == 3 and "429" in transcript["failed_attempts"][0]["error"]


@pytest.mark.parametrize("kind", KINDS)
def test_persistent_500_is_an_error_not_raised(api: FakeAPI, tmp_path: Path, waits: list[float],
                                               kind: str) -> None:
    api.script = lambda req: Reply.fault("500")
    result = run(kind, tmp_path)
    assert result.outcome == "error" and "HTTP 500" in (result.error or "")
    assert "after 4 attempts" in (result.error or "")
    assert api.count(ENDPOINT[kind]) == api_call.MAX_ATTEMPTS == 4 and len(waits) == 3


def test_retry_after_past_the_deadline_stops_at_once(api: FakeAPI, tmp_path: Path, waits: list[float]) -> None:
    api.enqueue(Reply.fault("429", retry_after=3600))
    result = run("anthropic", tmp_path, timeout=5)
    assert result.outcome == "error" and "would pass the trial's timeout" in (result.error or "")
    assert waits == [] and api.count() == 1


def test_bad_request_is_not_retried(api: FakeAPI, tmp_path: Path) -> None:
    api.enqueue(Reply.fault("400"))
    result = run("anthropic", tmp_path)
    assert result.outcome == "error" and "invalid_request_error" in (result.error or "") and api.count() == 1


def test_auth_error_names_the_variable(api: FakeAPI, tmp_path: Path) -> None:
    api.enqueue(Reply.fault("401"), endpoint="/v1/responses")
    result = run("openai", tmp_path)
    assert result.outcome == "error" and "OPENAI_API_KEY" in (result.error or "")


@pytest.mark.parametrize("kind", KINDS)
def test_non_json_200_is_an_error(api: FakeAPI, tmp_path: Path, kind: str) -> None:
    api.enqueue(Reply.fault("non_json"))
    result = run(kind, tmp_path)
    assert result.outcome == "error" and "not JSON (text/html" in (result.error or "")


@pytest.mark.parametrize("kind", KINDS)
def test_hang_with_short_timeout_is_a_timeout(api: FakeAPI, tmp_path: Path, kind: str) -> None:
    api.enqueue(Reply.fault("hang", seconds=30))
    result = run(kind, tmp_path, timeout=0.5)
    assert result.outcome == "timeout" and result.output == ""


def test_reset_then_success(api: FakeAPI, tmp_path: Path, waits: list[float]) -> None:
    api.enqueue(Reply.fault("reset"), Reply.fault("truncated"), Reply.text("ok"))
    result = run("anthropic", tmp_path)
    assert (result.outcome, result.usage.requests) == ("completed", 3)


def test_connection_refused_is_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                        waits: list[float]) -> None:
    with FakeAPI() as gone:
        url = gone.url
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    result = run("anthropic", tmp_path)
    assert result.outcome == "error" and f"could not reach {url}" in (result.error or "")


@pytest.mark.parametrize("kind", KINDS)
def test_missing_key_is_an_error_without_a_call(api: FakeAPI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                kind: str) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("OPENAI_API_KEY")
    result = run(kind, tmp_path)
    assert result.outcome == "error" and "API_KEY" in (result.error or "") and api.count() == 0


@pytest.mark.parametrize("kind", KINDS)
def test_key_never_in_transcript_or_error(api: FakeAPI, tmp_path: Path, waits: list[float], kind: str) -> None:
    api.enqueue(Reply.text("ok"))
    ok = run(kind, tmp_path)
    api.script = lambda req: Reply.fault("500")
    failed = run(kind, tmp_path)
    assert KEY in api.requests[0].headers.get("authorization", "") + api.requests[0].headers.get("x-api-key", "")
    for result in (ok, failed):
        assert KEY.encode() not in (result.transcript or b"") and KEY not in repr(result)
    transcript = json.loads(ok.transcript or b"")
    assert transcript["request"]["model"] and transcript["response"] and "headers" not in transcript


def test_base_url_from_the_spec_env_wins(api: FakeAPI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    api.default = Reply.text("ok")
    result = run("anthropic", tmp_path, env=(("ANTHROPIC_BASE_URL", api.url + "/"),))
    assert result.outcome == "completed" and api.count() == 1


# -- settings and pricing ---------------------------------------------------------------------------------

def test_settings_order_spec_environment_default() -> None:
    env = {"ANTHROPIC_MODEL": "claude-haiku-4-5", "ANTHROPIC_API_KEY": KEY}
    assert settings.resolve_anthropic("claude-opus-4-6", environ=env).model_source == "spec"
    from_env = settings.resolve_anthropic(None, environ=env)
    assert (from_env.model, from_env.model_source, from_env.base_url) == ("claude-haiku-4-5", "environment", None)
    assert from_env.url == "https://api.anthropic.com" and KEY not in repr(from_env)
    default = settings.resolve_openai(None, environ={"CODEX_API_KEY": KEY})
    assert (default.model, default.url, default.api_key) == ("gpt-5.4-mini", "https://api.openai.com/v1", KEY)
    assert settings.resolve_agent_model(AgentConfig(kind="openai"), environ={}) == "gpt-5.4-mini"
    assert settings.resolve_agent_model(AgentConfig(kind="codex"), environ={}) is None


def test_prices_match_the_longest_prefix() -> None:
    assert pricing.price_of("claude-sonnet-4-6-20260217") == pricing.PRICES["claude-sonnet-4"]
    assert pricing.price_of("gpt-5.4-mini-2026-03-17") == pricing.PRICES["gpt-5.4-mini"]
    assert pricing.price_of("gpt-5-codex") == pricing.PRICES["gpt-5"]
    assert pricing.cost_usd("unknown-model", input_tokens=1, output_tokens=1) is None
    assert pricing.cost_usd("claude-haiku-4-5", input_tokens=1_000_000, output_tokens=0,
                            cache_read_tokens=1_000_000, cache_creation_tokens=1_000_000) == pytest.approx(2.35)


# -- errors that echo the key (issue 13): redacted everywhere the result carries text ----------------------

def assert_key_redacted(result: AgentResult) -> None:
    assert result.outcome == "error" and result.error is not None
    assert REDACTED in result.error, "the key was not echoed into the error: this test proves nothing"
    for text in (result.error, result.output, repr(result)):
        assert KEY not in text and KEY[:10] not in text
    for data in (result.stdout, result.stderr, result.transcript or b""):
        assert KEY.encode() not in data and KEY[:10].encode() not in data
    json.loads(result.transcript or b"")  # still a readable transcript


@pytest.mark.parametrize("kind", KINDS)
def test_a_200_that_reports_a_failure_echoing_the_key_is_redacted(api: FakeAPI, tmp_path: Path, kind: str) -> None:
    api.enqueue(Reply.failed(f"upstream refused the key {KEY}"), endpoint=ENDPOINT[kind])
    result = run(kind, tmp_path)
    assert_key_redacted(result)
    assert REDACTED.encode() in (result.transcript or b"")  # the failed body is kept, redacted
    assert api.count() == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_non_json_body_echoing_the_key_is_redacted(api: FakeAPI, tmp_path: Path, kind: str) -> None:
    api.enqueue(Reply.raw(f"<html>bad key {KEY}</html>", content_type="text/html"), endpoint=ENDPOINT[kind])
    result = run(kind, tmp_path)
    assert_key_redacted(result)
    assert "not JSON (text/html" in (result.error or "")


@pytest.mark.parametrize("kind", KINDS)
def test_a_non_json_body_cut_inside_the_key_leaves_no_piece(api: FakeAPI, tmp_path: Path, kind: str) -> None:
    # The error quotes the body's first 80 characters: here the cut falls inside the key.
    api.enqueue(Reply.raw("x" * 62 + KEY, content_type="text/plain"), endpoint=ENDPOINT[kind])
    result = run(kind, tmp_path)
    assert result.outcome == "error" and KEY[:10] not in (result.error or "")


@pytest.mark.parametrize("kind", KINDS)
def test_a_401_echoing_the_key_is_redacted(api: FakeAPI, tmp_path: Path, kind: str) -> None:
    api.enqueue(Reply.error(401, f"invalid x-api-key: {KEY}"), endpoint=ENDPOINT[kind])
    result = run(kind, tmp_path)
    assert_key_redacted(result)
    assert "check" in (result.error or "") and "API_KEY" in (result.error or "")


@pytest.mark.parametrize("kind", KINDS)
def test_retried_failures_echoing_the_key_are_redacted_in_the_attempts(api: FakeAPI, tmp_path: Path,
                                                                       waits: list[float], kind: str) -> None:
    api.enqueue(Reply.error(529, f"overloaded ({KEY})"), Reply.failed(f"gave up on {KEY}"),
                endpoint=ENDPOINT[kind])
    result = run(kind, tmp_path)
    assert_key_redacted(result)
    attempts = json.loads(result.transcript or b"")["failed_attempts"]
    assert len(attempts) == 1 and REDACTED in attempts[0]["error"]
