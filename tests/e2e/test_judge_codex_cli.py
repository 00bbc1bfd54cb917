"""The codex judge provider: the real `codex exec --json --output-schema` against the loopback fake API."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

import pytest

from skillmake.run.judges import judge_case, judge_key, judge_problems
from skillmake.spec.model import AgentConfig, Case, JudgeConfig, Skill, Spec
from tests.e2e.cli_fakes import RecordingProxy
from tests.e2e.clis import require_cli
from tests.e2e.conftest import assert_offline
from tests.fakeapi import FAKE_KEY, FakeAPI, Recorded, Reply

pytestmark = pytest.mark.e2e
MODEL = "gpt-5.4-mini"


def make_spec() -> Spec:
    return Spec(name="demo", path="/p/demo.eval.yaml", relpath="demo.eval.yaml",
                skill=Skill(name="demo", path="/p/demo", kind="folder"), agent=AgentConfig(kind="command"),
                arms=(), cases=(), judge=JudgeConfig(provider="codex", model=MODEL))


@pytest.fixture
def api(proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    monkeypatch.setenv("SKILLMAKE_CODEX", require_cli("codex"))
    monkeypatch.delenv("SKILLMAKE_JUDGE_PROVIDER", raising=False)
    with FakeAPI() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_url)
        monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
        yield fake


def test_codex_cli_judge_returns_the_schema_constrained_verdict(api: FakeAPI, proxy: RecordingProxy) -> None:
    seen: list[Recorded] = []

    def script(request: Recorded) -> Reply:
        seen.append(request)
        return Reply.text(json.dumps({"expectations": [
            {"id": "E1", "passed": True, "evidence": "The reply says 4."}]}))

    api.script = script
    case = Case(id="task-001", index=0, prompt="Use this skill to answer: what is 2 + 2?",
                expectations=("The assistant answers 4.",))
    assert judge_problems([dataclasses.replace(make_spec(), cases=(case,))]) == []  # the CLI and a key: ready
    out = judge_case(make_spec(), case, output="The answer is 4.", files={})
    assert out.error is None, out.error
    [entry] = out.expectations
    assert entry["passed"] is True and "The reply says 4." in entry["evidence"]
    assert out.usage.requests == 1 and out.usage.input_tokens is not None
    [first] = [r for r in seen if r.path == "/v1/responses"]
    assert first.model == MODEL
    assert first.contains("The assistant answers 4.") and first.contains("The answer is 4.")
    text_format = ((first.json or {}).get("text") or {}).get("format") or {}
    assert text_format.get("type") == "json_schema"  # --output-schema reaches the model as a response format
    assert "expectations" in json.dumps(text_format.get("schema"))
    assert first.headers.get("authorization") == f"Bearer {FAKE_KEY}"
    assert FAKE_KEY not in repr(out)
    key = judge_key(make_spec(), case)
    assert key["provider"] == "codex" and key["model"] == MODEL and key["cli_version"].startswith("codex-cli")
    assert_offline(api, proxy)


def test_codex_cli_judge_failure_is_a_judge_error(api: FakeAPI, proxy: RecordingProxy) -> None:
    api.default = Reply.error(400, f"model {MODEL} is not supported")  # not retried by Codex
    case = Case(id="c1", index=0, prompt="p", rubric="r")
    out = judge_case(make_spec(), case, output="4", files={})
    assert out.error is not None and out.error.startswith(f"rubric judge ({MODEL}): codex exec exited")
    assert "not supported" in out.error and FAKE_KEY not in out.error
    assert out.expectations == ()
    assert_offline(api, proxy)
