"""The batch endpoints of the fake API: Anthropic's Message Batches and OpenAI's Batch API (with its file uploads).

Each request inside a batch is answered as a synchronous request to /v1/messages or /v1/chat/completions would be
(the queues, `script`, `default`), when the batch ends. A batch answers `in_progress` to its first `polls` retrieves,
then ends; `outcome(index, params)` may make a request "errored", "expired" or "canceled" instead of "succeeded".
The inner requests are kept in `inner` (they are not HTTP requests: `api.requests` holds the batch calls only).
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import anthropic_wire, openai_wire
from .recorded import Recorded
from .reply import new_id

if TYPE_CHECKING:
    from .handler import Handler
    from .server import FakeAPI

Outcome = Callable[[int, dict[str, Any]], str]


@dataclass(slots=True, kw_only=True)
class _Batch:
    provider: str
    id: str
    requests: list[tuple[str, dict[str, Any]]]
    created: int
    input_file_id: str | None = None
    polls: int = 0
    results: list[tuple[str, str, dict[str, Any] | None]] | None = None  # (custom id, kind, body)
    files: dict[str, str] = field(default_factory=dict)  # output / error file ids (OpenAI)


class Batches:
    def __init__(self, api: FakeAPI) -> None:
        self.api = api
        self.polls = 1  # retrieves that answer in_progress before a batch ends
        self.outcome: Outcome | None = None
        self.inner: list[Recorded] = []
        self._lock = threading.Lock()
        self._batches: dict[str, _Batch] = {}
        self._files: dict[str, bytes] = {}

    def reset(self) -> None:
        with self._lock:
            self.polls, self.outcome = 1, None
            self.inner.clear()
            self._batches.clear()
            self._files.clear()

    @property
    def created(self) -> list[str]:
        """The ids of the batches created, in order."""
        with self._lock:
            return list(self._batches)

    # -- routing -------------------------------------------------------------------------------------------

    def serve(self, handler: Handler, request: Recorded) -> bool:
        """Answer `request` if it is a batch endpoint; False leaves it to the handler."""
        path, method = request.path, request.method
        if self.api.pending(path):  # a reply queued for this path (api.enqueue(Reply.error(401, …), endpoint=…))
            return False
        parts = path.strip("/").split("/")
        if path == "/v1/messages/batches" and method == "POST":
            handler._json(200, self._anthropic_create(request))
        elif path.startswith("/v1/messages/batches/") and method == "GET":
            batch = self._batches.get(parts[3])
            if batch is None:
                handler._error(404, f"fakeapi: no message batch {parts[3]}")
            elif len(parts) == 5 and parts[4] == "results":
                handler._send(200, self._anthropic_results(batch), content_type="application/binary")
            else:
                handler._json(200, self._anthropic_batch(batch, handler, poll=True))
        elif path == "/v1/files" and method == "POST":
            handler._json(200, self._upload(request))
        elif path.startswith("/v1/files/") and path.endswith("/content") and method == "GET":
            data = self._files.get(parts[2])
            if data is None:
                handler._error(404, f"fakeapi: no file {parts[2]}")
            else:
                handler._send(200, data, content_type="application/octet-stream")
        elif path == "/v1/batches" and method == "POST":
            handler._json(200, self._openai_create(request))
        elif path.startswith("/v1/batches/") and method == "GET":
            batch = self._batches.get(parts[2])
            if batch is None:
                handler._error(404, f"fakeapi: no batch {parts[2]}")
            else:
                handler._json(200, self._openai_batch(batch, poll=True))
        else:
            return False
        return True

    # -- answering the requests of a batch -----------------------------------------------------------------

    def _finish(self, batch: _Batch) -> None:
        if batch.results is not None:
            return
        path = "/v1/messages" if batch.provider == "anthropic" else "/v1/chat/completions"
        results: list[tuple[str, str, dict[str, Any] | None]] = []
        for index, (cid, params) in enumerate(batch.requests):
            body = json.dumps(params).encode()
            inner = Recorded(method="POST", path=path, query="", headers={}, body=body, json=params, index=-1)
            with self._lock:
                self.inner.append(inner)
            kind = self.outcome(index, params) if self.outcome else "succeeded"
            problem = anthropic_wire.invalid(params) if batch.provider == "anthropic" else None
            if problem is not None:  # the real API errors such a request of a batch with the same message
                self.api._reject(inner, problem)
                results.append((cid, "errored", {"message": problem}))
                continue
            if kind != "succeeded":
                results.append((cid, kind, None))
                continue
            reply = self.api._choose(inner)
            if reply is None or reply.kind != "turn":
                results.append((cid, "errored", None))
                continue
            reply = reply.with_ids()
            model = reply.model or inner.model or "fake-model"
            usage = reply.resolved_usage(len(inner.text()))
            if batch.provider == "anthropic":
                usage = anthropic_wire.as_cached(usage, params, model)
            rendered = (anthropic_wire.message(reply, model=model, usage=usage) if batch.provider == "anthropic"
                        else openai_wire.chat_completion(reply, model=model, usage=usage))
            results.append((cid, "succeeded", rendered))
        batch.results = results

    def _ended(self, batch: _Batch, *, poll: bool) -> bool:
        with self._lock:
            if poll:
                batch.polls += 1
            ended = batch.polls > self.polls
        if ended:
            self._finish(batch)
        return ended

    # -- Anthropic -----------------------------------------------------------------------------------------

    def _anthropic_create(self, request: Recorded) -> dict[str, Any]:
        entries = [(r["custom_id"], r["params"]) for r in (request.json or {}).get("requests", [])]
        batch = _Batch(provider="anthropic", id=new_id("msgbatch_"), requests=entries, created=int(time.time()))
        with self._lock:
            self._batches[batch.id] = batch
        return self._anthropic_batch(batch, None, poll=False)

    def _anthropic_batch(self, batch: _Batch, handler: Handler | None, *, poll: bool) -> dict[str, Any]:
        ended = self._ended(batch, poll=poll)
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if ended:
            for _, kind, _ in batch.results or ():
                counts[kind] += 1
        else:
            counts["processing"] = len(batch.requests)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(batch.created))
        host = handler.headers.get("host", "127.0.0.1") if handler is not None else "127.0.0.1"
        return {"id": batch.id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
                "request_counts": counts, "created_at": stamp, "expires_at": stamp, "archived_at": None,
                "cancel_initiated_at": None, "ended_at": stamp if ended else None,
                "results_url": f"http://{host}/v1/messages/batches/{batch.id}/results" if ended else None}

    def _anthropic_results(self, batch: _Batch) -> bytes:
        self._finish(batch)
        lines = []
        for cid, kind, body in batch.results or ():
            if kind == "succeeded":
                result: dict[str, Any] = {"type": "succeeded", "message": body}
            elif kind == "errored":
                said = body["message"] if body else "fakeapi: this request errored"
                result = {"type": "errored", "error": anthropic_wire.error_body(400, said)}
            else:
                result = {"type": kind}
            lines.append(json.dumps({"custom_id": cid, "result": result}))
        return ("\n".join(lines) + "\n").encode()

    # -- OpenAI --------------------------------------------------------------------------------------------

    def _upload(self, request: Recorded) -> dict[str, Any]:
        head = f"Content-Type: {request.headers.get('content-type', '')}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + request.body)
        data, name, purpose = b"", "upload", ""
        for part in message.iter_parts():
            field_name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True) or b""
            if field_name == "file":
                data, name = payload, part.get_filename() or name
            elif field_name == "purpose":
                purpose = payload.decode()
        file_id = new_id("file-")
        with self._lock:
            self._files[file_id] = data
        return {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()), "filename": name,
                "purpose": purpose or "batch", "status": "processed"}

    def _openai_create(self, request: Recorded) -> dict[str, Any]:
        data = request.json or {}
        raw = self._files.get(str(data.get("input_file_id")), b"")
        lines = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
        batch = _Batch(provider="openai", id=new_id("batch_"), requests=[(x["custom_id"], x["body"]) for x in lines],
                       created=int(time.time()), input_file_id=str(data.get("input_file_id")))
        with self._lock:
            self._batches[batch.id] = batch
        return self._openai_batch(batch, poll=False)

    def _openai_batch(self, batch: _Batch, *, poll: bool) -> dict[str, Any]:
        ended = self._ended(batch, poll=poll)
        total = len(batch.requests)
        completed = failed = 0
        if ended and not batch.files:
            good, bad = [], []
            for cid, kind, body in batch.results or ():
                rid = new_id("batch_req_")
                if kind == "succeeded":
                    good.append({"id": rid, "custom_id": cid, "error": None,
                                 "response": {"status_code": 200, "request_id": new_id("req_"), "body": body}})
                elif kind == "errored":
                    bad.append({"id": rid, "custom_id": cid, "error": None,
                                "response": {"status_code": 400, "request_id": new_id("req_"),
                                             "body": openai_wire.error_body(400, "fakeapi: this request errored")}})
                else:
                    bad.append({"id": rid, "custom_id": cid, "response": None,
                                "error": {"code": "batch_expired", "message": "This request could not be executed "
                                                                              "before the completion window expired."}})
            for name, rows in (("output", good), ("error", bad)):
                if rows:
                    file_id = new_id("file-")
                    self._files[file_id] = ("\n".join(json.dumps(r) for r in rows) + "\n").encode()
                    batch.files[name] = file_id
        if ended:
            failed = sum(1 for _, kind, _ in batch.results or () if kind != "succeeded")
            completed = total - failed
        every_expired = ended and total > 0 and all(kind == "expired" for _, kind, _ in batch.results or ())
        status = ("expired" if every_expired else "completed") if ended else "in_progress"
        return {"id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
                "input_file_id": batch.input_file_id or "", "completion_window": "24h", "status": status,
                "output_file_id": batch.files.get("output"), "error_file_id": batch.files.get("error"),
                "created_at": batch.created, "in_progress_at": batch.created,
                "completed_at": int(time.time()) if ended else None,
                "request_counts": {"total": total, "completed": completed, "failed": failed}}
