"""The codex agent driving the real `codex` CLI against the loopback fake API (Responses API over SSE)."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from skillmake.core.pricing import price_of
from skillmake.run.agents.base import AgentResult, TrialRequest
from skillmake.run.agents.codex import AGENT, config_toml, parse_events
from tests.e2e.cli_fakes import RecordingProxy
from tests.e2e.clis import require_cli
from tests.e2e.conftest import SKILL_BODY_MARK, SKILL_DESC_MARK, Trials, assert_no_key, assert_offline
from tests.fakeapi import FAKE_KEY, FakeAPI, Recorded, Reply

pytestmark = pytest.mark.e2e
MODEL = "gpt-5.4"


@pytest.fixture(autouse=True)
def _codex() -> str:
    return require_cli("codex")


def run(api: FakeAPI, request: TrialRequest) -> tuple[AgentResult, list[Recorded]]:
    before = len(api.requests)
    result = AGENT.run(request)
    return result, api.requests[before:]


def shout_model(request: Recorded) -> Reply:
    """Follows the shout skill only once its body is in the conversation: it sees the skill listed, reads its
    SKILL.md with a shell command (as Codex does), then shouts. Without the skill it talks normally."""
    if request.contains(SKILL_BODY_MARK):
        return Reply.text("HELLO TEAM!")
    if request.contains(SKILL_DESC_MARK):
        return Reply.tool_use("exec_command", {"cmd": "cat .agents/skills/shout/SKILL.md"})
    return Reply.text("Hello, team.")


def test_with_skill_differs_from_baseline(api: FakeAPI, proxy: RecordingProxy, trials: Trials) -> None:
    api.script = FakeAPI.follows_skill(SKILL_BODY_MARK, with_skill=Reply.text("HELLO TEAM!"),
                                       without_skill=shout_model)
    skill_request = trials.request(kind="codex", model=MODEL)
    with_skill, with_requests = run(api, skill_request)
    baseline_request = trials.request(kind="codex", model=MODEL, with_skill=False)
    baseline, baseline_requests = run(api, baseline_request)

    assert (with_skill.outcome, with_skill.output) == ("completed", "HELLO TEAM!"), with_skill.error
    assert (baseline.outcome, baseline.output) == ("completed", "Hello, team."), baseline.error
    assert with_skill.activated_skills == ("shout",)
    assert baseline.activated_skills == ()
    assert [r.path for r in with_requests] == ["/v1/responses"] * 2
    assert len(baseline_requests) == 1
    assert not with_requests[0].contains(SKILL_BODY_MARK) and with_requests[1].contains(SKILL_BODY_MARK)
    assert not baseline_requests[0].contains(SKILL_DESC_MARK)
    assert {r.model for r in api.requests} == {MODEL}
    assert {r.headers.get("authorization") for r in api.requests} == {f"Bearer {FAKE_KEY}"}
    installed = Path(skill_request.workspace) / ".agents" / "skills" / "shout"
    assert sorted(p.name for p in installed.iterdir()) == ["SKILL.md", "reference.txt"]
    assert not (Path(baseline_request.workspace) / ".agents").exists()
    config = tomllib.loads((Path(skill_request.home) / ".codex" / "config.toml").read_text())
    assert config["model_providers"]["skillmake"]["base_url"] == api.openai_url
    assert_no_key(with_skill.transcript, with_skill.stderr, baseline.transcript,
                  (Path(skill_request.home) / ".codex" / "config.toml").read_text())
    assert_offline(api, proxy)


@pytest.mark.parametrize("prompt", ["use $shout to greet the team", "/shout greet the team"])
def test_dollar_mention_activates_the_skill(api: FakeAPI, proxy: RecordingProxy, trials: Trials, prompt: str) -> None:
    """`$shout` in the prompt makes Codex inject the skill's body itself, in the first request; a clauditor-style
    `/shout args` prompt is sent as `$shout args`."""
    api.script = FakeAPI.follows_skill(SKILL_BODY_MARK, with_skill=Reply.text("HELLO TEAM!"),
                                       without_skill=Reply.text("Hello, team."))
    result, requests = run(api, trials.request(kind="codex", model=MODEL, prompt=prompt))

    assert (result.outcome, result.output) == ("completed", "HELLO TEAM!"), result.error
    assert result.activated_skills == ("shout",)
    assert len(requests) == 1
    assert_offline(api, proxy)


def test_shell_tool_writes_the_output_file_and_usage_is_priced(api: FakeAPI, proxy: RecordingProxy,
                                                               trials: Trials) -> None:
    request = trials.request(kind="codex", model=MODEL, prompt="write the team greeting to out.md")
    usage = {"input_tokens": 1000, "cache_read_input_tokens": 200, "output_tokens": 50}
    api.enqueue(Reply.tool_use("exec_command", {"cmd": "printf '# Team\\nHELLO TEAM!\\n' > out.md"}, usage=usage),
                Reply.text(f"Wrote out.md {FAKE_KEY}", usage=usage), endpoint="/v1/responses")
    result, requests = run(api, request)

    assert result.outcome == "completed", result.error
    assert (Path(request.workspace) / "out.md").read_text() == "# Team\nHELLO TEAM!\n"
    assert len(requests) == 2 and api.pending("/v1/responses") == 0
    u = result.usage
    # Codex counts cached tokens inside input_tokens; the record keeps them apart, as for Claude Code.
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.num_turns) == (1600, 400, 100, 1)
    price = price_of(MODEL)
    assert price is not None
    assert u.cost_usd == pytest.approx((1600 * price.input + 400 * price.cache_read + 100 * price.output) / 1e6)
    assert result.output == "Wrote out.md [REDACTED]"
    assert_no_key(result.output, result.transcript, result.stderr)
    assert [i["type"] for i in parse_events(result.transcript or b"").items if i["type"] != "error"] == [
        "command_execution", "agent_message"]
    assert_offline(api, proxy)


def test_api_error_is_an_error(api: FakeAPI, proxy: RecordingProxy, trials: Trials) -> None:
    api.enqueue(Reply.fault("400"), endpoint="/v1/responses")
    result, requests = run(api, trials.request(kind="codex", model=MODEL))

    assert result.outcome == "error"
    assert result.error is not None and "fakeapi fault 400" in result.error
    assert result.exit_code == 1
    assert len(requests) == 1
    assert_offline(api, proxy)


def test_timeout_kills_the_cli(api: FakeAPI, proxy: RecordingProxy, trials: Trials) -> None:
    api.enqueue(Reply.fault("hang", seconds=60), endpoint="/v1/responses")
    result, requests = run(api, trials.request(kind="codex", model=MODEL, timeout=4))

    assert result.outcome == "timeout"
    assert result.error is not None and "timed out after 4s" in result.error
    assert len(requests) == 1
    assert_offline(api, proxy)


def test_reading_a_forbidden_file_is_a_cheat(api: FakeAPI, proxy: RecordingProxy, trials: Trials) -> None:
    request = trials.request(kind="codex", model=MODEL, forbidden=(r"secret\.txt$",), inputs=("secret.txt",))
    api.enqueue(Reply.tool_use("exec_command", {"cmd": "cat secret.txt"}), Reply.text("The answer is 42."),
                endpoint="/v1/responses")
    result, requests = run(api, request)

    assert result.outcome == "cheat"
    assert result.forbidden_reads == ("secret.txt",)
    assert result.output == "The answer is 42."
    assert len(requests) == 2 and "the expected answer: 42" in requests[1].tool_results()[0]
    assert_offline(api, proxy)


def test_the_proxy_sees_what_the_quiet_config_prevents(api: FakeAPI, proxy: RecordingProxy, trials: Trials,
                                                       _codex: str) -> None:
    """The control for assert_offline: without the update check, analytics and plugin sync switched off in
    config.toml, the same CLI calls other hosts, and the recording proxy catches it."""
    request = trials.request(kind="codex", model=MODEL)
    api.default = Reply.text("hello")
    home = Path(request.home) / ".codex"
    home.mkdir(parents=True)
    quiet = config_toml(model=MODEL, base_url=api.openai_url)
    loud = "\n".join(line for line in quiet.splitlines()
                     if not line.startswith(("check_for_update", "enabled", "plugins", "[analytics]", "[features]")))
    (home / "config.toml").write_text(loud + "\n")
    env = {**request.env, "HOME": request.home, "CODEX_HOME": str(home), **api.openai_env()}
    done = subprocess.run([_codex, "exec", "--json", "--skip-git-repo-check", "-"], input=b"hi",
                          cwd=request.workspace, env=env, capture_output=True, timeout=60, check=False)
    assert parse_events(done.stdout).messages == ("hello",)
    assert proxy.seen, "expected Codex to try another host without the quiet config"
    assert all(line.startswith("CONNECT ") for line in proxy.seen)
