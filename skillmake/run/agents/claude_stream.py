"""What a `claude -p --output-format stream-json --verbose` transcript says: tool calls, text, the result event,
and which skills the run activated (docs/activation.md)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from skillmake.run.agents.cli_common import json_lines

SKILL_TOOL = "Skill"
READ_TOOL = "Read"
# What became of a call that loads a skill. "loaded": its tool_result came back and is not an error;
# "pending": no tool_result before the stream ended (killed, timed out): the model chose the skill, so it
# counts, as skill-creator's run_eval.py counts the tool_use itself; "denied": the CLI refused it
# (a `permission_denied` event, an entry of the result's permission_denials, a rejected decision);
# "failed": any other error result (an unknown skill, bad input, a SKILL.md that does not exist).
ACTIVATING = ("loaded", "pending")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUse:
    name: str
    input: dict[str, Any]
    id: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillCall:
    """One tool call that loads a skill: a `Skill` call, or a `Read` of a skill's `.claude/skills/<name>/SKILL.md`."""

    name: str
    via: str  # the tool: "Skill" or "Read"
    id: str  # its tool_use id
    status: str  # loaded, pending, denied or failed (see ACTIVATING)

    @property
    def activated(self) -> bool:
        return self.status in ACTIVATING

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "via": self.via, "id": self.id, "status": self.status}


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaudeStream:
    """What a stream-json transcript says: the init and result events, tool calls, and text seen."""

    init: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    tool_uses: tuple[ToolUse, ...] = ()
    message_ids: tuple[str, ...] = ()  # distinct assistant messages: one model request each
    retries: int = 0  # `system/api_retry` events: requests the CLI made again after a failure
    last_text: str = ""  # the last assistant text (the output when the run never reached a result)
    text: str = ""  # every assistant text block, joined with newlines (clauditor's final_text)
    stop_reason: str | None = None  # the last assistant message's stop_reason, when it carried one
    bad_lines: int = 0  # lines that were not JSON objects (a crash message, a truncated last line)
    auth_failed: bool = False  # an assistant message flagged `error: authentication_failed` ("Not logged in")
    skill_calls: tuple[SkillCall, ...] = ()  # every call that loads a skill, in order, with its fate
    skills: tuple[str, ...] = field(default_factory=tuple)  # skills those calls activated, in order, each once

    @property
    def permission_denials(self) -> tuple[dict[str, Any], ...]:
        """Tool calls the CLI refused (the result event's list): a sign the agent needed `allowed_tools`."""
        return tuple((self.result or {}).get("permission_denials") or ())

    @property
    def denied_skills(self) -> tuple[str, ...]:
        """Skills the model chose but the CLI refused to load (and that no other call loaded), each once: in
        -p, a skill whose frontmatter has `allowed-tools` needs `allowed_tools: [Skill]` in the spec's agent."""
        out: list[str] = []
        for call in self.skill_calls:
            if call.status == "denied" and call.name not in self.skills and call.name not in out:
                out.append(call.name)
        return tuple(out)


def skill_called(use: ToolUse) -> str | None:
    """The skill a `Skill` tool call names (`input.skill`, or `input.command` as older CLIs sent it), without
    a leading `/`; None for any other call."""
    if use.name != SKILL_TOOL:
        return None
    name = use.input.get("skill") or use.input.get("command")
    name = str(name).strip().lstrip("/").strip() if isinstance(name, str) else ""
    return name or None


def skill_read(use: ToolUse) -> str | None:
    """The skill whose entry point a `Read` call opens: a `file_path` that is `…/.claude/skills/<name>/SKILL.md`
    (project or user skills). Field-scoped, as skill-creator's run_eval.py: a skill named "pdf" is not read by
    a Read of report.pdf, nor by one of /tmp/pdf/notes.txt or of a file beside the SKILL.md."""
    if use.name != READ_TOOL:
        return None
    path = use.input.get("file_path")
    if not isinstance(path, str) or not path.strip():
        return None
    parts = posixpath.normpath("/" + path.strip().replace("\\", "/").lstrip("/")).split("/")
    if len(parts) >= 5 and parts[-1] == "SKILL.md" and parts[-3] == "skills" and parts[-4] == ".claude":
        return parts[-2] or None
    return None


