"""A Reply rendered as OpenAI writes it: Responses API objects and SSE events, chat completions, errors."""

from __future__ import annotations

import json
import time
from typing import Any

from .reply import Block, Reply, new_id

_CHUNK = 16


def error_body(status: int, message: str) -> dict[str, Any]:
    kind, code = {429: ("requests", "rate_limit_exceeded"), 404: ("invalid_request_error", "unknown_url"),
                  401: ("invalid_request_error", "invalid_api_key"),
                  400: ("invalid_request_error", None)}.get(status, ("server_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _chunks(text: str) -> list[str]:
    return [text[i:i + _CHUNK] for i in range(0, len(text), _CHUNK)] or [""]


def _usage(usage: dict[str, int]) -> dict[str, Any]:
    return {"input_tokens": usage["input_tokens"],
            "input_tokens_details": {"cached_tokens": usage["cache_read_input_tokens"],
                                     "cache_write_tokens": usage["cache_creation_input_tokens"]},
            "output_tokens": usage["output_tokens"], "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["input_tokens"] + usage["output_tokens"]}


# -- Responses API --------------------------------------------------------------------------------------------

def _call_id(block: Block) -> str:
    return "call_" + block.id.removeprefix("toolu_")


def _items(reply: Reply) -> list[dict[str, Any]]:
    """The finished output items, with fresh ids: render them once per response so every event agrees."""
    tag = new_id("")
    items: list[dict[str, Any]] = []
    for n, block in enumerate(reply.blocks):
        if block.type == "text":
            items.append({"id": f"msg_{tag}_{n}", "type": "message", "status": "completed",
                          "role": "assistant", "content": [{"type": "output_text", "text": block.text,
                                                            "annotations": [], "logprobs": []}]})
        else:
            items.append({"id": "fc_" + block.id.removeprefix("toolu_"), "type": "function_call",
                          "status": "completed", "call_id": _call_id(block), "name": block.name,
                          "arguments": json.dumps(dict(block.input))})
    return items


def response(reply: Reply, *, model: str, usage: dict[str, int], request: dict[str, Any],
             status: str = "completed", response_id: str | None = None,
             items: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The body of POST /v1/responses (and the `response` inside its lifecycle events)."""
    done = status == "completed"
    if done and items is None:
        items = _items(reply)
    return {"id": response_id or new_id("resp_"), "object": "response", "created_at": int(time.time()),
            "status": status, "background": False, "error": None, "incomplete_details": None,
            "instructions": request.get("instructions"), "max_output_tokens": request.get("max_output_tokens"),
            "model": model, "output": items if done else [], "parallel_tool_calls": True,
            "previous_response_id": request.get("previous_response_id"), "reasoning": {"effort": None,
                                                                                       "summary": None},
            "store": bool(request.get("store", True)), "temperature": 1.0, "text": {"format": {"type": "text"}},
            "tool_choice": request.get("tool_choice", "auto"), "tools": request.get("tools") or [], "top_p": 1.0,
            "truncation": "disabled", "usage": _usage(usage) if done else None, "user": None, "metadata": {}}


def response_events(reply: Reply, *, model: str, usage: dict[str, int],
                    request: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of a streamed POST /v1/responses, in the order the real API sends them."""
    rid = new_id("resp_")
    out: list[dict[str, Any]] = [
        {"type": "response.created", "response": response(reply, model=model, usage=usage, request=request,
                                                           status="in_progress", response_id=rid)},
        {"type": "response.in_progress", "response": response(reply, model=model, usage=usage, request=request,
                                                               status="in_progress", response_id=rid)}]
    items = _items(reply)
    for index, item in enumerate(items):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            ids = {"item_id": item["id"], "output_index": index, "content_index": 0}
            out.append({"type": "response.output_item.added", "output_index": index,
                        "item": {**item, "status": "in_progress", "content": []}})
            out.append({"type": "response.content_part.added", **ids,
                        "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}})
            out += [{"type": "response.output_text.delta", **ids, "delta": piece, "logprobs": []}
                    for piece in _chunks(text) if piece]
            out.append({"type": "response.output_text.done", **ids, "text": text, "logprobs": []})
            out.append({"type": "response.content_part.done", **ids, "part": item["content"][0]})
        else:
            ids = {"item_id": item["id"], "output_index": index}
            out.append({"type": "response.output_item.added", "output_index": index,
                        "item": {**item, "status": "in_progress", "arguments": ""}})
            out += [{"type": "response.function_call_arguments.delta", **ids, "delta": piece}
                    for piece in _chunks(item["arguments"])]
            out.append({"type": "response.function_call_arguments.done", **ids, "name": item["name"],
                        "arguments": item["arguments"]})
        out.append({"type": "response.output_item.done", "output_index": index, "item": item})
    out.append({"type": "response.completed", "response": response(reply, model=model, usage=usage,
                                                                     request=request, response_id=rid,
                                                                     items=items)})
    return [(event["type"], {**event, "sequence_number": n}) for n, event in enumerate(out)]


def failed_response(*, model: str, request: dict[str, Any], message: str,
                    response_id: str | None = None) -> dict[str, Any]:
    """A Responses object with status "failed" and a server error carrying `message`."""
    usage = {"input_tokens": 1, "output_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    created = response(Reply.text(""), model=model, usage=usage, request=request, status="in_progress",
                       response_id=response_id)
    return {**created, "status": "failed", "error": {"code": "server_error", "message": message}}


def response_failed_events(*, model: str, request: dict[str, Any],
                           message: str = "The server had an error (fakeapi stream_error)"
                           ) -> list[tuple[str, dict[str, Any]]]:
    """A stream that starts, then fails (`response.failed` with a server error)."""
    usage = {"input_tokens": 1, "output_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    created = response(Reply.text(""), model=model, usage=usage, request=request, status="in_progress")
    failed = failed_response(model=model, request=request, message=message, response_id=created["id"])
    return [("response.created", {"type": "response.created", "response": created, "sequence_number": 0}),
            ("response.failed", {"type": "response.failed", "response": failed, "sequence_number": 1})]


# -- chat completions -----------------------------------------------------------------------------------------

def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [{"id": _call_id(b), "type": "function",
             "function": {"name": b.name, "arguments": json.dumps(dict(b.input))}}
            for b in reply.blocks if b.type == "tool_use"]


def _finish(reply: Reply) -> str:
    if reply.stop_reason in ("length", "max_tokens"):
        return "length"
    return "tool_calls" if reply.calls_tool else "stop"


def _chat_usage(usage: dict[str, int]) -> dict[str, Any]:
    return {"prompt_tokens": usage["input_tokens"], "completion_tokens": usage["output_tokens"],
            "total_tokens": usage["input_tokens"] + usage["output_tokens"],
            "prompt_tokens_details": {"cached_tokens": usage["cache_read_input_tokens"]}}


def chat_completion(reply: Reply, *, model: str, usage: dict[str, int]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.all_text or None, "refusal": None}
    if reply.calls_tool:
        message["tool_calls"] = _tool_calls(reply)
    return {"id": new_id("chatcmpl-"), "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": _finish(reply)}],
            "usage": _chat_usage(usage), "system_fingerprint": None}


def chat_chunks(reply: Reply, *, model: str, usage: dict[str, int], include_usage: bool) -> list[dict[str, Any]]:
    """The `data:` payloads of a streamed chat completion (the server adds `data: [DONE]`)."""
    base = {"id": new_id("chatcmpl-"), "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "system_fingerprint": None}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": piece}) for piece in _chunks(reply.all_text) if piece]
    for n, call in enumerate(_tool_calls(reply)):
        out.append(chunk({"tool_calls": [{"index": n, "id": call["id"], "type": "function",
                                          "function": {"name": call["function"]["name"], "arguments": ""}}]}))
        out += [chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]})
                for piece in _chunks(call["function"]["arguments"])]
    out.append(chunk({}, _finish(reply)))
    if include_usage:
        out.append({**base, "choices": [], "usage": _chat_usage(usage)})
    return out
