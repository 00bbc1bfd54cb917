"""No judge error carries the key: provider errors that echo it (a 401 body, a failed result, a non-JSON page,
the CLI's stderr) come back redacted, also when the message is cut short. With redaction switched off, these
tests fail (the key is echoed on purpose, and each test checks that it did reach the error path)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillmake.core.redact import REDACTED
from skillmake.run.judges import JudgeOutcome, judge_case, retry
from skillmake.spec.model import AgentConfig, Case, JudgeConfig, Skill, Spec
from tests.fakeapi import FakeAPI, Reply
from tests.fakeapi.claude_cli import FakeClaude
from tests.fakeapi.fixtures import judged_by_fake_api

KEY = "sk-test-judge-echoed-secret-0123456789"
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-5.4", "claude-code": "claude-sonnet-4-6"}


def make_spec(provider: str) -> Spec:
    return Spec(name="demo", path="/p/demo.eval.yaml", relpath="demo.eval.yaml",
                skill=Skill(name="demo", path="/p/demo", kind="folder"), agent=AgentConfig(kind="command"),
                arms=(), cases=(), judge=JudgeConfig(provider=provider, model=MODELS[provider]))


def judge(provider: str) -> JudgeOutcome:
    return judge_case(make_spec(provider), Case(id="c1", index=0, prompt="p", rubric="r"), output="x", files={})


def assert_redacted(out: JudgeOutcome) -> None:
    assert out.error is not None
    assert REDACTED in out.error, "the key was not echoed into the error: this test proves nothing"
    assert KEY not in out.error and KEY not in repr(out)
    assert KEY[:10] not in out.error  # nor a piece of it left by cutting the message short


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    with judged_by_fake_api(monkeypatch, KEY) as fake:
        yield fake


@pytest.fixture(autouse=True)
def waits(judge_waits: list[float]) -> list[float]:
    return judge_waits


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_401_that_echoes_the_key_is_redacted(api: FakeAPI, provider: str) -> None:
    api.enqueue(Reply.error(401, f"invalid x-api-key: {KEY}"), endpoint=PATHS[provider])
    out = judge(provider)
    assert_redacted(out)
    assert "HTTP 401" in out.error  # type: ignore[operator]
    assert api.count() == 1


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_key_cut_by_the_message_limit_leaves_no_piece(api: FakeAPI, provider: str) -> None:
    # The provider message is cut at 300 characters; some of these paddings put the cut inside the key.
    for pad in range(150, 300, 10):
        api.enqueue(Reply.error(403, "x" * pad + KEY + " rest of the message"), endpoint=PATHS[provider])
        out = judge(provider)
        assert out.error is not None and KEY[:10] not in out.error, f"a piece of the key survives at pad {pad}"


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_retried_failure_that_echoes_the_key_is_redacted(api: FakeAPI, provider: str) -> None:
    api.default = Reply.error(500, f"upstream said: bad key {KEY}")
    assert_redacted(judge(provider))
    assert api.count() == retry.MAX_ATTEMPTS


def test_a_non_json_page_that_echoes_the_key_is_redacted(api: FakeAPI) -> None:
    api.default = Reply.raw(f"<html>gateway rejected {KEY}</html>", content_type="text/html")
    assert_redacted(judge("anthropic"))


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeClaude:
    fake = FakeClaude(tmp_path)
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(fake.path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return fake


def test_claude_code_failed_result_that_echoes_the_key_is_redacted(claude: FakeClaude) -> None:
    claude.answer(is_error=True, text=f"API Error: 401 invalid x-api-key {KEY}")
    assert_redacted(judge("claude-code"))


def test_claude_code_stderr_that_echoes_the_key_is_redacted(claude: FakeClaude) -> None:
    claude.answer(stdout="not json", stderr=f"fatal: the key {KEY} was refused\n", code=1)
    assert_redacted(judge("claude-code"))


def test_claude_code_gets_the_key_it_needs(claude: FakeClaude) -> None:
    claude.answer(structured={"score": 5, "reason": "ok"})
    assert judge("claude-code").error is None
    assert "--bare" in claude.calls()[0]
    assert KEY not in json.dumps(claude.calls())  # the key goes by environment, never on the command line
