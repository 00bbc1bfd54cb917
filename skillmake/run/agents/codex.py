"""The codex agent: the real `codex exec --json --skip-git-repo-check` with a temporary CODEX_HOME per trial."""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillmake.core.pricing import cost_usd
from skillmake.core.redact import redact_bytes as scrub
from skillmake.core.redact import redact_text as scrub_text
from skillmake.run import process
from skillmake.run.agents.base import AgentResult, TrialRequest, Usage
from skillmake.run.agents.cli_common import (
    CliAgent,
    agent_env,
    endpoint,
    forbidden_hits,
    install_skill_folder,
    json_lines,
    strings_in,
    tail,
)
from skillmake.spec.model import AgentConfig

ENV_VAR = "SKILLMAKE_CODEX"
PROVIDER_ID = "skillmake"
KEY_ENV = "OPENAI_API_KEY"
# How Codex 0.169.0 reads a `$name` mention (measured): `$` then a run of these characters, equal to a skill's
# name (case-sensitive), whatever comes before the `$` ("x$shout" and "$$shout" mention shout, "$shout-loud" not).
_MENTION = re.compile(r"\$([A-Za-z0-9_:-]+)")
# Programs whose path arguments a command reads (`cat`, `sed -n 1,200p`, `head -n 40` …): a SKILL.md given to
# any other (`ls`, `wc`, `cp`, `echo`) is not a read of the skill's instructions.
_READERS = frozenset({"cat", "head", "tail", "sed", "nl", "less", "more", "bat", "batcat", "awk", "grep", "egrep",
                      "rg", "view"})
