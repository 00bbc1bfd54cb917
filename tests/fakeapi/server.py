"""The loopback fake model API: a scripted HTTP server for the Anthropic and OpenAI clients and CLIs.

Which reply answers a request to a model endpoint (/v1/messages, /v1/responses, /v1/chat/completions):
the queue of that path, then the queue for any endpoint, then `script(request)`, then `default`; with none of
them the request gets a non-retryable 400 and lands in `unexpected`. Other paths answer from their own queue,
else built-ins (/v1/models, /v1/messages/count_tokens), else a 404 in the provider's error shape (also
recorded in `unexpected`). An agentic CLI sends one request per turn: queue `Reply.tool_use(...)` then
`Reply.text(...)`; the second request carries the tool's result (see `Recorded.tool_results()`).
`FakeAPI.activation(Activate(skill=..., when=...))` scripts a model that loads a skill when the user's query
matches (see activation.py). A script that reads the prompt uses `Recorded.message_text(i)` or `Recorded.text()`:
a message's content may be a string or a list of blocks (a judge's cacheable prefix, then the rest).
"""

from __future__ import annotations

import collections
import json
import socket
import ssl
import threading
import traceback
from http.server import ThreadingHTTPServer
from typing import Any

from .activation import Script, activation
from .batches import Batches
from .handler import MODEL_PATHS, Handler
from .limits import Limits
from .recorded import Recorded
from .reply import Reply

FAKE_KEY = "sk-fakeapi-test-key"  # what tests hand clients as an API key; never a real one


