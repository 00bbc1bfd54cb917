"""Reading an agent's transcript artifact into entries a page can list: Claude Code's stream-json, Codex's JSONL
events, and the API agents' request/response record. Unknown events are skipped, never fatal."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

# JSON lines, torn ones skipped
from skillmake.results.history import read_history as json_object_lines  # JSON lines, torn ones skipped

ENTRY_LIMIT = 8_000  # characters of one entry shown; a transcript's whole artifact is one link away
MAX_ENTRIES = 400


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One thing that happened: a message, a tool call or its result, or a note (init, result, error)."""

    role: str  # user | assistant | tool | system
    kind: str  # text | tool_use | tool_result | note
    text: str
    name: str = ""  # the tool's name, for tool_use


def _clip(text: str) -> str:
    if len(text) <= ENTRY_LIMIT:
        return text
    return text[:ENTRY_LIMIT] + f"\n… ({len(text) - ENTRY_LIMIT:,} more characters)"


def _dump(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str).decode()
    except TypeError:
        return str(value)


def entries(data: bytes | None) -> list[Entry]:
    """The transcript's entries, at most MAX_ENTRIES of them (the artifact itself has the rest)."""
    if not data:
        return []
    try:
        whole = orjson.loads(data)
    except orjson.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and ("request" in whole or "response" in whole):
        found = list(_api(whole))
    else:
        events = [whole] if isinstance(whole, dict) else json_object_lines(data)
        codex = any(str(e.get("type", "")).startswith(("thread.", "item.", "turn.")) for e in events)
        found = list(_codex(events) if codex else _claude(events))
    return [Entry(role=e.role, kind=e.kind, name=e.name, text=_clip(e.text)) for e in found[:MAX_ENTRIES]]


def _blocks(content: Any, role: str) -> Iterator[Entry]:
    if isinstance(content, str):
        yield Entry(role=role, kind="text", text=content)
        return
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in ("text", "output_text", "input_text"):
            yield Entry(role=role, kind="text", text=str(block.get("text", "")))
        elif kind == "tool_use":
            yield Entry(role=role, kind="tool_use", name=str(block.get("name", "")), text=_dump(block.get("input")))
        elif kind == "tool_result":
            yield Entry(role="tool", kind="tool_result", text=_dump(_result_text(block.get("content"))))
        elif kind == "thinking":
            yield Entry(role=role, kind="note", text=str(block.get("thinking", "")))


def _result_text(content: Any) -> Any:
    if isinstance(content, list):
        texts = [str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(texts) if texts else content
    return content


def _claude(events: Iterable[dict[str, Any]]) -> Iterator[Entry]:
    for event in events:
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            skills = ", ".join(str(s) for s in event.get("skills") or ()) or "none"
            yield Entry(role="system", kind="note",
                        text=f"session started: model {event.get('model', '?')}, "
                             f"{len(event.get('tools') or ())} tools, skills offered: {skills}")
        elif kind in ("assistant", "user"):
            message = event.get("message") or {}
            yield from _blocks(message.get("content"), str(message.get("role") or kind))
        elif kind == "result":
            bits = [f"{k} {event[k]}" for k in ("subtype", "num_turns", "duration_ms", "total_cost_usd")
                    if event.get(k) is not None]
            yield Entry(role="system", kind="note", text="result: " + ", ".join(bits))
        elif kind == "system" and event.get("subtype") not in (None, "init"):
            yield Entry(role="system", kind="note", text=f"{event.get('subtype')}: {_dump(event.get('error') or '')}")


def _codex(events: Iterable[dict[str, Any]]) -> Iterator[Entry]:
    for event in events:
        kind = event.get("type")
        item = event.get("item") if isinstance(event.get("item"), dict) else None
        if kind == "item.completed" and item is not None:
            what = item.get("type")
            if what == "agent_message":
                yield Entry(role="assistant", kind="text", text=str(item.get("text", "")))
            elif what == "reasoning":
                yield Entry(role="assistant", kind="note", text=str(item.get("text", "")))
            elif what == "command_execution":
                yield Entry(role="assistant", kind="tool_use", name="shell", text=str(item.get("command", "")))
                yield Entry(role="tool", kind="tool_result",
                            text=f"exit {item.get('exit_code')}\n{item.get('aggregated_output', '')}")
            elif what == "file_change":
                paths = [f"{c.get('kind', '?')} {c.get('path', '?')}" for c in item.get("changes") or []
                         if isinstance(c, dict)]
                yield Entry(role="assistant", kind="tool_use", name="file_change", text="\n".join(paths))
            elif what == "mcp_tool_call":
                yield Entry(role="assistant", kind="tool_use", name=str(item.get("tool", "mcp")),
                            text=_dump(item.get("arguments")))
            else:
                yield Entry(role="system", kind="note", text=f"{what}: {_dump(item)}")
        elif kind == "turn.completed":
            yield Entry(role="system", kind="note", text=f"turn completed: {_dump(event.get('usage') or {})}")
        elif kind in ("turn.failed", "error"):
            yield Entry(role="system", kind="note", text=f"{kind}: {_dump(event.get('error') or event.get('message'))}")


def _api(record: dict[str, Any]) -> Iterator[Entry]:
    request = record.get("request") or {}
    system = request.get("system") or request.get("instructions")
    if isinstance(system, list):  # Anthropic's blocks (the cacheable system prompt): their text
        system = "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    if system:
        yield Entry(role="system", kind="text", text=_dump(system))
    messages = request.get("messages") or request.get("input") or []
    for message in messages if isinstance(messages, list) else [messages]:
        if isinstance(message, dict):
            yield from _blocks(message.get("content"), str(message.get("role", "user")))
        else:
            yield Entry(role="user", kind="text", text=_dump(message))
    response = record.get("response")
    if isinstance(response, dict):
        if "content" in response:  # Anthropic messages
            yield from _blocks(response.get("content"), "assistant")
        for item in response.get("output") or ():  # OpenAI responses
            if isinstance(item, dict):
                yield from _blocks(item.get("content"), str(item.get("role", "assistant")))
        for choice in response.get("choices") or ():  # chat completions
            if isinstance(choice, dict):
                message = choice.get("message") or {}
                yield from _blocks(message.get("content"), "assistant")
    elif response is not None:
        yield Entry(role="assistant", kind="text", text=_dump(response))
    for attempt in record.get("attempts") or ():
        yield Entry(role="system", kind="note", text=f"attempt: {_dump(attempt)}")
