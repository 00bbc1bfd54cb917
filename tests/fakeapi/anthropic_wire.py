"""A Reply rendered as the Anthropic Messages API writes it: a message JSON, its SSE events, its errors."""

from __future__ import annotations

import json
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