_WRAPPERS = frozenset({"command", "builtin", "exec", "env", "sudo", "time", "nice", "nohup"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_PUNCTUATION = "();<>|&\n"
_UNEXPANDED = set("*?[]{}$`")  # a glob or a variable: which skill it names is not in the command
# A command_execution's status, as Codex writes it, → the fate of a read of a SKILL.md (see claude_stream).
_READ_STATUS = {"completed": "loaded", "failed": "failed", "declined": "denied"}


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
    the cost from skillmake.core.pricing's list prices (None for a model it does not know)."""
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


def activated_skills(events: CodexEvents, prompt: str, installed: str | None, *, workspace: str | None = None,
                     codex_home: str | None = None) -> tuple[str, ...]:
    """Skills the run activated, in order, each once: a `$<name>` mention in the prompt of the installed skill
    (or of one installed in the workspace or CODEX_HOME), which Codex answers by putting the skill's body in
    the first request itself, with no event; then every shell command that read a skill's own
    `.agents/skills/<name>/SKILL.md` (or CODEX_HOME's `skills/[.system/]<name>/SKILL.md`) and exited 0."""
    found = mentioned_skills(prompt, installed, workspace=workspace, codex_home=codex_home)
    for call in skill_calls(events, codex_home=codex_home):
        if call["status"] == "loaded" and call["name"] not in found:
            found.append(call["name"])
    return tuple(found)


def mentioned_skills(prompt: str, installed: str | None, *, workspace: str | None = None,
                     codex_home: str | None = None) -> list[str]:
    """The skills a prompt mentions the way Codex reads `$name` (only skills that are there to mention)."""
    out: list[str] = []
    for name in _MENTION.findall(prompt):
        there = name == installed or any(
            posixpath.isfile(posixpath.join(root, name, "SKILL.md"))
            for root in _skill_roots(workspace, codex_home))
        if there and name not in out:
            out.append(name)
    return out


def _skill_roots(workspace: str | None, codex_home: str | None) -> list[str]:
    roots = [posixpath.join(workspace, ".agents", "skills")] if workspace else []
    if codex_home:
        roots += [posixpath.join(codex_home, "skills"), posixpath.join(codex_home, "skills", ".system")]
    return roots


def skill_calls(events: CodexEvents, *, codex_home: str | None = None) -> list[dict[str, str]]:
    """Each shell command that read a skill's SKILL.md, as {name, via: "shell", id, status}: "loaded" when it
    completed with exit code 0, "failed" when it exited otherwise, "denied" when Codex declined to run it."""
    calls: list[dict[str, str]] = []
    for item in events.items:
        if item.get("type") != "command_execution":
            continue
        status = _READ_STATUS.get(str(item.get("status")), "failed")
        if status == "loaded" and item.get("exit_code") not in (0, None):
            status = "failed"
        for name in skill_reads(str(item.get("command", "")), codex_home=codex_home):
            calls.append({"name": name, "via": "shell", "id": str(item.get("id", "")), "status": status})
    return calls


def skill_reads(command: str, *, codex_home: str | None = None) -> list[str]:
    """The skills whose SKILL.md a shell command reads: a path argument of a reader program (`_READERS`), or
    a file after `<`, that is exactly a skill's entry point (`_skill_of_path`). Codex shows every command as
    `/bin/bash -lc '<script>'`; the script is split into simple commands, and a `cd` moves where relative
    paths start."""
    out: list[str] = []
    cwd = "."
    for words, inputs in _simple_commands(_script_of(command)):
        while words and (words[0] in _WRAPPERS or re.match(r"[A-Za-z_]\w*=", words[0])):
            words = words[1:]
        program, args = (posixpath.basename(words[0]), words[1:]) if words else ("", [])
        if program == "cd":
            cwd = posixpath.join(cwd, args[0]) if args and not args[0].startswith("-") else "."
            continue
        paths = [a for a in args if not a.startswith("-")] if program in _READERS else []
        for path in paths + inputs:
            name = _skill_of_path(path, cwd, codex_home)
            if name and name not in out:
                out.append(name)
    return out


def _script_of(command: str) -> str:
    """The script of `/bin/bash -lc '<script>'` (how Codex shows every command), else the command itself."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) >= 3 and posixpath.basename(words[0]) in _SHELLS and words[1].startswith("-") and "c" in words[1]:
        return words[2]
    return command


def _simple_commands(script: str) -> list[tuple[list[str], list[str]]]:
    """Each simple command of a shell script: its words, and the files it reads through `<`. Split at |, &&,
    ;, newlines and parentheses; the target of `>`/`>>` is left out (written, not read)."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    commands: list[tuple[list[str], list[str]]] = [([], [])]
    redirect = ""
    try:
        for token in lexer:
            if all(c in _PUNCTUATION for c in token):
                redirect = ">" if ">" in token else "<" if "<" in token else ""
                if not redirect:
                    commands.append(([], []))
            elif redirect:
                if redirect == "<":
                    commands[-1][1].append(token)
                redirect = ""
            else:
                commands[-1][0].append(token)
    except ValueError:  # an unbalanced quote: what was read so far
        pass
    return [c for c in commands if c[0] or c[1]]


def _skill_of_path(path: str, cwd: str, codex_home: str | None) -> str | None:
    """The skill whose entry point `path` is: `.agents/skills/<name>/SKILL.md` (relative to the workspace, or
    under any folder: Codex also finds the user's and parent folders' `.agents/skills`), or
    `skills/<name>/SKILL.md` or `skills/.system/<name>/SKILL.md` under CODEX_HOME (`$CODEX_HOME` expanded)."""
    home = posixpath.normpath(codex_home) if codex_home else None
    for var in ("$CODEX_HOME/", "${CODEX_HOME}/"):
        if path.startswith(var):
            path = f"{home or '/.codex'}/{path[len(var):]}"
    full = posixpath.normpath(path if path.startswith("/") else posixpath.join(cwd, path))
    parts = full.split("/")
    if len(parts) < 4 or parts[-1] != "SKILL.md" or parts[-2] in ("", ".", "..") or _UNEXPANDED & set(parts[-2]):
        return None
    folder = "/".join(parts[:-2])
    homes = (home,) if home else ()
    if (parts[-4:-2] == [".agents", "skills"] or folder.endswith(("/.codex/skills", "/.codex/skills/.system"))
            or any(folder in (f"{h}/skills", f"{h}/skills/.system") for h in homes)):
        return parts[-2]
    return None


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
        codex_home = str(Path(request.home) / ".codex")
        calls = skill_calls(events, codex_home=codex_home)
        activated = activated_skills(events, codex_prompt(request.prompt, installed), installed,
                                     workspace=request.workspace, codex_home=codex_home)
        common: dict[str, Any] = {
            "stdout": stdout, "stderr": stderr, "transcript": stdout, "exit_code": done.returncode,
            "usage": usage_of(events, model), "activated_skills": activated,
            "details": {"skill_calls": calls, "denied_skills": list(dict.fromkeys(
                c["name"] for c in calls if c["status"] == "denied" and c["name"] not in activated))},
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
    from skillmake.run.keys import resolved_model

    return resolved_model(config)


AGENT = CodexAgent()
