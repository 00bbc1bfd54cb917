"""The CLI agents without the real CLIs: stream parsers over recorded transcripts (tests/data/streams, recorded
from claude 2.1.328 and codex 0.169.0 against the fake API), argv/config building, skill installation, secret
scrubbing, forbidden-file detection, and run() driving a stand-in script that replays a recorded stream."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest

from skillmake.core.redact import redact_bytes, redact_text
from skillmake.run.agents import claude_code, cli_common, codex
from skillmake.run.agents.base import TrialRequest
from skillmake.run.workspace import clean_env
from skillmake.spec.loader import load_spec
from skillmake.spec.model import AgentConfig, Skill
from tests.conftest import write

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"
# The workspace the recorded claude_tools.jsonl run had (its init event's cwd).
TOOLS_WS = "/tmp/pytest-of-root/pytest-60/test_record0/runs/trial-2/workspace"


def stream(name: str) -> bytes:
    return (STREAMS / name).read_bytes()


# -- claude stream-json -----------------------------------------------------------------------------------------


def test_claude_skill_run_is_parsed() -> None:
    parsed = claude_code.parse_stream(stream("claude_skill.jsonl"))
    assert parsed.init is not None and parsed.init["claude_code_version"] == "2.1.328"
    assert parsed.result is not None and claude_code.result_error(parsed.result) is None
    assert parsed.skills == ("shout",)
    assert [t.name for t in parsed.tool_uses] == ["Skill"]
    assert claude_code._output(parsed) == "HELLO TEAM!"
    usage = claude_code.usage_of(parsed)
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_creation_tokens) == (
        2400, 60, 1000, 200)
    assert usage.cost_usd == pytest.approx(0.00915)
    assert (usage.num_turns, usage.requests) == (3, 2)
    assert claude_code.activated_skills(parsed, "say hello", "shout") == ("shout",)


def test_claude_is_error_with_subtype_success_is_a_failure() -> None:
    parsed = claude_code.parse_stream(stream("claude_is_error.jsonl"))
    assert parsed.result is not None and parsed.result["subtype"] == "success"
    error = claude_code.result_error(parsed.result)
    assert error == "claude reported an error: API status 403: Failed to authenticate. API Error: 403 fakeapi fault 403"


def test_claude_max_turns_names_the_limit() -> None:
    parsed = claude_code.parse_stream(stream("claude_max_turns.jsonl"))
    assert parsed.result is not None
    error = claude_code.result_error(parsed.result)
    assert error is not None and error.startswith("claude reached the turn limit (max_turns) after 2 turns")
    assert [d["tool_name"] for d in parsed.permission_denials] == ["Write"]


@pytest.mark.parametrize(("subtype", "expected"), [
    ("error_max_budget_usd", "claude reached the spending limit (budget_usd)"),
    ("error_during_execution", "claude failed during execution: boom"),
    ("error_something_new", "claude ended with error_something_new: boom"),
])
def test_claude_error_subtypes(subtype: str, expected: str) -> None:
    error = claude_code.result_error({"subtype": subtype, "is_error": True, "errors": ["boom"]})
    assert error is not None and error.startswith(expected)


def test_claude_truncated_stream_has_no_result() -> None:
    data = stream("claude_skill.jsonl")
    last_line = data.rstrip(b"\n").rindex(b"\n") + 1
    assert b'"type":"result"' in data[last_line:]
    cut = data[: last_line + 40]  # killed while writing the result line
    parsed = claude_code.parse_stream(cut)
    assert parsed.result is None and parsed.bad_lines == 1
    assert parsed.last_text == "HELLO TEAM!"
    assert claude_code.usage_of(parsed).requests == 2


def test_claude_garbage_lines_are_counted_not_fatal() -> None:
    parsed = claude_code.parse_stream(b"Error: something broke\n[1, 2]\n\n" + stream("claude_skill.jsonl"))
    assert parsed.bad_lines == 2 and parsed.result is not None


@pytest.mark.parametrize(("prompt", "installed", "expected"), [
    ("/shout the release", "shout", ("shout",)),
    ("  /debug why", None, ("debug",)),  # a skill the CLI listed (bundled)
    ("/etc/passwd is what?", None, ()),
    ("please /shout", "shout", ()),
    ("", None, ()),
])
def test_claude_slash_command_activation(prompt: str, installed: str | None, expected: tuple[str, ...]) -> None:
    parsed = claude_code.parse_stream(stream("claude_is_error.jsonl"))  # has an init event, no Skill calls
    assert claude_code.activated_skills(parsed, prompt, installed) == expected


def test_claude_tool_inputs_reveal_forbidden_reads() -> None:
    parsed = claude_code.parse_stream(stream("claude_tools.jsonl"))
    values = [s for use in parsed.tool_uses for s in cli_common.strings_in(use.input)]
    assert cli_common.forbidden_hits(values, [r"secret\.txt$"], TOOLS_WS) == (f"{TOOLS_WS}/secret.txt",)
    assert cli_common.forbidden_hits(values, [r".*\.eval\.yaml$"], TOOLS_WS) == ("notes/*.eval.yaml",)
    assert cli_common.forbidden_hits(values, [r"^\./secret"], TOOLS_WS) == ("./secret.txt",)  # workspace-relative
    assert cli_common.forbidden_hits(values, [r"\.env$"], TOOLS_WS) == ()
    assert cli_common.forbidden_hits(values, [], TOOLS_WS) == ()


def test_claude_argv() -> None:
    argv = claude_code.build_argv("claude", AgentConfig(kind="claude-code"), None)
    assert argv == ["claude", "-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence",
                    "--permission-mode", "acceptEdits"]
    config = AgentConfig(kind="claude-code", max_turns=5, budget_usd=0.5, allowed_tools=("Read", "Bash(git *)"),
                         flags=("--dangerously-skip-permissions",))
    argv = claude_code.build_argv("claude", config, "claude-sonnet-4-6")
    assert argv[6:] == ["--model", "claude-sonnet-4-6", "--max-turns", "5", "--max-budget-usd", "0.5",
                        "--allowedTools", "Read,Bash(git *)", "--dangerously-skip-permissions"]
    assert "--permission-mode" not in argv
    flagged = claude_code.build_argv("claude", AgentConfig(kind="claude-code", flags=("--permission-mode=plan",)), None)
    assert flagged.count("--permission-mode=plan") == 1 and "acceptEdits" not in flagged


# -- codex JSONL ------------------------------------------------------------------------------------------------


def test_codex_skill_run_is_parsed() -> None:
    events = codex.parse_events(stream("codex_skill.jsonl"))
    assert events.thread_id and events.turns == 1 and not events.failures
    assert events.messages == ("HELLO TEAM!",)
    assert events.warnings and "Model metadata" in events.warnings[0]  # a warning item, not a failure
    assert codex.activated_skills(events, "greet the team", "shout") == ("shout",)
    usage = codex.usage_of(events, "gpt-5.4")
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens, usage.num_turns) == (1600, 400, 100, 1)
    assert usage.cost_usd == pytest.approx((1600 * 2.5 + 400 * 0.25 + 100 * 15) / 1e6)  # gpt-5.4 list prices
    assert codex.usage_of(events, "some-local-model").cost_usd is None


def test_codex_failed_turn_and_retries() -> None:
    failed = codex.parse_events(stream("codex_failed.jsonl"))
    assert failed.turns == 0 and failed.usage is None
    assert len(failed.failures) == 1 and "fakeapi fault 400" in failed.failures[0]
    retried = codex.parse_events(stream("codex_retry.jsonl"))  # a retry notice, then success
    assert retried.failures == () and len(retried.notices) == 1 and retried.turns == 1
    assert retried.messages[-1] == "recovered"


def test_codex_usage_sums_turns_and_activation_by_mention() -> None:
    lines = [json.dumps({"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 4,
                                                               "output_tokens": 2}})] * 2
    events = codex.parse_events("\n".join(lines).encode())
    usage = codex.usage_of(events, None)
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens, usage.num_turns) == (12, 8, 4, 2)
    assert usage.cost_usd is None
    assert codex.activated_skills(events, "use $shout now", "shout") == ("shout",)
    assert codex.activated_skills(events, "use $shouting now", "shout") == ()
    # Codex 0.169.0 injects the skill for "$$shout" too (measured: tests/unit/run/test_agents_activation.py).
    assert codex.activated_skills(events, "cost is $$shout", "shout") == ("shout",)


def test_codex_forbidden_reads_inside_shell_commands() -> None:
    items = [{"type": "command_execution", "command": "/bin/bash -lc 'cat secret.txt | head -1'"},
             {"type": "file_change", "changes": [{"path": "/ws/answers/key.md", "kind": "add"}]},
             {"type": "agent_message", "text": "cat secret.txt"}]
    touched = [s for item in items for s in codex.item_strings(item)]
    assert cli_common.forbidden_hits(touched, [r"secret\.txt$", r"answers/"], "/ws") == ("secret.txt",
                                                                                          "/ws/answers/key.md")


def test_codex_config_toml() -> None:
    config = tomllib.loads(codex.config_toml(model='gpt-"5"', base_url="http://127.0.0.1:9/v1"))
    assert config["model"] == 'gpt-"5"'
    assert config["model_provider"] == "skillmake"
    assert config["model_providers"]["skillmake"] == {"name": "skillmake", "base_url": "http://127.0.0.1:9/v1",
                                                      "wire_api": "responses", "env_key": "OPENAI_API_KEY"}
    assert config["check_for_update_on_startup"] is False
    assert config["analytics"] == {"enabled": False} and config["features"] == {"plugins": False}
    assert "model" not in tomllib.loads(codex.config_toml(model=None, base_url="http://x/v1"))


@pytest.mark.parametrize(("prompt", "installed", "expected"), [
    ("/shout the release", "shout", "$shout the release"),
    ("/shout", "shout", "$shout"),
    ("/shouting loudly", "shout", "/shouting loudly"),
    ("/shout the release", None, "/shout the release"),
    ("say /shout", "shout", "say /shout"),
])
def test_codex_prompt_turns_a_slash_command_into_a_mention(prompt: str, installed: str | None,
                                                           expected: str) -> None:
    assert codex.codex_prompt(prompt, installed) == expected


def test_codex_argv_reads_the_prompt_from_stdin() -> None:
    argv = codex.build_argv("codex", AgentConfig(kind="codex", flags=("-c", "x=1")), "gpt-5.4")
    assert argv == ["codex", "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--model", "gpt-5.4",
                    "-c", "x=1", "-"]


# -- shared helpers ---------------------------------------------------------------------------------------------


def test_scrub() -> None:
    assert redact_bytes(b"key=sk-abc123 and sk-abc123", ["sk-abc123", ""]) == b"key=[REDACTED] and [REDACTED]"
    assert redact_text("abc", ["ab"]) == "abc"  # too short to be a key: left alone
    assert redact_text("a sk-xyz9 b", ["sk-xyz9"]) == "a [REDACTED] b"


def _exe(path: Path, text: str = "#!/bin/sh\necho 1.0\n") -> Path:
    write(path, text)
    path.chmod(0o755)
    return path


def test_find_cli_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    local = _exe(project / ".tools" / "npm" / "node_modules" / ".bin" / "claude")
    on_path = _exe(tmp_path / "bin" / "claude")
    explicit = _exe(tmp_path / "elsewhere" / "my-claude")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr(cli_common, "_PACKAGE_ROOT", tmp_path / "no-checkout")
    nested = project / "specs" / "deep"
    nested.mkdir(parents=True)
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(explicit))
    assert cli_common.find_cli("claude", "SKILLMAKE_CLAUDE", start=str(nested)) == str(explicit)
    monkeypatch.delenv("SKILLMAKE_CLAUDE")
    assert cli_common.find_cli("claude", "SKILLMAKE_CLAUDE", start=str(nested)) == str(local)
    assert cli_common.find_cli("claude", "SKILLMAKE_CLAUDE", start=str(tmp_path)) == str(on_path)
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(tmp_path / "missing"))
    assert cli_common.find_cli("claude", "SKILLMAKE_CLAUDE", start=str(nested)) is None


def test_calipers_codex_cli_path_names_codex_after_skillmakes_own_variable(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    theirs, ours = _exe(tmp_path / "caliper" / "codex"), _exe(tmp_path / "mine" / "codex")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(cli_common, "_PACKAGE_ROOT", tmp_path / "no-checkout")
    monkeypatch.delenv("SKILLMAKE_CODEX", raising=False)
    monkeypatch.setenv("CODEX_CLI_PATH", str(theirs))
    assert cli_common.find_cli("codex", "SKILLMAKE_CODEX", start=str(tmp_path)) == str(theirs)
    monkeypatch.setenv("SKILLMAKE_CODEX", str(ours))
    assert cli_common.find_cli("codex", "SKILLMAKE_CODEX", start=str(tmp_path)) == str(ours)
    monkeypatch.delenv("SKILLMAKE_CODEX")
    assert cli_common.find_cli("claude", "SKILLMAKE_CLAUDE", start=str(tmp_path)) is None  # codex's name only


def test_cli_version_is_cached(tmp_path: Path) -> None:
    counter = tmp_path / "calls"
    binary = _exe(tmp_path / "fakecli", f"#!/bin/sh\necho x >> {counter}\necho '9.9.9 (Fake)'\n")
    assert cli_common.cli_version(str(binary)) == "9.9.9 (Fake)"
    assert cli_common.cli_version(str(binary)) == "9.9.9 (Fake)"
    assert counter.read_text().count("x") == 1
    broken = _exe(tmp_path / "broken", "#!/bin/sh\nexit 3\n")
    assert cli_common.cli_version(str(broken)) is None


# -- run() with a stand-in CLI replaying a recorded stream ----------------------------------------------------------

_REPLAY = """\
import json, os, sys
prompt = sys.stdin.read()
with open(os.environ["REPLAY_LOG"], "w") as f:
    json.dump({"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(), "prompt": prompt}, f)
sys.stdout.write(open(os.environ["REPLAY_STREAM"]).read().replace("HELLO TEAM!", "HELLO " + os.environ.get(
    "ANTHROPIC_API_KEY", os.environ.get("OPENAI_API_KEY", ""))))
sys.stderr.write("debug: key " + os.environ.get("ANTHROPIC_API_KEY", os.environ.get("OPENAI_API_KEY", "")) + "\\n")
sys.exit(int(os.environ.get("REPLAY_EXIT", "0")))
"""


def _request(tmp_path: Path, kind: str, *, skill: bool = True, env: dict[str, str]) -> TrialRequest:
    project = tmp_path / "project"
    write(project / "skills" / "shout" / "SKILL.md", "---\nname: shout\ndescription: d\n---\nShout.\n")
    write(project / "skills" / "shout" / "refs" / "a.txt", "x")
    agent_env = json.dumps({k: v for k, v in env.items()})
    write(project / "s.eval.yaml", f"skill: skills/shout\nagent: {{kind: {kind}, model: m-1, env: {agent_env}}}\n"
                                   "cases:\n  - id: c\n    prompt: hi\n    checks: [{type: min_length, length: 1}]\n")
    spec = load_spec(str(project / "s.eval.yaml"))
    ws, home = tmp_path / "ws", tmp_path / "trial-home"  # tmp_path/home is the test HOME (conftest)
    ws.mkdir()
    home.mkdir()
    return TrialRequest(spec=spec, case=spec.cases[0], arm_name="with_skill", k=0, agent=spec.agent,
                        skill=spec.skill if skill else None, prompt="-starts with a dash", system_prompt=None,
                        workspace=str(ws), home=str(home), env=clean_env(home), timeout=30)


@pytest.fixture
def replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = _exe(tmp_path / "replay-cli", f"#!{sys.executable}\n{_REPLAY}")
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(script))
    monkeypatch.setenv("SKILLMAKE_CODEX", str(script))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-replay")  # claude-code refuses to start without credentials
    return tmp_path / "replay.json"


def test_claude_run_env_install_and_scrubbing(tmp_path: Path, replay: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-1")
    request = _request(tmp_path, "claude-code", env={"REPLAY_LOG": str(replay),
                                                     "REPLAY_STREAM": str(STREAMS / "claude_skill.jsonl")})
    result = claude_code.AGENT.run(request)
    seen = json.loads(replay.read_text())
    assert result.outcome == "completed" and result.output == "HELLO [REDACTED]"
    assert b"sk-ant-secret-1" not in (result.transcript or b"") + result.stdout + result.stderr
    assert seen["prompt"] == "-starts with a dash" and seen["cwd"] == request.workspace
    assert seen["argv"][:2] == ["-p", "--output-format"] and "--model" in seen["argv"]
    env = seen["env"]
    assert env["HOME"] == request.home and env["CLAUDE_CONFIG_DIR"] == os.path.join(request.home, ".claude")
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:1" and env["ANTHROPIC_API_KEY"] == "sk-ant-secret-1"
    assert all(env[k] == v for k, v in claude_code.QUIET_ENV.items())
    assert "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS" not in env
    assert (Path(request.workspace) / ".claude" / "skills" / "shout" / "refs" / "a.txt").is_file()
    assert result.activated_skills == ("shout",)


def test_claude_run_without_result_is_an_error(tmp_path: Path, replay: Path) -> None:
    request = _request(tmp_path, "claude-code", skill=False, env={
        "REPLAY_LOG": str(replay), "REPLAY_STREAM": str(STREAMS / "codex_failed.jsonl"), "REPLAY_EXIT": "2"})
    result = claude_code.AGENT.run(request)
    assert result.outcome == "error" and result.exit_code == 2
    assert result.error is not None and result.error.startswith("claude exited with 2 before its result event")
    assert not (Path(request.workspace) / ".claude").exists()


def test_codex_run_writes_its_home_and_installs_the_skill(tmp_path: Path, replay: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:2/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret-2")
    request = _request(tmp_path, "codex", env={"REPLAY_LOG": str(replay),
                                               "REPLAY_STREAM": str(STREAMS / "codex_skill.jsonl")})
    result = codex.AGENT.run(request)
    seen = json.loads(replay.read_text())
    assert result.outcome == "completed" and result.output == "HELLO [REDACTED]"
    assert b"sk-openai-secret-2" not in (result.transcript or b"") + result.stderr
    assert seen["argv"][-1] == "-" and seen["prompt"] == "-starts with a dash"
    codex_home = Path(request.home) / ".codex"
    assert seen["env"]["CODEX_HOME"] == str(codex_home) and seen["env"]["OPENAI_API_KEY"] == "sk-openai-secret-2"
    config = tomllib.loads((codex_home / "config.toml").read_text())
    assert config["model"] == "m-1" and config["model_providers"]["skillmake"]["base_url"] == "http://127.0.0.1:2/v1"
    assert (Path(request.workspace) / ".agents" / "skills" / "shout" / "refs" / "a.txt").is_file()


def test_codex_run_failed_turn(tmp_path: Path, replay: Path) -> None:
    request = _request(tmp_path, "codex", env={"REPLAY_LOG": str(replay), "REPLAY_EXIT": "1",
                                               "REPLAY_STREAM": str(STREAMS / "codex_failed.jsonl")})
    result = codex.AGENT.run(request)
    assert result.outcome == "error" and "fakeapi fault 400" in (result.error or "")


def test_codex_installs_a_command_file_with_frontmatter(tmp_path: Path, replay: Path) -> None:
    request = _request(tmp_path, "codex", env={})
    command = write(tmp_path / "yell.md", "# Yell at people\n\nSay it LOUD.\n")
    from dataclasses import replace

    codex.install_skill(replace(request, skill=Skill(name="yell", path=str(command), kind="command")))
    text = (Path(request.workspace) / ".agents" / "skills" / "yell" / "SKILL.md").read_text()
    assert text == '---\nname: yell\ndescription: "Yell at people"\n---\n# Yell at people\n\nSay it LOUD.\n'


def test_missing_cli_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(tmp_path / "nope"))
    monkeypatch.setenv("SKILLMAKE_CODEX", str(tmp_path / "nope"))
    request = _request(tmp_path, "claude-code", env={})
    result = claude_code.AGENT.run(request)
    assert result.outcome == "error" and "scripts/setup.sh" in (result.error or "")
    assert claude_code.AGENT.version(request.agent) is None
    assert codex.AGENT.run(request).outcome == "error"


def test_claude_sync_tasks_and_spec_env(tmp_path: Path, replay: Path) -> None:
    from dataclasses import replace

    request = _request(tmp_path, "claude-code", env={"REPLAY_LOG": str(replay), "DISABLE_TELEMETRY": "0",
                                                     "REPLAY_STREAM": str(STREAMS / "claude_skill.jsonl")})
    request = replace(request, agent=replace(request.agent, sync_tasks=True))
    assert claude_code.AGENT.run(request).outcome == "completed"
    env = json.loads(replay.read_text())["env"]
    assert env["CLAUDE_CODE_DISABLE_BACKGROUND_TASKS"] == "1"
    assert env["DISABLE_TELEMETRY"] == "0"  # the spec's env wins over the defaults
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