class FakeAPI:
    """A scripted fake of the providers' HTTP APIs on 127.0.0.1 (ephemeral port), served by daemon threads."""

    def __init__(self, *, tls: ssl.SSLContext | None = None) -> None:
        """`tls`: a server context (tls.py's Certificates) to serve HTTPS instead of plain HTTP."""
        self._lock = threading.Lock()
        self._queues: dict[str | None, collections.deque[Reply]] = collections.defaultdict(collections.deque)
        self._requests: list[Recorded] = []
        self._unexpected: list[Recorded] = []
        self._rejected: list[tuple[Recorded, str]] = []
        self._errors: list[str] = []
        self._stop = threading.Event()
        self.script: Script | None = None
        self.default: Reply | None = None
        self.batches = Batches(self)  # the batch endpoints (batches.py)
        self.limits = Limits()  # see limit()
        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.api = self
        self._server.tls = tls
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fakeapi", daemon=True)
        self._thread.start()
        self._closed = False

    # -- addresses -----------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL without /v1 (what ANTHROPIC_BASE_URL and the anthropic SDK's base_url take)."""
        scheme = "https" if self._server.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self._server.server_port}"

    @property
    def openai_url(self) -> str:
        """The base URL with /v1 (what OPENAI_BASE_URL, the openai SDK and a Codex provider's base_url take)."""
        return self.url + "/v1"

    def anthropic_env(self, key: str = FAKE_KEY) -> dict[str, str]:
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": key}

    def openai_env(self, key: str = FAKE_KEY) -> dict[str, str]:
        return {"OPENAI_BASE_URL": self.openai_url, "OPENAI_API_KEY": key}

    def env(self, key: str = FAKE_KEY) -> dict[str, str]:
        """The environment that points both SDKs (and the CLIs) at this server with `key`."""
        return {**self.anthropic_env(key), **self.openai_env(key)}

    # -- scripting -----------------------------------------------------------------------------------------

    def enqueue(self, *replies: Reply, endpoint: str | None = None) -> None:
        """Queue replies (FIFO) for `endpoint` (a path such as "/v1/messages"), or for any model endpoint."""
        with self._lock:
            self._queues[endpoint].extend(replies)

    def pending(self, endpoint: str | None = None) -> int:
        """How many queued replies for `endpoint` (None: the any-endpoint queue) were not used yet."""
        with self._lock:
            return len(self._queues.get(endpoint, ()))

    def limit(self, *, rate: float | None = None, overload: int | None = None, retry_after: str = "ms",
              window: float = 1.0, latency: float = 0.0) -> Limits:
        """A provider's limits on the model endpoints (limits.py): at most `rate` requests per `window` seconds
        (then 429 with the wait as retry-after-ms, whole "seconds" or an HTTP "date"), and a 529 for a request past
        `overload` in flight at once; each admitted request answered after `latency` seconds. Counters restart;
        None lifts a limit. `api.limits` holds what it saw."""
        self.limits.set(rate=rate, overload=overload, retry_after=retry_after, window=window, latency=latency)
        return self.limits

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    @property
    def unexpected(self) -> list[Recorded]:
        """Requests that got a 404 or found nothing scripted for them."""
        with self._lock:
            return list(self._unexpected)

    @property
    def rejected(self) -> list[tuple[Recorded, str]]:
        """Requests answered 400 for what the real API refuses (anthropic_wire.invalid), with the message."""
        with self._lock:
            return list(self._rejected)

    @property
    def errors(self) -> list[str]:
        """Failures inside the fake itself (a script that raised, a rendering bug); empty in a healthy test."""
        with self._lock:
            return list(self._errors)

    def count(self, path: str | None = None) -> int:
        """Requests seen on `path` (query string ignored), or on every path."""
        with self._lock:
            return sum(1 for r in self._requests if path is None or r.path == path)

    def reset(self) -> None:
        """Forget queues, script, default and every recorded request."""
        with self._lock:
            self._queues.clear()
            self._requests.clear()
            self._unexpected.clear()
            self._rejected.clear()
            self._errors.clear()
            self.script = None
            self.default = None
        self.batches.reset()

    @staticmethod
    def follows_skill(marker: str, with_skill: Reply | Script, without_skill: Reply | Script) -> Script:
        """A script that answers `with_skill` when `marker` (e.g. a sentence of the skill's body) occurs anywhere
        in the request's conversation (system, messages, tool results, input), else `without_skill`."""
        def script(request: Recorded) -> Reply | None:
            chosen = with_skill if request.contains(marker) else without_skill
            return chosen if isinstance(chosen, Reply) else chosen(request)
        return script

    @staticmethod
    def by_turn(*turns: Reply) -> Script:
        """A script answering turn i of a conversation with turns[i] (the last one repeats). Counted from the
        request itself, so parallel runs of an agentic CLI each get the whole sequence."""
        def script(request: Recorded) -> Reply | None:
            return turns[min(request.turn, len(turns) - 1)]
        return script

    activation = staticmethod(activation)

    # -- lifecycle -----------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop serving; hung replies end at once, open keep-alive connections are shut. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._server.shutdown()
        self._server.drop_connections()
        self._server.server_close()
        self._thread.join(timeout=5)
        self._server.join_handlers(timeout=5)

    def __enter__(self) -> FakeAPI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- used by the handler -------------------------------------------------------------------------------

    def _record(self, *, method: str, path: str, query: str, headers: dict[str, str], body: bytes) -> Recorded:
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        with self._lock:
            request = Recorded(method=method, path=path, query=query, headers=headers, body=body,
                               json=parsed if isinstance(parsed, dict) else None, index=len(self._requests))
            self._requests.append(request)
        return request

    def _choose(self, request: Recorded) -> Reply | None:
        with self._lock:
            for key in (request.path, None) if request.path in MODEL_PATHS else (request.path,):
                queue = self._queues.get(key)
                if queue:
                    return queue.popleft()
            script, default = self.script, self.default
        if request.path not in MODEL_PATHS:
            return None
        reply = script(request) if script is not None else None
        return reply if reply is not None else default

    def _note_error(self, text: str) -> None:
        with self._lock:
            self._errors.append(text)

    def _reject(self, request: Recorded, problem: str) -> None:
        with self._lock:
            self._rejected.append((request, problem))

    def _mark_unexpected(self, request: Recorded) -> None:
        with self._lock:
            self._unexpected.append(request)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    api: FakeAPI
    tls: ssl.SSLContext | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._connections: set[socket.socket] = set()
        self._handlers: set[threading.Thread] = set()
        self._conn_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conn_lock:
            self._connections.add(request)
        thread = threading.Thread(target=self._serve_one, args=(request, client_address), daemon=True,
                                  name="fakeapi-conn")
        with self._conn_lock:
            self._handlers.add(thread)
        thread.start()

    def _serve_one(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except OSError:
            pass  # resets and broken pipes: clients time out and hang up on purpose in these tests
        except Exception:  # a bug in the fake itself: keep it for the test to see, print it as stdlib does
            self.api._note_error(traceback.format_exc())
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            with self._conn_lock:
                self._connections.discard(request)
                self._handlers.discard(threading.current_thread())

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(10)  # a client that never finishes its handshake does not hold the thread for ever
        with self.tls.wrap_socket(request, server_side=True) as conn:  # the handshake, in this connection's thread
            conn.settimeout(None)
            with self._conn_lock:  # close() shuts the TLS socket now: the plain one gave it its descriptor
                self._connections.discard(request)
                self._connections.add(conn)
            try:
                super().finish_request(conn, client_address)
            finally:
                with self._conn_lock:
                    self._connections.discard(conn)

    def drop_connections(self) -> None:
        with self._conn_lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by its handler

    def join_handlers(self, *, timeout: float) -> None:
        with self._conn_lock:
            handlers = list(self._handlers)
        for thread in handlers:
            thread.join(timeout=timeout)
