"""Scripted skill activation: a fake model that loads a skill when the user's query matches a pattern.

What it reads from a request, as Claude Code 2.1.328 and Codex 0.169.0 send them (measured against this
server): Claude Code offers a `Skill` tool and lists skills as "- NAME: DESCRIPTION" lines under "The
following skills are available for use with the Skill tool:" (a `<system-reminder>` text block of the first
user message; a `role: "system"` message is read the same way). Codex lists them in a developer message's
`<skills_instructions>` as "- NAME: DESCRIPTION (file: rN/NAME/SKILL.md)", with the roots rN spelled out
under "### Skill roots", and offers a shell through the `exec_command` function.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .recorded import Recorded
from .reply import Reply

Script = Callable[[Recorded], "Reply | None"]
VIAS = ("skill", "read")  # on /v1/messages; /v1/responses always reads through the shell
CLAUDE_LISTING = "The following skills are available for use with the Skill tool:"
_CLAUDE_ITEM = re.compile(r"^- ([^:\n]+): ", re.M)
_CODEX_ROOT = re.compile(r"^- `(r\d+)` = `([^`]+)`", re.M)
_CODEX_ITEM = re.compile(r"^- ([^:\n]+): .*\(file: ([^)\n]+)\)\s*$", re.M)
_CWD = re.compile(r"Primary working directory: (\S+)")
# A skill body already in the conversation: Claude Code's expansion of `/name` or of a Skill call, Codex's
# injection for a `$name` mention.
_LOADED = re.compile(r"^Base directory for this skill: \S*?/([^/\s]+)/?$|^<skill>\s*<name>([^<]+)</name>", re.M)
# Codex's own context messages (role "user" but written by the CLI, not typed by the user).
_CODEX_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<skill>",
                  "<turn_aborted>", "<user_shell_command>")


@dataclass(frozen=True, slots=True, kw_only=True)
class Activate:
    """One rule: when the latest user query matches `when` (a regex, searched case-insensitively) and the
    client lists skill `skill`, load it. `via` says how, on /v1/messages: "skill" (a `Skill` tool call, the
    way Claude Code means skills to load) or "read" (a `Read` of `<cwd>/.claude/skills/<skill>/SKILL.md`).
    On /v1/responses every rule loads through the shell: an `exec_command` running `command`, formatted
    with {name} and {path} (the absolute SKILL.md path Codex listed)."""

    skill: str
    when: str
    via: str = "skill"
    args: str | None = None  # the Skill tool's `args`, when given
    command: str = "cat .agents/skills/{name}/SKILL.md"

    def __post_init__(self) -> None:
        if self.via not in VIAS:
            raise ValueError(f"via {self.via!r} is not one of {', '.join(VIAS)}")
        re.compile(self.when)


ANSWER = Reply.text("Done with the skill.")
OTHERWISE = Reply.text("Done without a skill.")


def activation(*rules: Activate, answer: Reply | Script = ANSWER, otherwise: Reply | Script = OTHERWISE,
               listed_only: bool = True) -> Script:
    """A script for `FakeAPI.script`: the first turn after a user query loads the skill of the first rule
    that matches (a tool call), every later turn of that query gets `answer` (the tool result is back), and
    a query no rule matches, or a request that offers no way to load a skill, gets `otherwise`. A matching
    rule whose skill the CLI itself already loaded (a `/name` or `$name` prompt) gets `answer` at once.

    A rule fires only for a skill the request lists (`listed_only`; False lets a test call a skill the
    client does not know). Stateless, like FakeAPI.by_turn: parallel runs each get the whole sequence, and
    the server counts every request as usual."""
    def script(request: Recorded) -> Reply | None:
        query = latest_query(request)
        if query is None:
            return _resolve(otherwise, request)
        text, later = query
        if later:
            return _resolve(answer, request)
        loaded = loaded_skills(request)
        for rule in rules:
            if re.search(rule.when, text, re.I):
                if rule.skill in loaded:  # `/name` or `$name`: the CLI already put the body in the conversation
                    return _resolve(answer, request)
                call = _load(rule, request, listed_only=listed_only)
                if call is not None:
                    return call
        return _resolve(otherwise, request)
    return script


def _resolve(chosen: Reply | Script, request: Recorded) -> Reply | None:
    return chosen if isinstance(chosen, Reply) else chosen(request)


def _load(rule: Activate, request: Recorded, *, listed_only: bool) -> Reply | None:
    """The tool call that loads `rule.skill` in this request's dialect, or None when it cannot."""
    listed = listed_skills(request)
    if listed_only and rule.skill not in listed:
        return None
    tools = tool_names(request)
    if request.path == "/v1/responses":
        if "exec_command" not in tools:
            return None
        path = listed.get(rule.skill) or f".agents/skills/{rule.skill}/SKILL.md"
        return Reply.tool_use("exec_command", {"cmd": rule.command.format(name=rule.skill, path=path)})
    if request.path != "/v1/messages":
        return None
    if rule.via == "read":
        cwd = _CWD.search(request.text())
        if "Read" not in tools or cwd is None:
            return None
        return Reply.tool_use("Read", {"file_path": f"{cwd.group(1)}/.claude/skills/{rule.skill}/SKILL.md"})
    if "Skill" not in tools:
        return None
    return Reply.tool_use("Skill", {"skill": rule.skill, **({"args": rule.args} if rule.args else {})})


