"""The claude-code judge provider: the real `claude -p --json-schema` against the loopback fake API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from skillmake.run.judges import judge_case, judge_key
from skillmake.spec.model import AgentConfig, Case, JudgeConfig, Skill, Spec
from tests.e2e.clis import require_cli
from tests.fakeapi import FAKE_KEY, FakeAPI, Recorded, Reply

pytestmark = pytest.mark.e2e


def make_spec() -> Spec:
    return Spec(name="demo", path="/p/demo.eval.yaml", relpath="demo.eval.yaml",
                skill=Skill(name="demo", path="/p/demo", kind="folder"), agent=AgentConfig(kind="command"),
                arms=(), cases=(), judge=JudgeConfig(provider="claude-code", model="claude-haiku-4-5"))


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    monkeypatch.setenv("SKILLMAKE_CLAUDE", require_cli("claude"))
    with FakeAPI() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        yield fake


def test_claude_cli_judge_returns_the_structured_verdict(api: FakeAPI) -> None:
    seen: list[Recorded] = []

    def script(request: Recorded) -> Reply:
        seen.append(request)
        if request.turn == 0:  # the CLI offers a StructuredOutput tool built from --json-schema
            return Reply.tool_use("StructuredOutput", {"score": 5, "reason": "It answers exactly."})
        return Reply.text("done")

    api.script = script
    case = Case(id="c1", index=0, prompt="What is 2 + 2?", rubric="Is the answer correct?")
    out = judge_case(make_spec(), case, output="4", files={})
    assert out.error is None, out.error
    [entry] = out.expectations
    assert entry["passed"] is True and entry["score"] == 1.0 and "It answers exactly." in entry["evidence"]
    assert out.usage.requests == 1 and out.usage.cost_usd is not None
    first = seen[0]
    assert first.model == "claude-haiku-4-5"
    assert first.contains("Is the answer correct?") and first.contains("What is 2 + 2?")
    assert [t.get("name") for t in (first.json or {}).get("tools", [])] == ["StructuredOutput"]
    assert FAKE_KEY not in repr(out)
    key = judge_key(make_spec(), case)
    assert key["provider"] == "claude-code" and key["cli_version"]


def test_claude_cli_judge_failure_is_a_judge_error(api: FakeAPI) -> None:
    api.default = Reply.fault("400")  # not retried (a persistent 500 is, CLAUDE_CODE_MAX_RETRIES times: ~10 s)
    case = Case(id="c1", index=0, prompt="p", rubric="r")
    out = judge_case(make_spec(), case, output="4", files={})
    assert out.error is not None and out.error.startswith("rubric judge (claude-haiku-4-5)")
    assert "400" in out.error and "(is_error)" in out.error
    assert out.expectations == ()
