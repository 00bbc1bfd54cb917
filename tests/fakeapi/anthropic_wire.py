"""A Reply rendered as the Anthropic Messages API writes it: a message JSON, its SSE events, its errors."""

from __future__ import annotations

import json
import re
from typing import Any

from .reply import Reply, new_id

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
                529: "overloaded_error"}
_CHUNK = 16  # characters per text delta, so clients really have to accumulate


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message},
            "request_id": new_id("req_")}


def _usage(usage: dict[str, int]) -> dict[str, Any]:
    return {"input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"],
            "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
            "cache_read_input_tokens": usage["cache_read_input_tokens"], "service_tier": "standard"}


def _block(block: Any) -> dict[str, Any]:
    if block.type == "text":
        return {"type": "text", "text": block.text}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)}


def message(reply: Reply, *, model: str, usage: dict[str, int], message_id: str | None = None) -> dict[str, Any]:
    """The non-streaming response body of POST /v1/messages."""
    return {"id": message_id or new_id("msg_"), "type": "message", "role": "assistant", "model": model,
            "content": [_block(b) for b in reply.blocks], "stop_reason": reply.resolved_stop_reason(),
            "stop_sequence": None, "usage": _usage(usage)}


def _chunks(text: str) -> list[str]:
    return [text[i:i + _CHUNK] for i in range(0, len(text), _CHUNK)] or [""]


def events(reply: Reply, *, model: str, usage: dict[str, int]) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of a streamed POST /v1/messages, as (event name, data) pairs."""
    start = message(reply, model=model, usage={**usage, "output_tokens": 1})
    start.update(content=[], stop_reason=None)
    out: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start}),
                                             ("ping", {"type": "ping"})]
    for index, block in enumerate(reply.blocks):
        if block.type == "text":
            out.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                "content_block": {"type": "text", "text": ""}}))
            out += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                             "delta": {"type": "text_delta", "text": piece}})
                    for piece in _chunks(block.text)]
        else:
            out.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                "content_block": {"type": "tool_use", "id": block.id,
                                                                  "name": block.name, "input": {}}}))
            out += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                             "delta": {"type": "input_json_delta", "partial_json": piece}})
                    for piece in _chunks(json.dumps(dict(block.input)))]
        out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": reply.resolved_stop_reason(), "stop_sequence": None},
                                  "usage": _usage(usage)}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


def stream_error_events(*, model: str, error: str = "Overloaded (fakeapi stream_error)"
                        ) -> list[tuple[str, dict[str, Any]]]:
    """A stream that starts, then fails with an overloaded error event (as the real API does under load)."""
    start = message(Reply.text(""), model=model, usage={"input_tokens": 1, "output_tokens": 1,
                                                         "cache_read_input_tokens": 0,
                                                         "cache_creation_input_tokens": 0})
    start.update(content=[], stop_reason=None)
    return [("message_start", {"type": "message_start", "message": start}),
            ("error", error_body(529, error))]


def count_tokens(request_chars: int) -> dict[str, Any]:
    return {"input_tokens": max(1, request_chars // 4)}


MAX_CACHE_BREAKPOINTS = 4


def invalid(body: Any) -> str | None:
    """What the real Messages API answers 400 invalid_request_error for, of what clients of ours could send: an empty
    or whitespace-only text block (in `system` or a message, tool results' content included), a message whose
    content is an empty string (the final assistant message aside), more than four cache_control breakpoints.
    The wording is the API's own."""
    if not isinstance(body, dict):
        return None
    where_blocks: list[tuple[str, Any]] = []
    if isinstance(body.get("system"), list):
        where_blocks += [("system", block) for block in body["system"]]
    messages = body.get("messages") if isinstance(body.get("messages"), list) else []
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if content == "" and not (i == len(messages) - 1 and message.get("role") == "assistant"):
            return (f"messages.{i}: all messages must have non-empty content except for the optional final "
                    "assistant message")
        if isinstance(content, list):
            for block in content:
                where_blocks.append(("messages", block))
                if isinstance(block, dict) and isinstance(block.get("content"), list):  # a tool_result's blocks
                    where_blocks += [("messages", inner) for inner in block["content"]]
    for where, block in where_blocks:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            if block["text"] == "":
                return f"{where}: text content blocks must be non-empty"
            if not block["text"].strip():
                return f"{where}: text content blocks must contain non-whitespace text"
    tools = body.get("tools") if isinstance(body.get("tools"), list) else []
    marked = sum(1 for block in [*tools, *(b for _, b in where_blocks)]
                 if isinstance(block, dict) and block.get("cache_control"))
    if marked > MAX_CACHE_BREAKPOINTS:
        return f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {marked}."
    return None


def cache_minimum(model: str) -> int:
    """The shortest prefix, in tokens, the real API caches for `model` (its prompt-caching docs): 4,096 for Opus 4.5+
    and Haiku 4.5, 2,048 for Haiku 3 and 3.5, 1,024 for the others (Sonnet, Opus 4 and 4.1)."""
    name = model.lower()
    if "haiku" in name:
        return 4096 if re.search(r"haiku-[4-9]", name) else 2048
    if re.search(r"opus-4-[5-9]|opus-[5-9]", name):
        return 4096
    return 1024


def prefix_tokens(body: Any) -> int | None:
    """The fake's estimate (four characters a token) of the prompt up to its last cache_control breakpoint: the
    tools, then the system prompt, then the messages, in the order the API reads them; None without a breakpoint."""
    if not isinstance(body, dict):
        return None
    parts: list[tuple[int, bool]] = []  # (characters, marked)
    for tool in body.get("tools") or []:
        parts.append((len(json.dumps(tool)), isinstance(tool, dict) and bool(tool.get("cache_control"))))
    system = body.get("system")
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else list(system or [])
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        blocks += [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    for block in blocks:
        if isinstance(block, dict):
            text = block.get("text") if isinstance(block.get("text"), str) else json.dumps(block)
            parts.append((len(text), bool(block.get("cache_control"))))
    if body.get("cache_control") and parts:  # automatic caching: a breakpoint on the last block
        parts[-1] = (parts[-1][0], True)
    marked = [i for i, (_, flag) in enumerate(parts) if flag]
    if not marked:
        return None
    return sum(chars for chars, _ in parts[: marked[-1] + 1]) // 4


def as_cached(usage: dict[str, int], body: Any, model: str) -> dict[str, int]:
    """`usage` as the real API would report it for this request: cache tokens only for a marked prefix of at least
    the model's minimum; otherwise the tokens a script called cached are plain input."""
    cached = usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
    if not cached:
        return usage
    tokens = prefix_tokens(body)
    if tokens is not None and tokens >= cache_minimum(model):
        return usage
    return {**usage, "input_tokens": usage["input_tokens"] + cached, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0}
