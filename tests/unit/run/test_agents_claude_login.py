"""claude-code without credentials says what to set (a trial's fresh HOME means `/login` cannot help), both
before starting the CLI and when the CLI answers "Not logged in · Please run /login"."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from skillmake.run.agents import TrialRequest, claude_code
from skillmake.run.workspace import clean_env
from skillmake.spec.loader import load_spec
from tests.conftest import write

# What Claude Code 2.1.328 prints in -p stream-json mode without any credentials (recorded against the loopback
# fake; the init event shortened): a synthetic assistant message flagged authentication_failed, then the result.
NOT_LOGGED_IN = [
    {"type": "system", "subtype": "init", "cwd": "/ws", "session_id": "s", "tools": [], "model": "claude-sonnet-4-6"},
    {"type": "assistant", "message": {"id": "a7b1", "model": "<synthetic>", "role": "assistant", "type": "message",
                                      "content": [{"type": "text", "text": "Not logged in · Please run /login"}]},
     "session_id": "s", "error": "authentication_failed", "is_api_error_message": True},
    {"type": "result", "subtype": "success", "is_error": True, "num_turns": 1, "api_error_status": None,
     "result": "Not logged in · Please run /login", "total_cost_usd": 0, "terminal_reason": "api_error",
     "permission_denials": [], "usage": {"input_tokens": 0, "output_tokens": 0}},
]

_STAND_IN = """\
import json, os, sys
sys.stdin.read()
with open(os.environ["LOG"], "w") as f:
    json.dump(dict(os.environ), f)
sys.stdout.write(open(os.environ["STREAM"]).read().replace("TOKEN_ECHO", os.environ.get("CLAUDE_CODE_OAUTH_TOKEN", "")))
sys.exit(1)
"""


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in `claude` that logs its environment and prints STREAM; returns the log's path."""
    script = tmp_path / "claude"
    script.write_text(f"#!{sys.executable}\n{_STAND_IN}")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(script))
    for name in claude_code.CREDENTIAL_VARS:
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "cli-env.json"


def request(tmp_path: Path, events: list[dict[str, object]], log: Path, *, agent: str = "") -> TrialRequest:
    stream = write(tmp_path / "stream.jsonl", "".join(json.dumps(e) + "\n" for e in events))
    project = tmp_path / "project"
    write(project / "skills" / "s" / "SKILL.md", "---\nname: s\ndescription: d\n---\nbody\n")
    env = json.dumps({"LOG": str(log), "STREAM": str(stream)})
    write(project / "s.eval.yaml", f"skill: skills/s\nagent: {{kind: claude-code, env: {env}{agent}}}\n"
                                   "cases: [{id: c, prompt: hi, checks: [{type: min_length, length: 1}]}]\n")
    spec = load_spec(str(project / "s.eval.yaml"))
    ws, home = tmp_path / "ws", tmp_path / "trial-home"
    ws.mkdir()
    home.mkdir()
    return TrialRequest(spec=spec, case=spec.cases[0], arm_name="with_skill", k=0, agent=spec.agent, skill=spec.skill,
                        prompt="hi", system_prompt=None, workspace=str(ws), home=str(home), env=clean_env(home),
                        timeout=30)


def test_no_credentials_at_all_stops_before_the_cli_and_says_what_to_set(tmp_path: Path, cli: Path) -> None:
    result = claude_code.AGENT.run(request(tmp_path, NOT_LOGGED_IN, cli))
    assert result.outcome == "error"
    assert not cli.exists()  # the CLI never started
    error = result.error or ""
    assert error.startswith("claude-code has no credentials")
    for needed in ("ANTHROPIC_API_KEY", "claude setup-token", "CLAUDE_CODE_OAUTH_TOKEN",
                   "pass_env: [CLAUDE_CODE_OAUTH_TOKEN]", "fresh HOME"):
        assert needed in error, needed


