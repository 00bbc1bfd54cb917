"""The codex agent: the real `codex exec --json --skip-git-repo-check` with a temporary CODEX_HOME per trial."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import process
from ..model import AgentConfig
from ..pricing import cost_usd
from ..redact import redact_bytes as scrub
from ..redact import redact_text as scrub_text
from .base import AgentResult, TrialRequest, Usage
from .cli_common import (
    CliAgent,
    agent_env,
    endpoint,
    forbidden_hits,
    install_skill_folder,
    json_lines,
    strings_in,
    tail,
)

ENV_VAR = "SKILLMAKE_CODEX"
PROVIDER_ID = "skillmake"
KEY_ENV = "OPENAI_API_KEY"
# A command that reads a skill's instructions: `cat .agents/skills/<name>/SKILL.md`, `sed -n 1,80p …/SKILL.md`.
_SKILL_READ = re.compile(r"([A-Za-z0-9_.:-]+)/SKILL\.md\b")


@dataclass(frozen=True, slots=True, kw_only=True)
class CodexEvents:
    """What a `codex exec --json` transcript says."""

    thread_id: str | None = None
    messages: tuple[str, ...] = ()  # agent_message texts, in order (the last is the answer)
    items: tuple[dict[str, Any], ...] = ()  # every completed item (commands, file changes, tool calls …)
    usage: dict[str, int] | None = None  # summed over turn.completed events
    turns: int = 0  # turn.completed events
    failures: tuple[str, ...] = ()  # turn.failed messages: the run failed
    notices: tuple[str, ...] = ()  # top-level error events: retries ("Reconnecting... 1/5") and the final error
    warnings: tuple[str, ...] = ()  # error items (non-fatal, e.g. missing model metadata)
    bad_lines: int = 0


def parse_events(data: bytes) -> CodexEvents:
    """Read the JSONL that `codex exec --json` prints; unknown events are ignored."""
    thread = None
    messages: list[str] = []
    items: list[dict[str, Any]] = []
    usage: dict[str, int] | None = None
    turns = 0
    failures: list[str] = []
    notices: list[str] = []
    warnings: list[str] = []
    events, bad = json_lines(data)
    for event in events:
        kind = event.get("type")
        if kind == "thread.started":
            thread = event.get("thread_id")
        elif kind == "item.completed" and isinstance(event.get("item"), dict):
            item = event["item"]
            items.append(item)
            if item.get("type") == "agent_message":
                messages.append(str(item.get("text", "")))
            elif item.get("type") == "error":
                warnings.append(str(item.get("message", "")))
        elif kind == "turn.completed":
            turns += 1
            usage = usage or {}
            for name, value in (event.get("usage") or {}).items():
                if isinstance(value, int):
                    usage[name] = usage.get(name, 0) + value
        elif kind == "turn.failed":
            failures.append(str((event.get("error") or {}).get("message", "turn failed")))
        elif kind == "error":
            notices.append(str(event.get("message", "error")))
    return CodexEvents(thread_id=thread, messages=tuple(messages), items=tuple(items), usage=usage, turns=turns,
                       failures=tuple(failures), notices=tuple(notices), warnings=tuple(warnings), bad_lines=bad)


def usage_of(events: CodexEvents, model: str | None) -> Usage:
    """Tokens in the same sense as Claude Code's: input_tokens without the cached ones (Codex counts them in);
    the cost from skillmake.pricing's list prices (None for a model it does not know)."""
    raw = events.usage
    if raw is None:
        return Usage(num_turns=events.turns)
    cached = raw.get("cached_input_tokens", 0)
    fresh = max(0, raw.get("input_tokens", 0) - cached)
    output = raw.get("output_tokens", 0)
    return Usage(input_tokens=fresh, output_tokens=output, cache_read_tokens=cached,
                 cache_creation_tokens=raw.get("cache_write_input_tokens"),
                 cost_usd=cost_usd(model, input_tokens=fresh, output_tokens=output, cache_read_tokens=cached),
                 num_turns=events.turns)


def item_strings(item: dict[str, Any]) -> list[str]:
    """What an item touched, for the forbidden-file check: commands, changed paths, tool arguments."""
    kind = item.get("type")
    if kind == "command_execution":
        return [str(item.get("command", ""))]
    if kind == "file_change":
        return [str(c.get("path", "")) for c in item.get("changes") or [] if isinstance(c, dict)]
    if kind == "mcp_tool_call":
        return list(strings_in(item.get("arguments")))
    return []


def activated_skills(events: CodexEvents, prompt: str, installed: str | None) -> tuple[str, ...]:
    """Skills the run used: a command that read a `<name>/SKILL.md`, and `$<name>` in the prompt for the
    installed skill (Codex then injects the skill's body itself, without an event)."""
    found: list[str] = []
    if installed and re.search(rf"(?<![\w$])\${re.escape(installed)}\b", prompt):
        found.append(installed)
    for item in events.items:
        if item.get("type") != "command_execution":
            continue
        for name in _SKILL_READ.findall(str(item.get("command", ""))):
            if name not in found:
                found.append(name)
    return tuple(found)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))  # a JSON string is a valid TOML basic string


