"""What the fake API answers: a model turn (text and tool calls), a raw JSON body, or a fault."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

FAULTS = ("429", "529", "500", "hang", "reset", "truncated", "non_json", "stream_error")
_ids = itertools.count(1)


def new_id(prefix: str) -> str:
    """A short unique id with the provider's prefix (msg_, toolu_, resp_, call_ …)."""
    return f"{prefix}{next(_ids):024d}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """One part of an assistant turn: text, or a call of a tool with its JSON input."""

    type: str  # "text" | "tool_use"
    text: str = ""
    name: str = ""
    input: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""  # empty: a fresh id each time the reply is sent (a reused Reply never repeats a call id)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """One answer of the fake server; build it with the class methods, not the constructor.

    kind "turn": an assistant turn rendered in the shape of whichever endpoint was called
    (Anthropic message, Responses response, chat completion; JSON or SSE as the request asks).
    kind "json": `body` sent as is with `status`. kind "raw": `body` (text) sent as is with `status` and
    `content_type`. kind "failed": a 200 that reports a failure with `message` in the endpoint's own shape.
    kind "fault": one of FAULTS or an HTTP status (with `message` in the provider's error body, if given).
    """

    kind: str
    blocks: tuple[Block, ...] = ()
    usage: Mapping[str, int] | None = None  # None: estimated from the request and reply lengths
    stop_reason: str | None = None  # None: "tool_use" when the turn calls a tool, else "end_turn"
    model: str | None = None  # None: echo the request's model
    failure: str = ""  # for kind "fault": which one (see FAULTS)
    seconds: float = 30.0  # hang: how long to hold the connection before closing it
    retry_after: float | None = None
    status: int = 200
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    message: str = ""  # an HTTP-status fault's or a "failed" reply's error message ("": a stock one)
    content_type: str = "application/json"

    # -- model turns ---------------------------------------------------------------------------------------

    @classmethod
    def text(cls, text: str, *, usage: Mapping[str, int] | None = None, stop_reason: str | None = None,
             model: str | None = None) -> Reply:
        """An assistant turn that answers with `text` and ends."""
        return cls(kind="turn", blocks=(Block(type="text", text=text),), usage=usage, stop_reason=stop_reason,
                   model=model)

    @classmethod
    def tool_use(cls, name: str, input: Mapping[str, Any], *, text: str | None = None, id: str | None = None,
                 usage: Mapping[str, int] | None = None, model: str | None = None) -> Reply:
        """An assistant turn that calls tool `name` with `input` (optionally after some `text`).

        The client runs the tool and sends its result in its NEXT request, so queue the following turn too.
        """
        blocks: tuple[Block, ...] = (Block(type="text", text=text),) if text else ()
        blocks += (Block(type="tool_use", name=name, input=dict(input), id=id or ""),)
        return cls(kind="turn", blocks=blocks, usage=usage, model=model)

    @classmethod
    def turn(cls, *parts: Reply, usage: Mapping[str, int] | None = None, stop_reason: str | None = None) -> Reply:
        """One turn made of the blocks of several replies, e.g. two tool calls in parallel."""
        blocks = tuple(b for part in parts for b in part.blocks)
        return cls(kind="turn", blocks=blocks, usage=usage, stop_reason=stop_reason)

    # -- raw bodies and faults -----------------------------------------------------------------------------

    @classmethod
    def json(cls, body: Any, *, status: int = 200, headers: Mapping[str, str] | None = None) -> Reply:
        """Send `body` as JSON with `status`, whatever the endpoint (for endpoints with no turn shape)."""
        return cls(kind="json", body=body, status=status, headers=dict(headers or {}))

    @classmethod
    def raw(cls, body: str, *, status: int = 200, content_type: str = "text/plain; charset=utf-8") -> Reply:
        """Send `body` verbatim (e.g. a proxy's error page, or a body that echoes what the client sent)."""
        return cls(kind="raw", body=body, status=status, content_type=content_type)

    @classmethod
    def error(cls, status: int, message: str, *, retry_after: float | None = None) -> Reply:
        """An HTTP error `status` whose body, in the provider's error shape, carries `message` (e.g. a 401
        that echoes the key it was sent, as some gateways do)."""
        if not 400 <= status <= 599:
            raise ValueError(f"status {status} is not an HTTP error; use 400-599")
        return cls(kind="fault", failure=str(status), message=message, retry_after=retry_after)

    @classmethod
    def failed(cls, message: str) -> Reply:
        """A 200 that reports a failure: a Responses object with status "failed" (its `error.message` is
        `message`), an Anthropic `{"type": "error"}` body, or a chat-completions `{"error": …}` body; streamed
        requests get the stream that starts and then fails with `message`."""
        return cls(kind="failed", message=message)

    @classmethod
    def fault(cls, fault: str, *, retry_after: float | None = None, seconds: float = 30.0) -> Reply:
        """A failure: "429" (with `retry_after`), "529", "500" or any HTTP status as text, "hang" (hold the
        connection `seconds`, bounded by close()), "reset" (drop the connection), "truncated" (a 200 that
        stops mid-body or mid-stream), "non_json" (a 200 text/html page), "stream_error" (an error event
        in the middle of an SSE stream; JSON requests get a 529/500-class error instead)."""
        if fault not in FAULTS and not (fault.isdigit() and 400 <= int(fault) <= 599):
            raise ValueError(f"unknown fault {fault!r}; use one of {', '.join(FAULTS)} or an HTTP status")
        return cls(kind="fault", failure=fault, retry_after=retry_after, seconds=seconds)

    def with_ids(self) -> Reply:
        """This reply with a fresh id for every tool call that has none (done for each response sent)."""
        if all(b.id or b.type != "tool_use" for b in self.blocks):
            return self
        blocks = tuple(replace(b, id=new_id("toolu_")) if b.type == "tool_use" and not b.id else b
                       for b in self.blocks)
        return replace(self, blocks=blocks)

    # -- derived -------------------------------------------------------------------------------------------

    @property
    def calls_tool(self) -> bool:
        return any(b.type == "tool_use" for b in self.blocks)

    @property
    def all_text(self) -> str:
        return "".join(b.text for b in self.blocks if b.type == "text")

    def resolved_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if self.calls_tool else "end_turn"

    def resolved_usage(self, request_chars: int) -> dict[str, int]:
        """Token counts: the given ones, else about four characters a token (deterministic)."""
        given = dict(self.usage or {})
        out_chars = len(self.all_text) + sum(len(str(dict(b.input))) for b in self.blocks if b.type == "tool_use")
        given.setdefault("input_tokens", max(1, request_chars // 4))
        given.setdefault("output_tokens", max(1, out_chars // 4))
        given.setdefault("cache_read_input_tokens", 0)
        given.setdefault("cache_creation_input_tokens", 0)
        return given
