"""The Anthropic judge provider: the Messages API with forced use of the record_verdict tool."""

from __future__ import annotations

import atexit
import collections
import hashlib
import os
import re
import threading
from collections.abc import Callable
from typing import Any

import orjson

from skillmake.core.pricing import batch_price, cost_usd
from skillmake.run import ratelimit
from skillmake.run.agents.base import Usage
from skillmake.run.judges.base import (
    TOOL_NAME,
    Endpoint,
    JudgeCallError,
    JudgeRequest,
    ProviderReply,
    TransientError,
    brief,
)
from skillmake.run.judges.post import field, post
from skillmake.run.judges.retry import with_retries
from skillmake.spec.settings import DEFAULT_ANTHROPIC_URL

API_VERSION = "2023-06-01"  # the anthropic-version header the SDKs send
# A 400 that names these is a model or a schema strict tool use cannot serve: ask again without it.
_STRICT_REFUSED = re.compile(r"strict|grammar|schema|structured", re.IGNORECASE)


def complete(request: JudgeRequest, endpoint: Endpoint) -> ProviderReply:
    """One verdict from Claude, retried within the budget; raises JudgeCallError when none can be had.

    The Messages API is called over the standard library (run/wire.py), not the SDK: importing anthropic costs ~1.6 s
    of CPU per process, and a judge needs one POST and its JSON. Batches (batch_providers.py) still use the SDK."""
    secrets = endpoint.secrets  # redacted from every message before it is cut short
    headers = {"anthropic-version": API_VERSION}
    if endpoint.api_key:
        headers["x-api-key"] = endpoint.api_key
    elif endpoint.auth_token:
        headers["authorization"] = f"Bearer {endpoint.auth_token}"
    else:
        raise JudgeCallError("no Anthropic credentials for the judge; set ANTHROPIC_API_KEY "
                             "(or ANTHROPIC_AUTH_TOKEN)", requests=0)
    base_url = (endpoint.base_url or DEFAULT_ANTHROPIC_URL).rstrip("/")
    # No temperature unless the spec sets one (current models may reject it); thinking is disabled explicitly because
    # a forced tool_choice is refused while it is on (and it is on by default on the newest models).
    body = params(request, endpoint)
    tool = body["tools"][0]

    def strict_refused(status: int, message: str) -> bool:
        if status == 400 and tool.get("strict") and _STRICT_REFUSED.search(message):
            del tool["strict"]  # an older model or a proxy without strict tool use; the reply is checked anyway
            return True
        return False

    def attempt(timeout: float) -> dict[str, Any]:
        message = post(f"{base_url}/v1/messages", body, headers=headers, timeout=timeout, who="Anthropic",
                       base_url=base_url, secrets=secrets, retry=strict_refused,
                       hint=lambda status: _hint(status, request.temperature))
        if not isinstance(message.get("content"), list):  # a 200 whose body is not a message
            raise TransientError(f"the Anthropic API sent an unreadable reply: {brief(message, secrets)}")
        return message

    message, attempts = with_retries(attempt, key=("anthropic", endpoint.model))
    return reply_of(message, request, endpoint, attempts)


def _tool(request: JudgeRequest) -> dict[str, Any]:
    # Strict tool use makes the API hold the tool input to the schema (grammar-constrained sampling); the
    # reply is still read leniently (see verdict.py), since a model or gateway without it answers loosely.
    return {"name": TOOL_NAME, "description": "Record the verdict. Call this exactly once.",
            "input_schema": request.schema, "strict": True}


def params(request: JudgeRequest, endpoint: Endpoint) -> dict[str, Any]:
    """The Messages API body of one judge call, as `complete` sends it: what a Message Batches request carries."""
    body: dict[str, Any] = {
        "model": endpoint.model, "max_tokens": request.max_tokens, "system": request.system,
        "messages": [{"role": "user", "content": _content(request, endpoint.model)}], "tools": [_tool(request)],
        "tool_choice": {"type": "tool", "name": TOOL_NAME}, "thinking": {"type": "disabled"}}
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


def reply_of(message: Any, request: JudgeRequest, endpoint: Endpoint, attempts: int, *,
             batch: bool = False) -> ProviderReply:
    """The verdict a Message carries (from a call, or a batch's result), priced at batch rates with `batch`."""
    usage = _usage(message, endpoint.model, attempts, batch=batch)
    if field(message, "stop_reason") == "max_tokens":
        raise JudgeCallError(f"the judge's reply was cut off at max_tokens={request.max_tokens}", requests=attempts)
    data: dict[str, Any] | None = None
    texts: list[str] = []
    for block in field(message, "content") or []:
        kind = field(block, "type")
        if kind == "tool_use" and field(block, "name") == TOOL_NAME and data is None:
            value = field(block, "input")
            data = value if isinstance(value, dict) else None
        elif kind == "text":
            texts.append(str(field(block, "text") or ""))
    return ProviderReply(data=data, text="\n".join(texts), usage=usage)


# One SDK client per set of options, shared by every call of the process (the batch judges', batch_providers.py: the
# synchronous judges use no SDK): making a client loads the CA bundle (~0.16 s of CPU), and the SDKs' clients are safe
# to use from many threads at once.
_CLIENTS: collections.OrderedDict[tuple[int, Any, str], Any] = collections.OrderedDict()
_CLIENTS_LOCK = threading.Lock()
_MAX_CLIENTS = 8  # a process talks to one or two endpoints; a test session to many short-lived fakes