# -- reading a request ------------------------------------------------------------------------------------------

def tool_names(request: Recorded) -> set[str]:
    """The names of the tools the request offers."""
    return {str(t.get("name")) for t in (request.json or {}).get("tools") or [] if isinstance(t, Mapping)}


def listed_skills(request: Recorded) -> dict[str, str]:
    """The skills the client lists in the request: name → description (Claude Code) or name → the absolute
    SKILL.md path (Codex)."""
    found: dict[str, str] = {}
    for text in _texts(request):
        if CLAUDE_LISTING in text:
            listing = text.split(CLAUDE_LISTING, 1)[1]
            for line in listing.splitlines():
                item = _CLAUDE_ITEM.match(line)
                if item:
                    found.setdefault(item.group(1).strip(), line[item.end():].strip())
        if "<skills_instructions>" in text:
            roots = dict(_CODEX_ROOT.findall(text))
            for name, short in _CODEX_ITEM.findall(text):
                root, _, rest = short.partition("/")
                found.setdefault(name.strip(), f"{roots[root]}/{rest}" if root in roots else short)
    return found


def loaded_skills(request: Recorded) -> set[str]:
    """The skills whose body the client already put in the conversation (not through a tool call)."""
    return {a or b for text in _texts(request) for a, b in _LOADED.findall(text)}


def latest_query(request: Recorded) -> tuple[str, bool] | None:
    """The latest query the user typed (the CLI's reminders, skill listings, context and tool results left
    out) and whether the model already answered it with a turn; None when the request holds none."""
    data = request.json or {}
    if request.path == "/v1/responses":
        items = [i for i in data.get("input") or [] if isinstance(i, Mapping)]
        for index in range(len(items) - 1, -1, -1):
            item = items[index]
            if item.get("role") == "user" and item.get("type", "message") == "message":
                text = "\n".join(t for t in _blocks(item.get("content")) if not t.lstrip().startswith(_CODEX_CONTEXT))
                if text.strip():
                    later = any(i.get("role") == "assistant" or i.get("type") in ("function_call", "reasoning")
                                for i in items[index + 1:])
                    return text, later
        return None
    messages = [m for m in data.get("messages") or [] if isinstance(m, Mapping)]
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        content = message.get("content")
        if message.get("role") != "user" or _has_tool_result(content):
            continue
        text = "\n".join(t for t in _blocks(content) if not t.lstrip().startswith("<system-reminder>"))
        if text.strip():
            return text, any(m.get("role") == "assistant" for m in messages[index + 1:])
    return None


def _has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(isinstance(b, Mapping) and b.get("type") == "tool_result"
                                             for b in content)


def _blocks(content: Any) -> Iterator[str]:
    """The text blocks of a message's content (a string, or a list of text / input_text blocks)."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping) and block.get("type") in ("text", "input_text"):
                yield str(block.get("text", ""))


def _texts(request: Recorded) -> Iterator[str]:
    """Every text the model reads: system / instructions, and each message's text blocks."""
    data = request.json or {}
    system = data.get("system")
    yield from _blocks(system)
    if isinstance(data.get("instructions"), str):
        yield data["instructions"]
    for message in data.get("messages") or []:
        if isinstance(message, Mapping):
            yield from _blocks(message.get("content"))
    for item in data.get("input") or []:
        if isinstance(item, Mapping):
            yield from _blocks(item.get("content"))