def parse_stream(data: bytes) -> ClaudeStream:
    """Read a `--output-format stream-json --verbose` transcript; unknown events are ignored."""
    init = result = None
    tools: list[ToolUse] = []
    ids: list[str] = []
    calls: dict[str, tuple[str, str]] = {}  # tool_use id → (skill, tool), in order
    outcomes: dict[str, str] = {}  # tool_use id → "ok" | "error" | "denied"
    last_text = ""
    chunks: list[str] = []
    stop_reason = None
    retries = 0
    auth_failed = False
    events, bad = json_lines(data)
    for event in events:
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            init = event
        elif kind == "system" and event.get("subtype") == "api_retry":
            retries += 1
        elif kind == "system" and event.get("subtype") == "permission_denied":
            outcomes[str(event.get("tool_use_id", ""))] = "denied"
        elif kind == "result":
            result = event
        elif kind == "user":
            _tool_results(event, outcomes)
        elif kind == "assistant":
            auth_failed = auth_failed or event.get("error") == "authentication_failed"
            message = event.get("message") or {}
            if isinstance(message.get("stop_reason"), str):
                stop_reason = message["stop_reason"]
            mid = message.get("id")
            if isinstance(mid, str) and mid not in ids:
                ids.append(mid)
            texts = []
            for block in message.get("content") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    texts.append(str(block.get("text", "")))
                elif block.get("type") == "tool_use":
                    use = ToolUse(name=str(block.get("name", "")), input=dict(block.get("input") or {}),
                                  id=str(block.get("id", "")))
                    tools.append(use)
                    name = skill_called(use) or skill_read(use)
                    if name:
                        calls[use.id or f"#{len(tools)}"] = (name, use.name)
            if texts:
                last_text = "".join(texts)
            chunks.extend(texts)
    for denial in (result or {}).get("permission_denials") or ():
        if isinstance(denial, dict):
            outcomes[str(denial.get("tool_use_id", ""))] = "denied"
    skill_calls = tuple(SkillCall(name=name, via=via, id=cid, status=_status(outcomes.get(cid)))
                        for cid, (name, via) in calls.items())
    skills: list[str] = []
    for call in skill_calls:
        if call.activated and call.name not in skills:
            skills.append(call.name)
    return ClaudeStream(init=init, result=result, tool_uses=tuple(tools), message_ids=tuple(ids),
                        last_text=last_text, bad_lines=bad, skill_calls=skill_calls, skills=tuple(skills),
                        retries=retries, auth_failed=auth_failed, text="\n".join(chunks), stop_reason=stop_reason)


def _tool_results(event: dict[str, Any], outcomes: dict[str, str]) -> None:
    """Note how each tool_result of a user event ended; a denial already noted stays a denial."""
    rejected = {str(meta.get("id")) for meta in event.get("tool_result_meta") or ()
                if isinstance(meta, dict) and (meta.get("permission_decision") or {}).get("decision") == "reject"}
    content = (event.get("message") or {}).get("content")
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        tid = str(block.get("tool_use_id", ""))
        if outcomes.get(tid) == "denied" or tid in rejected:
            outcomes[tid] = "denied"
        else:
            outcomes[tid] = "error" if block.get("is_error") else "ok"


def _status(outcome: str | None) -> str:
    return {"ok": "loaded", "error": "failed", "denied": "denied"}.get(outcome or "", "pending")


def activated_skills(stream: ClaudeStream, prompt: str, installed: str | None) -> tuple[str, ...]:
    """Skills the run activated, in order, each once: a prompt that opens with `/<name>` naming a skill or
    command the CLI listed (or the one installed), which Claude Code expands before the first request; then
    every Skill call and every Read of a `.claude/skills/<name>/SKILL.md` whose tool_result was not an error
    (or never came: the run was killed after the model chose the skill). Denied and failed calls are not
    activations (see ClaudeStream.denied_skills)."""
    found = list(stream.skills)
    first = prompt.lstrip().split(maxsplit=1)[0] if prompt.strip() else ""
    if first.startswith("/") and len(first) > 1:
        name = first[1:]
        listed = set((stream.init or {}).get("skills") or ()) | set((stream.init or {}).get("slash_commands") or ())
        if (name == installed or name in listed) and name not in found:
            found.insert(0, name)
    return tuple(found)


def activation_details(stream: ClaudeStream) -> dict[str, Any]:
    """The record's view of the skill calls: each call with its fate, and the skills only denied."""
    return {"skill_calls": [call.to_json() for call in stream.skill_calls],
            "denied_skills": list(stream.denied_skills)}