def config_toml(*, model: str | None, base_url: str) -> str:
    """$CODEX_HOME/config.toml: our provider at `base_url` on the Responses API; no update checks, analytics
    or plugin sync (they would call hosts other than the model endpoint); edits allowed in the workspace."""
    top: dict[str, Any] = {"model_provider": PROVIDER_ID, "approval_policy": "never",
                           "sandbox_mode": "workspace-write", "check_for_update_on_startup": False}
    if model:
        top["model"] = model
    lines = [f"{k} = {_toml(v)}" for k, v in top.items()]
    tables: dict[str, dict[str, Any]] = {
        "analytics": {"enabled": False},
        "features": {"plugins": False},
        f"model_providers.{PROVIDER_ID}": {"name": PROVIDER_ID, "base_url": base_url, "wire_api": "responses",
                                           "env_key": KEY_ENV},
    }
    for name, values in tables.items():
        lines += ["", f"[{name}]", *(f"{k} = {_toml(v)}" for k, v in values.items())]
    return "\n".join(lines) + "\n"


def install_skill(request: TrialRequest) -> None:
    """The skill where Codex discovers repository skills: `<workspace>/.agents/skills/<name>/`. A command file
    becomes that folder's SKILL.md, given frontmatter when it has none (Codex lists skills by name and
    description)."""
    skill = request.skill
    if skill is None or skill.kind == "prompt":  # a prompt file arrives as the trial's prompt: nothing to install
        return
    dest = Path(request.workspace) / ".agents" / "skills" / skill.name
    if skill.kind == "folder":
        install_skill_folder(skill.path, dest)
        return
    text = Path(skill.path).read_text(encoding="utf-8")
    if not text.startswith("---"):
        first = next((line.strip("# ").strip() for line in text.splitlines() if line.strip()), skill.name)
        text = f"---\nname: {skill.name}\ndescription: {json.dumps(first[:200])}\n---\n{text}"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "SKILL.md").write_text(text, encoding="utf-8")


def codex_prompt(prompt: str, installed: str | None) -> str:
    """The prompt as Codex takes it: a clauditor-style `/<skill> args` (a Claude Code slash command) becomes
    `$<skill> args`, Codex's explicit skill mention, so the skill is loaded the way the spec means."""
    if installed and re.match(rf"\s*/{re.escape(installed)}(\s|$)", prompt):
        return prompt.replace(f"/{installed}", f"${installed}", 1)
    return prompt


def build_argv(binary: str, config: AgentConfig, model: str | None) -> list[str]:
    """The command line; `-` reads the prompt from stdin (a prompt starting with '-' must not read as a flag)."""
    argv = [binary, "exec", "--json", "--skip-git-repo-check", "--ephemeral"]
    if model:
        argv += ["--model", model]
    return [*argv, *config.flags, "-"]


class CodexAgent(CliAgent):
    """Runs Codex headless in the workspace; CODEX_HOME is `<trial home>/.codex`, written fresh each trial."""

    kind = "codex"

    cli = "codex"
    env_var = ENV_VAR

    def run(self, request: TrialRequest) -> AgentResult:
        binary = self.binary()  # the same lookup as version(): the key names this binary
        if isinstance(binary, AgentResult):
            return binary
        config = request.agent
        model = _model(config)
        ep = endpoint("openai", config)
        codex_home = Path(request.home) / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(config_toml(model=model, base_url=ep.url))
        install_skill(request)
        env = agent_env(request.env, config_env=config.env, pass_env=config.pass_env, home=request.home)
        env["CODEX_HOME"] = str(codex_home)
        if ep.api_key:
            env.setdefault(KEY_ENV, ep.api_key)
        secrets = ep.secrets + tuple(v for k, v in env.items() if k in (KEY_ENV, "CODEX_API_KEY"))
        prompt = codex_prompt(request.prompt, request.skill.name if request.skill else None)
        done = process.run(build_argv(binary, config, model), cwd=request.workspace, env=env,
                           timeout=request.timeout, stdin=prompt.encode())
        return self._result(request, done, secrets, model)

    def _result(self, request: TrialRequest, done: process.Completed, secrets: tuple[str, ...],
                model: str | None) -> AgentResult:
        if done.error:
            return AgentResult(outcome="error", output="", error=done.error, usage=Usage(num_turns=0, requests=0))
        stdout, stderr = scrub(done.stdout, secrets), scrub(done.stderr, secrets)
        events = parse_events(stdout)
        output = events.messages[-1] if events.messages else ""
        installed = request.skill.name if request.skill else None
        common: dict[str, Any] = {
            "stdout": stdout, "stderr": stderr, "transcript": stdout, "exit_code": done.returncode,
            "usage": usage_of(events, model),
            "activated_skills": activated_skills(events, codex_prompt(request.prompt, installed), installed),
        }
        touched = [s for item in events.items for s in item_strings(item)]
        hits = forbidden_hits(touched, request.spec.forbidden_files, request.workspace)
        if hits:
            return AgentResult(outcome="cheat", output=output, forbidden_reads=hits,
                               error=f"the agent touched forbidden files: {', '.join(hits)}", **common)
        if done.timed_out:
            return AgentResult(outcome="timeout", output=output, **common,
                               error=f"timed out after {request.timeout:g}s; the process group was killed")
        if events.failures or done.returncode != 0:
            why = events.failures[-1] if events.failures else (events.notices[-1:] or [tail(stderr) or "no output"])[0]
            if len(events.notices) > 1:
                why += f" ({len(events.notices) - 1} retries before)"
            return AgentResult(outcome="error", output=output, **common,
                               error=scrub_text(f"codex exited with {done.returncode}: {why}"[:800], secrets))
        if events.turns == 0:
            return AgentResult(outcome="error", output=output, **common,
                               error=scrub_text(f"codex finished without completing a turn: {tail(stderr)}", secrets))
        return AgentResult(outcome="completed", output=output, **common)


def _model(config: AgentConfig) -> str | None:
    from ..keys import resolved_model

    return resolved_model(config)


AGENT = CodexAgent()
