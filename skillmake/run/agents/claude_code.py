"""The claude-code agent: the real `claude -p --output-format stream-json --verbose` in the trial workspace."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skillmake.core.redact import redact_bytes as scrub
from skillmake.core.redact import redact_text as scrub_text
from skillmake.run import process
from skillmake.run.agents.base import AgentResult, TrialRequest, Usage
from skillmake.run.agents.claude_stream import ClaudeStream, activated_skills, activation_details, parse_stream

# re-exported: the stream's names stay importable from here
from skillmake.run.agents.claude_stream import ToolUse as ToolUse  # re-exported: the stream's names stay importable
from skillmake.run.agents.cli_common import (
    CliAgent,
    agent_env,
    endpoint,
    forbidden_hits,
    install_skill_folder,
    strings_in,
    tail,
)
from skillmake.spec.model import AgentConfig

ENV_VAR = "SKILLMAKE_CLAUDE"
# Claude Code calls home (telemetry, error reports, update checks, feature flags) unless told not to; a trial
# must talk to its model endpoint only. NONESSENTIAL_TRAFFIC covers them all; the others say it twice.
QUIET_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
# Flags that already decide permissions; without one, file edits in the workspace are accepted (a skill that
# writes its output must be able to), while anything else needs `allowed_tools`.
_PERMISSION_FLAGS = ("--permission-mode", "--dangerously-skip-permissions", "--allow-dangerously-skip-permissions")
# What the CLI accepts as credentials in -p mode. A trial's HOME is fresh, so a `claude /login` of the user's
# (kept in their own ~/.claude) never reaches it: one of these must come through the environment.
CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
_CLOUD_VARS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")  # their own creds
LOGIN_HINT = ("trials run with a fresh HOME, so `claude /login` cannot help: set ANTHROPIC_API_KEY, or create a "
              "token with `claude setup-token`, export it as CLAUDE_CODE_OAUTH_TOKEN and add "
              "`pass_env: [CLAUDE_CODE_OAUTH_TOKEN]` to the spec's agent")
# clauditor's --no-api-key for this run: the CLI gets neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN and
# authenticates with the subscription token instead (CLAUDE_CODE_OAUTH_TOKEN, passed through without `pass_env`:
# with a fresh HOME it is the only way a subscription reaches a trial). Not a key input: it changes who pays.
NO_API_KEY_VAR = "SKILLMAKE_NO_API_KEY"
_API_KEY_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
NO_API_KEY_HINT = ("--no-api-key runs claude on a subscription: create a token with `claude setup-token` and export "
                   "it as CLAUDE_CODE_OAUTH_TOKEN, or drop --no-api-key")


def no_api_key(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get(NO_API_KEY_VAR, "").strip() not in ("", "0")


_SUBTYPE_ERRORS = {
    "error_max_turns": "reached the turn limit (max_turns)",
    "error_max_budget_usd": "reached the spending limit (budget_usd)",
    "error_during_execution": "failed during execution",
}
# clauditor's interactive-hang warning, its "interactive-hang:" prefix kept so its users recognise it.
HANG_ERROR = ("interactive-hang: the skill stopped after one turn to ask for input (heuristic); put every parameter "
              "in the prompt (clauditor's test_args), or set `allow_hang_heuristic: false` when a question is "
              "the skill's answer")
ASK_TOOL = "AskUserQuestion"


def interactive_hang(stream: ClaudeStream) -> bool:
    """clauditor's interactive-hang heuristic: the run took exactly one turn, ended its turn (`end_turn`), and
    either its text ends with "?" or it called AskUserQuestion. Anything missing counts as no hang.

    Claude Code 2.1.328 streams each assistant message before its stop_reason is known (null there) and gives
    it on the result event instead (measured: tests/data/streams/claude_question.jsonl), so the result's
    stop_reason stands in when no assistant message carried one. In -p, AskUserQuestion is disabled: a call
    to it gets an error and a second turn, so with this CLI only the trailing "?" can fire."""
    result = stream.result or {}
    if result.get("num_turns") != 1:
        return False
    stop = stream.stop_reason if stream.stop_reason is not None else result.get("stop_reason")
    if stop != "end_turn":
        return False
    return stream.text.strip().endswith("?") or any(use.name == ASK_TOOL for use in stream.tool_uses)


def usage_of(stream: ClaudeStream) -> Usage:
    result = stream.result or {}
    raw = result.get("usage") or {}
    cost = result.get("total_cost_usd")
    turns = result.get("num_turns")
    return Usage(input_tokens=_int(raw.get("input_tokens")), output_tokens=_int(raw.get("output_tokens")),
                 cache_read_tokens=_int(raw.get("cache_read_input_tokens")),
                 cache_creation_tokens=_int(raw.get("cache_creation_input_tokens")),
                 cost_usd=float(cost) if isinstance(cost, (int, float)) else None,
                 num_turns=turns if isinstance(turns, int) else None,
                 requests=len(stream.message_ids) + stream.retries if stream.message_ids or stream.result else None)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def result_error(result: dict[str, Any]) -> str | None:
    """Why a result event is a failure, or None when it is a success. `is_error: true` is a failure even
    when `subtype` is "success" (an API error the CLI reported as the answer)."""
    subtype = str(result.get("subtype") or "")
    if subtype == "success" and not result.get("is_error"):
        return None
    if subtype == "success":
        parts = ["reported an error"]
    else:
        parts = [_SUBTYPE_ERRORS.get(subtype, f"ended with {subtype or 'no subtype'}")]
    if subtype == "error_max_turns" and isinstance(result.get("num_turns"), int):
        parts[0] += f" after {result['num_turns']} turns"
    status = result.get("api_error_status")
    if status:
        parts.append(f"API status {status}")
    errors = result.get("errors")
    detail = "; ".join(str(e) for e in errors) if isinstance(errors, list) and errors else str(result.get("result")
                                                                                                  or "")
    if detail:
        parts.append(detail.strip()[:500])
    return "claude " + ": ".join(parts)


def missing_credentials(env: Mapping[str, str], flags: Sequence[str],
                        environ: Mapping[str, str] | None = None) -> str | None:
    """Why the CLI would refuse with "Not logged in" in an environment `env`, or None when it has credentials
    (or may have them some other way: a cloud provider, a `--settings` file with an apiKeyHelper)."""
    if any(env.get(name) for name in CREDENTIAL_VARS):
        return None
    if any(env.get(name, "").strip().lower() not in ("", "0", "false") for name in _CLOUD_VARS):
        return None
    if any(flag.split("=", 1)[0] == "--settings" for flag in flags):
        return None
    outside = os.environ if environ is None else environ
    if outside.get("CLAUDE_CODE_OAUTH_TOKEN"):
        return ("claude-code has no credentials: CLAUDE_CODE_OAUTH_TOKEN is set but trials do not get it; add "
                "`pass_env: [CLAUDE_CODE_OAUTH_TOKEN]` to the spec's agent")
    return f"claude-code has no credentials (none of {', '.join(CREDENTIAL_VARS)} is set); {LOGIN_HINT}"


def login_error(stream: ClaudeStream, failure: str) -> str:
    """`failure` (the result's error), made actionable when credentials are the cause: the CLI found none
    ("Not logged in · Please run /login", which a trial's fresh HOME makes useless advice), or the API refused
    the ones it was given."""
    result = stream.result or {}
    text = str(result.get("result") or stream.last_text or "").strip()
    if "Please run /login" in text:
        return f"claude could not authenticate ({text[:200]}); {LOGIN_HINT}"
    if stream.auth_failed:
        return f"{failure}; the API refused the credentials: check {', '.join(CREDENTIAL_VARS)}"
    return failure


def build_argv(binary: str, config: AgentConfig, model: str | None) -> list[str]:
    """The command line; the prompt goes on stdin (a prompt starting with '-' must not read as a flag)."""
    argv = [binary, "-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence"]
    if model:
        argv += ["--model", model]
    if config.max_turns is not None:
        argv += ["--max-turns", str(config.max_turns)]
    if config.budget_usd is not None:
        argv += ["--max-budget-usd", f"{config.budget_usd:g}"]
    if config.allowed_tools:
        argv += ["--allowedTools", ",".join(config.allowed_tools)]
    if not any(f.split("=", 1)[0] in _PERMISSION_FLAGS for f in config.flags):
        argv += ["--permission-mode", "acceptEdits"]
    return argv + list(config.flags)


def install_skill(request: TrialRequest) -> None:
    """The skill where Claude Code finds project skills: `.claude/skills/<name>/` (the whole folder) or
    `.claude/commands/<name>.md`. Nothing for an arm without the skill."""
    skill = request.skill
    if skill is None or skill.kind == "prompt":  # a prompt file arrives as the trial's prompt: nothing to install
        return
    root = Path(request.workspace) / ".claude"
    if skill.kind == "folder":
        install_skill_folder(skill.path, root / "skills" / skill.name)
    else:
        dest = root / "commands" / f"{skill.name}.md"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(Path(skill.path).read_bytes())


class ClaudeCodeAgent(CliAgent):
    """Runs Claude Code headless in the workspace with a fresh HOME and CLAUDE_CONFIG_DIR per trial."""

    kind = "claude-code"

    cli = "claude"
    env_var = ENV_VAR

    def run(self, request: TrialRequest) -> AgentResult:
        binary = self.binary()  # the same lookup as version(): the key names this binary
        if isinstance(binary, AgentResult):
            return binary
        config = request.agent
        install_skill(request)
        ep = endpoint("anthropic", config)
        env = agent_env({**request.env, **QUIET_ENV}, config_env=config.env, pass_env=config.pass_env,
                        home=request.home)
        env["CLAUDE_CONFIG_DIR"] = str(Path(request.home) / ".claude")
        if ep.base_url:
            env.setdefault("ANTHROPIC_BASE_URL", ep.base_url)
        if no_api_key():
            for name in _API_KEY_VARS:
                env.pop(name, None)
            if os.environ.get("CLAUDE_CODE_OAUTH_TOKEN"):
                env.setdefault("CLAUDE_CODE_OAUTH_TOKEN", os.environ["CLAUDE_CODE_OAUTH_TOKEN"])
        else:
            if ep.api_key:
                env.setdefault("ANTHROPIC_API_KEY", ep.api_key)
            if ep.auth_token:
                env.setdefault("ANTHROPIC_AUTH_TOKEN", ep.auth_token)
        if config.sync_tasks:
            env["CLAUDE_CODE_DISABLE_BACKGROUND_TASKS"] = "1"
        missing = missing_credentials(env, config.flags)
        if missing and no_api_key():
            missing = f"claude-code has no subscription token under --no-api-key; {NO_API_KEY_HINT}"
        if missing:  # the CLI would only answer "Not logged in · Please run /login", which cannot help here
            return AgentResult(outcome="error", output="", error=missing, usage=Usage(num_turns=0, requests=0))
        secrets = ep.secrets + tuple(v for k, v in env.items() if k in CREDENTIAL_VARS and v)
        done = process.run(build_argv(binary, config, _model(config)), cwd=request.workspace, env=env,
                           timeout=request.timeout, stdin=request.prompt.encode())
        return self._result(request, done, secrets)

    def _result(self, request: TrialRequest, done: process.Completed, secrets: tuple[str, ...]) -> AgentResult:
        if done.error:
            return AgentResult(outcome="error", output="", error=done.error, usage=Usage(num_turns=0, requests=0))
        stdout, stderr = scrub(done.stdout, secrets), scrub(done.stderr, secrets)
        stream = parse_stream(stdout)
        common: dict[str, Any] = {
            "stdout": stdout, "stderr": stderr, "transcript": stdout, "exit_code": done.returncode,
            "usage": usage_of(stream),
            "activated_skills": activated_skills(stream, request.prompt, request.skill.name if request.skill else None),
            "details": details_of(stream),
        }
        inputs = [s for use in stream.tool_uses for s in strings_in(use.input)]
        hits = forbidden_hits(inputs, request.spec.forbidden_files, request.workspace)
        if hits:
            return AgentResult(outcome="cheat", output=_output(stream), forbidden_reads=hits,
                               error=f"the agent touched forbidden files: {', '.join(hits)}", **common)
        if done.timed_out:
            return AgentResult(outcome="timeout", output=stream.last_text, **common,
                               error=f"timed out after {request.timeout:g}s; the process group was killed")
        if stream.result is None:
            why = tail(stderr) or tail(stdout) or "no output"
            return AgentResult(outcome="error", output=stream.last_text, **common,
                               error=scrub_text(f"claude exited with {done.returncode} before its result event: {why}",
                                                secrets))
        failure = result_error(stream.result)
        if failure:
            failure = login_error(stream, failure)
            return AgentResult(outcome="error", output=_output(stream), error=scrub_text(failure, secrets), **common)
        # After the stream's own error, which wins (as in clauditor). An error, not a fail: clauditor refuses to
        # grade such a run ("Skill failed", with its API and timeout errors), and a heuristic's verdict must not
        # be cached as the skill's: the next run samples again, and the fix it names edits the prompt anyway.
        if request.agent.allow_hang_heuristic and interactive_hang(stream):
            return AgentResult(outcome="error", output=_output(stream), error=HANG_ERROR, **common)
        return AgentResult(outcome="completed", output=_output(stream), **common)


def details_of(stream: ClaudeStream) -> dict[str, Any]:
    """What the result event says beyond usage: how it ended, API time, the tool calls it was denied, and the
    calls that loaded a skill with their fate (docs/activation.md)."""
    result = stream.result or {}
    out: dict[str, Any] = {"permission_denials": [dict(d) for d in stream.permission_denials],
                           **activation_details(stream)}
    if isinstance(result.get("subtype"), str):
        out["subtype"] = result["subtype"]
    for key in ("duration_ms", "duration_api_ms"):
        if isinstance(result.get(key), (int, float)):
            out[key] = result[key]
    return out


def _output(stream: ClaudeStream) -> str:
    text = (stream.result or {}).get("result")
    return text if isinstance(text, str) else stream.last_text


def _model(config: AgentConfig) -> str | None:
    from skillmake.run.keys import resolved_model

    return resolved_model(config)


AGENT = ClaudeCodeAgent()