def shared_client(make: Callable[..., Any], **options: Any) -> Any:
    """The client `make(**options)` made once per process and reused: for both providers' batches.

    Keyed by a digest of the options and the whole environment (the SDKs read keys, base URLs, proxies and
    credential files through it when a client is made), so a changed setting gets a new client and no key is held
    anywhere but in the client itself; and by process id, so a forked worker never shares its parent's sockets.
    A client pushed out of the cache is closed at once (left to garbage collection, its pooled sockets would be
    reported unclosed at a random later moment); with eight endpoints kept, one still in use is not pushed out.
    """
    seen = repr((sorted(options.items()), sorted(os.environ.items())))
    key = (os.getpid(), make, hashlib.sha256(seen.encode()).hexdigest())
    evicted = None
    with _CLIENTS_LOCK:  # held while a client is made, so that threads starting together make one, not several
        client = _CLIENTS.get(key)
        if client is None:
            client = _CLIENTS[key] = make(**options)
            if len(_CLIENTS) > _MAX_CLIENTS:
                evicted = _CLIENTS.popitem(last=False)[1]
        else:
            _CLIENTS.move_to_end(key)
    if evicted is not None:
        _close(evicted)
    return client


def _close(client: Any) -> None:
    try:
        client.close()
    except Exception:  # closing must never turn a finished call into a traceback
        pass


@atexit.register
def _close_clients() -> None:
    """The pools' sockets, closed at exit rather than left to the interpreter's teardown (this process's only)."""
    with _CLIENTS_LOCK:
        mine = [client for (pid, _, _), client in _CLIENTS.items() if pid == os.getpid()]
        _CLIENTS.clear()
    for client in mine:
        _close(client)


def _usage(message: Any, model: str, attempts: int, *, batch: bool = False) -> Usage:
    raw = field(message, "usage")
    tokens = {name: field(raw, name) for name in
              ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")}
    ints = {k: v if isinstance(v, int) else None for k, v in tokens.items()}
    return Usage(input_tokens=ints["input_tokens"], output_tokens=ints["output_tokens"],
                 cache_read_tokens=ints["cache_read_input_tokens"],
                 cache_creation_tokens=ints["cache_creation_input_tokens"],
                 cost_usd=batch_price(cost_usd(model, input_tokens=ints["input_tokens"],
                                               output_tokens=ints["output_tokens"],
                                               cache_read_tokens=ints["cache_read_input_tokens"],
                                               cache_creation_tokens=ints["cache_creation_input_tokens"]), batch),
                 requests=attempts)


def retry_after(headers: Any) -> float | None:
    """Seconds the server asked us to wait: retry-after-ms, then retry-after in seconds or as an HTTP date; else
    None (ratelimit.retry_after)."""
    return ratelimit.retry_after(headers)


def _hint(status: int, temperature: float | None = None) -> str:
    if status in (401, 403):
        return "; check ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL)"
    if status == 404:
        return "; check the judge model name (judge.model) and ANTHROPIC_BASE_URL"
    if temperature is not None:
        return "; check the judge settings (judge.model, judge.provider, judge.temperature: remove it if the model " \
               "takes none)"
    return "; check the judge settings (judge.model, judge.provider)"


def cache_minimum(model: str) -> int:
    """The shortest prefix, in tokens, Anthropic caches for `model` (its prompt-caching docs): 4,096 for Opus 4.5 and
    later and Haiku 4.5, 2,048 for Haiku 3 and 3.5, 1,024 for the others (Sonnet, Opus 4 and 4.1). A shorter prefix
    marked cacheable is answered as if it were not marked: no cache write, no read, no saving."""
    name = model.lower()
    if "haiku" in name:
        return 4096 if re.search(r"haiku-[4-9]", name) else 2048
    if re.search(r"opus-4-[5-9]|opus-[5-9]", name):
        return 4096
    return 1024


# The tool-use instructions the API adds before the tools when a request has any (its docs: 313-346 tokens).
_TOOL_FRAMING_TOKENS = 400


def can_be_cached(request: JudgeRequest, model: str) -> bool:
    """Whether the fixed part of a judge's prompt could be long enough to be cached. The cached prefix is the tool,
    the system prompt and the fixed part of the user turn; no token is shorter than one byte of UTF-8, so a prefix of
    fewer bytes (plus the API's tool framing) than the model's minimum is certainly not cached — then it is not
    marked, and no saving is suggested where none can come."""
    size = (len(orjson.dumps(_tool(request))) + len(request.system.encode()) + _TOOL_FRAMING_TOKENS
            + len(request.user[:request.shared].encode()))
    return size >= cache_minimum(model)


def _content(request: JudgeRequest, model: str) -> str | list[dict[str, Any]]:
    """The user turn: its fixed part (request.shared characters) as a cacheable block, then the material judged —
    the same text as one string, so the prompt the judge reads is unchanged. Sent as one string when the fixed part
    cannot be long enough to be cached (can_be_cached)."""
    if not 0 < request.shared < len(request.user) or not can_be_cached(request, model):
        return request.user
    return [{"type": "text", "text": request.user[:request.shared], "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": request.user[request.shared:]}]
