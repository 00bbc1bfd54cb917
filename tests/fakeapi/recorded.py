"""One request the fake API received, with helpers to read what a client sent."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# Keys whose string values are identifiers or enum words, not text the model reads.
_NOT_TEXT = frozenset({"type", "id", "role", "tool_use_id", "call_id", "name", "model", "status", "cache_control",
                       "signature", "media_type", "format", "detail", "file_id"})
# The request fields that carry the conversation (Anthropic, Responses, chat completions). Tool definitions
# are left out on purpose: a skill's name and description appear there even when its body was never read.
_CONVERSATION = ("system", "instructions", "messages", "input", "prompt")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key not in _NOT_TEXT:
                yield from _strings(item)


# Content block types whose "text" is what the model reads: Anthropic's text (cacheable or not), the Responses
# API's input_text/output_text, chat completions' text parts.
_TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})


def content_text(content: Any) -> str:
    """The text of one message's content, whatever its shape: a string as is, or a list of content blocks (a prompt
    split into a cacheable prefix and the rest is two text blocks) with their text joined as sent, so the prompt reads
    back exactly as the client wrote it. Blocks without text of their own (tool results, images) are left out."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(block["text"] for block in content if isinstance(block, Mapping)
                       and block.get("type") in _TEXT_BLOCKS and isinstance(block.get("text"), str))
    return ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Recorded:
    """A request as received: `path` has no query string (`query` holds it); header keys are lower-case."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    json: dict[str, Any] | None
    index: int  # 0-based position among every request this server saw

    @property
    def model(self) -> str | None:
        value = (self.json or {}).get("model")
        return value if isinstance(value, str) else None

    @property
    def stream(self) -> bool:
        return bool((self.json or {}).get("stream"))

    @property
    def has_tools(self) -> bool:
        return bool((self.json or {}).get("tools"))

    def text(self) -> str:
        """Every piece of text of the conversation (system/instructions, messages/input, tool results and
        earlier tool calls), joined by newlines. Tool definitions are not included."""
        data = self.json or {}
        return "\n".join(s for key in _CONVERSATION for s in _strings(data.get(key)))

    def message_text(self, index: int = 0) -> str:
        """The text of messages[index] (Anthropic, chat completions) or input[index] (Responses), whatever its content
        shape (content_text); "" when the request has no such message."""
        data = self.json or {}
        items = data.get("messages") if "messages" in data else data.get("input")
        if isinstance(items, str):  # Responses: `input` may be one string, the user's message
            return items if index in (0, -1) else ""
        if not isinstance(items, list) or not -len(items) <= index < len(items):
            return ""
        message = items[index]
        return content_text(message.get("content")) if isinstance(message, Mapping) else ""

    def contains(self, marker: str) -> bool:
        """Whether `marker` occurs in the conversation text (whitespace runs compared as one space)."""
        return " ".join(marker.split()) in " ".join(self.text().split())

    @property
    def turn(self) -> int:
        """How many assistant turns the conversation already holds: 0 for the first request of an agentic
        run, 1 after one tool call and its result, and so on. Stateless, so safe when trials run in parallel."""
        data = self.json or {}
        turns = 0
        for message in data.get("messages") or []:  # Anthropic and chat completions
            if isinstance(message, Mapping) and message.get("role") == "assistant":
                turns += 1
        items = data.get("input")
        if isinstance(items, list):  # Responses: consecutive output items of one turn count once
            previous_was_output = False
            for item in items:
                is_output = isinstance(item, Mapping) and (
                    item.get("role") == "assistant" or item.get("type") in ("function_call", "reasoning",
                                                                             "custom_tool_call", "local_shell_call"))
                if is_output and not previous_was_output:
                    turns += 1
                previous_was_output = is_output
        return turns

    def tool_results(self) -> list[str]:
        """The text of every tool result the request carries (Anthropic tool_result blocks, Responses
        function_call_output items, chat `tool` messages), oldest first."""
        data = self.json or {}
        results: list[str] = []
        for message in data.get("messages") or []:
            if not isinstance(message, Mapping):
                continue
            if message.get("role") == "tool":
                results.append("\n".join(_strings(message.get("content"))))
            content = message.get("content")
            if isinstance(content, list):
                results.extend("\n".join(_strings(block.get("content"))) for block in content
                               if isinstance(block, Mapping) and block.get("type") == "tool_result")
        items = data.get("input")
        if isinstance(items, list):
            results.extend("\n".join(_strings(item.get("output"))) for item in items
                           if isinstance(item, Mapping) and item.get("type") in ("function_call_output",
                                                                                 "custom_tool_call_output"))
        return results
