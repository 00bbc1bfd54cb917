"""The claude-code agent driving the real `claude` CLI against the loopback fake API."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from skillmake.run.agents.base import AgentResult, TrialRequest
from skillmake.run.agents.claude_code import AGENT, QUIET_ENV, parse_stream
from tests.e2e.cli_fakes import RecordingProxy
from tests.e2e.clis import require_cli
from tests.e2e.conftest import SKILL_BODY_MARK, SKILL_DESC_MARK, Trials, assert_no_key, assert_offline
from tests.fakeapi import FAKE_KEY, FakeAPI, Recorded, Reply

pytestmark = pytest.mark.e2e
MODEL = "claude-sonnet-4-6"
# Claude Code's list prices for claude-sonnet-4-6, USD per token: input, output, cache read, 5-minute cache write.
SONNET = {"input": 3e-6, "output": 15e-6, "cache_read": 0.3e-6, "cache_write": 3.75e-6}


@pytest.fixture(autouse=True)
def _claude() -> str:
    return require_cli("claude")


def run(api: FakeAPI, request: TrialRequest) -> tuple[AgentResult, list[Recorded]]:
    """Run one trial; also return the requests it made (the fake API is shared by the trials of a test)."""
    before = len(api.requests)
    result = AGENT.run(request)
    return result, api.requests[before:]


def shout_model(request: Recorded) -> Reply:
    """A model that follows the shout skill only once its body is in the conversation: it sees the skill's
    description in the listing, loads it with the Skill tool, then shouts. Without the skill it talks normally."""
    if request.contains(SKILL_BODY_MARK):
        return Reply.text("HELLO TEAM!")
    if request.contains(SKILL_DESC_MARK):
        return Reply.tool_use("Skill", {"skill": "shout"})
    return Reply.text("Hello, team.")


def test_with_skill_differs_from_baseline(api: FakeAPI, proxy: RecordingProxy, trials: Trials) -> None:
    api.script = FakeAPI.follows_skill(SKILL_BODY_MARK, with_skill=Reply.text("HELLO TEAM!"),
                                       without_skill=shout_model)
    with_skill, with_requests = run(api, trials.request(kind="claude-code", model=MODEL))
    baseline_request = trials.request(kind="claude-code", model=MODEL, with_skill=False)
    baseline, baseline_requests = run(api, baseline_request)

    assert (with_skill.outcome, with_skill.output) == ("completed", "HELLO TEAM!"), with_skill.error
    assert (baseline.outcome, baseline.output) == ("completed", "Hello, team."), baseline.error
    assert with_skill.activated_skills == ("shout",)
    assert baseline.activated_skills == ()
    # With the skill: the listing turn (Skill call) and the turn that follows the body. Baseline: one turn.
    assert [r.path for r in with_requests] == ["/v1/messages"] * 2
    assert len(baseline_requests) == 1
    assert not with_requests[0].contains(SKILL_BODY_MARK) and with_requests[1].contains(SKILL_BODY_MARK)
    assert not baseline_requests[0].contains(SKILL_DESC_MARK)
    assert {r.model for r in api.requests} == {MODEL}
    assert {r.headers.get("x-api-key") for r in api.requests} == {FAKE_KEY}
    assert with_skill.usage.requests == 2 and baseline.usage.requests == 1
    # The whole skill folder was installed for the skill arm only.
    installed = Path(trials.root / "runs" / "trial-1" / "workspace" / ".claude" / "skills" / "shout")
    assert sorted(p.name for p in installed.iterdir()) == ["SKILL.md", "reference.txt"]
    assert not (Path(baseline_request.workspace) / ".claude").exists()
    assert_no_key(with_skill.transcript, with_skill.stderr, baseline.transcript)
    assert_offline(api, proxy)


def test_command_file_skill_runs_as_slash_command(api: FakeAPI, proxy: RecordingProxy, trials: Trials,
                                                  tmp_path: Path) -> None:
    command = tmp_path / "project" / "commands" / "yell.md"
    command.parent.mkdir()
    command.write_text(f"{SKILL_BODY_MARK}. Topic: $ARGUMENTS\n")
    request = trials.request(kind="claude-code", model=MODEL, prompt="/yell the release")
    request = _with_command_skill(request, command)
    api.script = FakeAPI.follows_skill(SKILL_BODY_MARK, with_skill=Reply.text("THE RELEASE!"),
                                       without_skill=Reply.text("the release"))
    result, requests = run(api, request)

    assert (result.outcome, result.output) == ("completed", "THE RELEASE!"), result.error
    assert result.activated_skills == ("yell",)
    assert len(requests) == 1 and requests[0].contains(f"{SKILL_BODY_MARK}. Topic: the release")
    assert (Path(request.workspace) / ".claude" / "commands" / "yell.md").read_text() == command.read_text()
    assert_offline(api, proxy)


def _with_command_skill(request: TrialRequest, path: Path) -> TrialRequest:
    from dataclasses import replace

    from skillmake.spec.model import Skill

    return replace(request, skill=Skill(name=path.stem, path=str(path), kind="command"))


def test_write_tool_creates_the_output_file_and_usage_is_recorded(api: FakeAPI, proxy: RecordingProxy,
                                                                  trials: Trials) -> None:
    request = trials.request(kind="claude-code", model=MODEL, prompt="write the team greeting to out.md")
    usage = {"input_tokens": 1200, "output_tokens": 30, "cache_read_input_tokens": 500,
             "cache_creation_input_tokens": 100}
    target = os.path.join(request.workspace, "out.md")
    api.enqueue(Reply.tool_use("Write", {"file_path": target, "content": "# Team\nHELLO TEAM!\n"}, usage=usage),
                Reply.text(f"Wrote out.md {FAKE_KEY}", usage=usage), endpoint="/v1/messages")
    result, requests = run(api, request)

    assert result.outcome == "completed", result.error
    assert Path(target).read_text() == "# Team\nHELLO TEAM!\n"
    assert len(requests) == 2 and "File created successfully" in requests[1].tool_results()[0]
    assert api.pending("/v1/messages") == 0
    u = result.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_creation_tokens) == (2400, 60, 1000, 200)
    assert u.cost_usd == pytest.approx(2400 * SONNET["input"] + 60 * SONNET["output"] + 1000 * SONNET["cache_read"]
                                       + 200 * SONNET["cache_write"])
    assert (u.num_turns, u.requests) == (2, 2)
    # The key the model echoed is scrubbed from the output and from everything stored.
    assert result.output == "Wrote out.md [REDACTED]"
    assert_no_key(result.output, result.transcript, result.stdout, result.stderr)
    stream = parse_stream(result.transcript or b"")
    assert [t.name for t in stream.tool_uses] == ["Write"]
    assert stream.result is not None and stream.result["permission_denials"] == []
    assert_offline(api, proxy)


def test_is_error_result_is_an_error(api: FakeAPI, proxy: RecordingProxy, trials: Trials) -> None:
    api.enqueue(Reply.fault("403"), endpoint="/v1/messages")
    result, requests = run(api, trials.request(kind="claude-code", model=MODEL))

    stream = parse_stream(result.transcript or b"")
    assert stream.result is not None
    assert (stream.result["subtype"], stream.result["is_error"]) == ("success", True)  # what the CLI says
    assert result.outcome == "error"
    assert result.error is not None and "403" in result.error and "reported an error" in result.error
    assert result.exit_code == 1
    assert len(requests) == 1
    assert_offline(api, proxy)


def test_max_turns_is_an_error_with_the_reason(api: FakeAPI, proxy: RecordingProxy, trials: Trials) -> None:
    request = trials.request(kind="claude-code", model=MODEL, agent_extra={"max_turns": 1})
    api.enqueue(Reply.tool_use("Bash", {"command": "ls"}), Reply.text("never sent"), endpoint="/v1/messages")
    result, requests = run(api, request)

    assert result.outcome == "error"
    assert result.error is not None and "turn limit (max_turns)" in result.error
    assert len(requests) == 1 and api.pending("/v1/messages") == 1
    assert_offline(api, proxy)


def test_timeout_kills_the_cli(api: FakeAPI, proxy: RecordingProxy, trials: Trials) -> None:
    api.enqueue(Reply.fault("hang", seconds=60), endpoint="/v1/messages")
    result, requests = run(api, trials.request(kind="claude-code", model=MODEL, timeout=4))

    assert result.outcome == "timeout"
    assert result.error is not None and "timed out after 4s" in result.error
    assert result.exit_code is None
    assert len(requests) == 1
    assert_offline(api, proxy)


def test_reading_a_forbidden_file_is_a_cheat(api: FakeAPI, proxy: RecordingProxy, trials: Trials) -> None:
    request = trials.request(kind="claude-code", model=MODEL, forbidden=(r"secret\.txt$",), inputs=("secret.txt",))
    secret = os.path.join(request.workspace, "secret.txt")
    api.enqueue(Reply.tool_use("Read", {"file_path": secret}), Reply.text("The answer is 42."),
                endpoint="/v1/messages")
    result, requests = run(api, request)

    assert result.outcome == "cheat"
    assert result.forbidden_reads == (secret,)
    assert result.output == "The answer is 42."
    assert len(requests) == 2 and "the expected answer: 42" in requests[1].tool_results()[0]
    assert_offline(api, proxy)


def test_the_proxy_sees_what_the_quiet_settings_prevent(api: FakeAPI, proxy: RecordingProxy, trials: Trials,
                                                        _claude: str) -> None:
    """The control for assert_offline: without CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC the same CLI calls home,
    and the recording proxy catches it. So an empty `proxy.seen` in the other tests means something."""
    request = trials.request(kind="claude-code", model=MODEL)
    api.default = Reply.text("hello")
    env = {**request.env, "HOME": request.home, "CLAUDE_CONFIG_DIR": os.path.join(request.home, ".claude"),
           **api.anthropic_env()}
    for name in QUIET_ENV:
        env.pop(name, None)
    done = subprocess.run([_claude, "-p", "--output-format", "stream-json", "--verbose"], input=b"hi",
                          cwd=request.workspace, env=env, capture_output=True, timeout=60, check=False)
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["result"] == "hello"
    assert proxy.seen, "expected Claude Code to try another host without the quiet settings"
    assert all(line.startswith("CONNECT ") for line in proxy.seen)
