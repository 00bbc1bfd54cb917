"""The request handler of the fake API: reads a request, records it, writes the chosen reply or fault."""

from __future__ import annotations

import gzip
import json
import socket
import struct
import zlib
from collections.abc import Callable, Iterable, Sequence
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from . import anthropic_wire, openai_wire
from .recorded import Recorded
from .reply import Reply, new_id

if TYPE_CHECKING:
    from .server import _Server

MODEL_PATHS = ("/v1/messages", "/v1/responses", "/v1/chat/completions")
MODELS = ("claude-sonnet-4-6", "claude-haiku-4-5", "claude-opus-4-6", "gpt-5.4", "gpt-5.4-mini", "gpt-5-codex")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet: tests read api.requests instead

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_GET

    # -- request -------------------------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        body = self._read_raw_body()
        encoding = self.headers.get("content-encoding", "").lower()
        # Recorded bodies are plain JSON; zstd (Python 3.11 has no stdlib codec) stays as sent.
        if encoding == "gzip":
            return gzip.decompress(body)
        if encoding == "deflate":
            return zlib.decompress(body)
        return body

    def _read_raw_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        api = self.server.api
        parts = urlsplit(self.path)
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = api._record(method=self.command, path=parts.path.rstrip("/") or "/", query=parts.query,
                              headers=headers, body=self._read_body())
        self._anthropic = request.path.startswith("/v1/messages") or "anthropic-version" in headers
        if api.batches.serve(self, request):  # batches.py: the providers' batch APIs
            return
        if request.path in ("/v1/messages", "/v1/messages/count_tokens") and request.method == "POST":
            problem = anthropic_wire.invalid(request.json)  # what the real API refuses, it refuses here too
            if problem is not None:
                api._reject(request, problem)
                self._error(400, problem)
                return
        if request.path not in MODEL_PATHS:
            self._reply(request)
            return
        refusal = api.limits.enter()  # api.limit(rate=…, overload=…): a 429 or 529 before anything scripted
        # In flight until its status line is written (send_response), before the client can see the reply and
        # start another request in its place; or until the handler is done (a hang, a reset).
        self._leave: Callable[[], None] | None = api.limits.leave
        try:
            if refusal is not None:
                self._error(refusal.status, refusal.message, extra=refusal.headers)
            else:
                self._reply(request)
        finally:
            self._left()

    def _left(self) -> None:
        leave, self._leave = getattr(self, "_leave", None), None
        if leave is not None:
            leave()

    def send_response(self, code: int, message: str | None = None) -> None:
        self._left()
        super().send_response(code, message)

    def _reply(self, request: Recorded) -> None:
        api = self.server.api
        try:
            reply = api._choose(request)
        except Exception as err:  # a broken script must fail its test with a clear message, not drop the socket
            api._note_error(f"script raised {err!r} for {request.method} {request.path}")
            self._error(500, f"fakeapi: the script raised {type(err).__name__}: {err}",
                        extra={"x-should-retry": "false"})
            return
        if reply is None:
            self._builtin(request)
        elif reply.kind == "fault":
            self._fault(request, reply)
        elif reply.kind == "json":
            self._json(reply.status, reply.body, headers=reply.headers)
        elif reply.kind == "raw":
            self._send(reply.status, str(reply.body).encode(), content_type=reply.content_type)
        elif reply.kind == "failed":
            self._failed(request, reply.message)
        else:
            self._turn(request, reply)

    def _builtin(self, request: Recorded) -> None:
        api = self.server.api
        if request.path == "/v1/messages/count_tokens":
            self._json(200, anthropic_wire.count_tokens(len(request.text())))
        elif request.path == "/v1/models" and request.method == "GET":
            self._json(200, {"object": "list", "data": [_model(m) for m in MODELS], "has_more": False,
                             "first_id": MODELS[0], "last_id": MODELS[-1]})
        elif request.path.startswith("/v1/models/") and request.method == "GET":
            self._json(200, _model(request.path.removeprefix("/v1/models/")))
        elif request.path in MODEL_PATHS:
            api._mark_unexpected(request)
            message = (f"fakeapi: nothing queued or scripted for {request.method} {request.path}; "
                       "call api.enqueue(...) or set api.script / api.default")
            self._error(400, message, extra={"x-should-retry": "false"})
        else:
            api._mark_unexpected(request)
            self._error(404, f"fakeapi: no such endpoint {request.method} {request.path}")

    # -- replies -------------------------------------------------------------------------------------------

    def _turn(self, request: Recorded, reply: Reply) -> None:
        reply = reply.with_ids()
        data = request.json or {}
        model = reply.model or request.model or "fake-model"
        usage = reply.resolved_usage(len(request.text()))
        if request.path == "/v1/responses":
            if request.stream:
                self._sse(openai_wire.response_events(reply, model=model, usage=usage, request=data))
            else:
                self._json(200, openai_wire.response(reply, model=model, usage=usage, request=data))
        elif request.path == "/v1/chat/completions":
            if request.stream:
                include = bool((data.get("stream_options") or {}).get("include_usage"))
                chunks = openai_wire.chat_chunks(reply, model=model, usage=usage, include_usage=include)
                self._sse([(None, c) for c in chunks], done=True)
            else:
                self._json(200, openai_wire.chat_completion(reply, model=model, usage=usage))
        else:  # a prefix too short to cache is not cached, whatever the script says (as the real API does)
            usage = anthropic_wire.as_cached(usage, data, model)
            if request.stream:
                self._sse(anthropic_wire.events(reply, model=model, usage=usage))
            else:
                self._json(200, anthropic_wire.message(reply, model=model, usage=usage))

    def _fault(self, request: Recorded, reply: Reply) -> None:
        fault = reply.failure
        extra: dict[str, str] = {}
        if reply.retry_after is not None:
            extra["retry-after"] = f"{reply.retry_after:g}"
            extra["retry-after-ms"] = str(int(reply.retry_after * 1000))
        if fault.isdigit():
            self._error(int(fault), reply.message or f"fakeapi fault {fault}", extra=extra)
        elif fault == "hang":
            self.server.api._stop.wait(reply.seconds)  # bounded, and close() ends it at once
            self.close_connection = True
        elif fault == "reset":
            # SO_LINGER 0 turns close() into a TCP RST: the client sees "connection reset by peer".
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
        elif fault == "non_json":
            page = b"<html><body><h1>502 Bad Gateway</h1>fakeapi non_json</body></html>"
            self._send(200, page, content_type="text/html; charset=utf-8")
        elif fault == "truncated":
            self._truncated(request)
        elif fault == "stream_error":
            model = request.model or "fake-model"
            if not request.stream:
                self._error(529 if self._anthropic else 500, "fakeapi stream_error (not streaming)")
            elif request.path == "/v1/responses":
                self._sse(openai_wire.response_failed_events(model=model, request=request.json or {}))
            else:
                self._sse(anthropic_wire.stream_error_events(model=model))

    def _failed(self, request: Recorded, message: str) -> None:
        """A 200 whose body (or stream) says the request failed, in the shape of the endpoint called."""
        model = request.model or "fake-model"
        if request.path == "/v1/responses":
            if request.stream:
                self._sse(openai_wire.response_failed_events(model=model, request=request.json or {},
                                                             message=message))
            else:
                self._json(200, openai_wire.failed_response(model=model, request=request.json or {},
                                                            message=message))
        elif request.path == "/v1/chat/completions":
            self._json(200, openai_wire.error_body(500, message))
        elif request.stream:
            self._sse(anthropic_wire.stream_error_events(model=model, error=message))
        else:
            self._json(200, anthropic_wire.error_body(500, message))

    def _truncated(self, request: Recorded) -> None:
        """A 200 that stops half-way: half the SSE events without the closing chunk, or half a JSON body."""
        full = Reply.text("This reply was cut off half-way through by the fake API. " * 4)
        self.close_connection = True
        if request.stream:
            self.send_response(200)
            self._headers({"content-type": "text/event-stream", "transfer-encoding": "chunked"})
            usage = full.resolved_usage(1)
            model = request.model or "fake-model"
            events: Sequence[tuple[str | None, dict[str, Any]]]
            if request.path == "/v1/responses":
                events = openai_wire.response_events(full, model=model, usage=usage, request=request.json or {})
            elif request.path == "/v1/chat/completions":
                events = [(None, c) for c in openai_wire.chat_chunks(full, model=model, usage=usage,
                                                                      include_usage=False)]
            else:
                events = anthropic_wire.events(full, model=model, usage=usage)
            for name, data in events[: max(1, len(events) // 2)]:
                self._chunk(_sse_bytes(name, data))
        else:
            body = json.dumps(anthropic_wire.message(full, model="fake-model", usage=full.resolved_usage(1))
                              ).encode()
            self.send_response(200)
            self._headers({"content-type": "application/json", "content-length": str(len(body))})
            self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()

    # -- writing -------------------------------------------------------------------------------------------

    def _headers(self, headers: dict[str, str]) -> None:
        id_header = "request-id" if self._anthropic else "x-request-id"
        for name, value in {id_header: new_id("req_"), **headers}.items():
            self.send_header(name, value)
        self.end_headers()

    def _send(self, status: int, body: bytes, *, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self._headers({"content-type": content_type, "content-length": str(len(body)), **(extra or {})})
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, body: Any, *, headers: dict[str, str] | Any = None) -> None:
        self._send(status, json.dumps(body).encode(), content_type="application/json", extra=dict(headers or {}))

    def _error(self, status: int, message: str, *, extra: dict[str, str] | None = None) -> None:
        body = anthropic_wire.error_body(status, message) if self._anthropic else openai_wire.error_body(status,
                                                                                                         message)
        self._json(status, body, headers=extra)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def _sse(self, events: Iterable[tuple[str | None, dict[str, Any]]], *, done: bool = False) -> None:
        self.send_response(200)
        self._headers({"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache",
                       "transfer-encoding": "chunked"})
        for name, data in events:
            self._chunk(_sse_bytes(name, data))
        if done:
            self._chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _sse_bytes(name: str | None, data: dict[str, Any]) -> bytes:
    prefix = f"event: {name}\n" if name else ""
    return f"{prefix}data: {json.dumps(data)}\n\n".encode()


def _model(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "type": "model", "created": 1767225600,
            "created_at": "2026-01-01T00:00:00Z", "owned_by": "fakeapi", "display_name": model_id,
            "lifecycle": "active"}