def test_a_token_that_is_not_passed_through_is_named(tmp_path: Path, cli: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-secret")
    result = claude_code.AGENT.run(request(tmp_path, NOT_LOGGED_IN, cli))
    assert result.outcome == "error" and not cli.exists()
    assert result.error == ("claude-code has no credentials: CLAUDE_CODE_OAUTH_TOKEN is set but trials do not get "
                            "it; add `pass_env: [CLAUDE_CODE_OAUTH_TOKEN]` to the spec's agent")


def test_a_token_passed_through_reaches_the_cli_and_is_scrubbed(tmp_path: Path, cli: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-secret")
    events = [*NOT_LOGGED_IN[:2], {**NOT_LOGGED_IN[2], "result": "ok TOKEN_ECHO", "is_error": False}]
    result = claude_code.AGENT.run(request(tmp_path, events, cli, agent=", pass_env: [CLAUDE_CODE_OAUTH_TOKEN]"))
    assert json.loads(cli.read_text())["CLAUDE_CODE_OAUTH_TOKEN"] == "sk-ant-oat01-secret"
    assert result.outcome == "completed", result.error
    assert b"sk-ant-oat01-secret" not in result.stdout + (result.transcript or b"")
    assert "sk-ant-oat01-secret" not in result.output


@pytest.mark.parametrize("env", [{"ANTHROPIC_API_KEY": "sk-ant-x"}, {"ANTHROPIC_AUTH_TOKEN": "t"},
                                 {"CLAUDE_CODE_USE_BEDROCK": "1"}])
def test_other_credentials_start_the_cli(env: dict[str, str]) -> None:
    assert claude_code.missing_credentials(env, (), environ={}) is None
    assert claude_code.missing_credentials({"CLAUDE_CODE_USE_BEDROCK": "0"}, (), environ={}) is not None
    assert claude_code.missing_credentials({}, ("--settings=s.json",), environ={}) is None  # an apiKeyHelper


def test_the_not_logged_in_reply_becomes_the_actionable_error(tmp_path: Path, cli: Path) -> None:
    # `--settings` may carry an apiKeyHelper, so the CLI starts; its "Not logged in" reply is then translated.
    result = claude_code.AGENT.run(request(tmp_path, NOT_LOGGED_IN, cli, agent=", flags: [--settings, s.json]"))
    assert cli.exists()
    assert result.outcome == "error"
    hint = claude_code.LOGIN_HINT
    assert result.error == f"claude could not authenticate (Not logged in · Please run /login); {hint}"


def test_refused_credentials_say_which_to_check_and_other_errors_are_left_alone() -> None:
    refused = claude_code.parse_stream(b"".join(json.dumps(e).encode() + b"\n" for e in [
        NOT_LOGGED_IN[0], NOT_LOGGED_IN[1], {**NOT_LOGGED_IN[2], "result": "Failed to authenticate. API Error: 403"}]))
    assert claude_code.login_error(refused, "claude reported an error: 403") == (
        "claude reported an error: 403; the API refused the credentials: check ANTHROPIC_API_KEY, "
        "ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN")
    other = claude_code.parse_stream(b"".join(json.dumps(e).encode() + b"\n" for e in [
        NOT_LOGGED_IN[0], {**NOT_LOGGED_IN[2], "result": "API Error: 529 overloaded"}]))
    assert claude_code.login_error(other, "claude reported an error: 529") == "claude reported an error: 529"


@pytest.mark.e2e
def test_the_real_cli_without_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real `claude` against the loopback fake, with no credentials: its reply is recognised."""
    from tests.e2e.clis import require_cli
    from tests.fakeapi import FakeAPI

    binary = require_cli("claude")
    monkeypatch.setenv("SKILLMAKE_CLAUDE", binary)
    settings = write(tmp_path / "settings.json", "{}")
    with FakeAPI() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        for name in claude_code.CREDENTIAL_VARS:
            monkeypatch.delenv(name, raising=False)
        flags = f", flags: [--settings, {json.dumps(str(settings))}]"
        req = request(tmp_path, [], tmp_path / "unused.json", agent=flags)
        result = claude_code.AGENT.run(req)
        assert len(fake.requests) == 0  # refused before any model call
    assert result.outcome == "error"
    assert result.error is not None and result.error.startswith("claude could not authenticate (Not logged in")
    assert "CLAUDE_CODE_OAUTH_TOKEN" in result.error
    assert os.path.isdir(req.home)
