"""One attempt of a judge's API call over run/wire.py (no SDK): no answer, an error status and a 200 that is not JSON
become TransientError or JudgeCallError, each message naming the provider and keeping keys out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from skillmake import __version__
from skillmake.run import ratelimit, wire
from skillmake.run.judges.base import JudgeCallError, TransientError, brief

RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
USER_AGENT = f"skillmake/{__version__}"


def post(url: str, body: Any, *, headers: Mapping[str, str], timeout: float, who: str, base_url: str,
         secrets: tuple[str, ...], hint: Callable[[int], str],
         retry: Callable[[int, str], bool] = lambda status, message: False) -> dict[str, Any]:
    """POST `body`; the JSON object of a 200. A status in RETRY_STATUS (or one `retry(status, message)` accepts) is
    a TransientError carrying the server's retry-after and the status (for the rate limiter); any other error status
    a JudgeCallError ending with `hint(status)`; no answer, or a 200 that is not a JSON object, a TransientError."""
    try:
        response = wire.post_json(url, body, headers={"user-agent": USER_AGENT, **headers}, timeout=timeout)
    except wire.WireError as err:  # includes timeouts
        if err.settled:  # an untrusted certificate, a refused tunnel: the same again on every attempt; its fix last
            raise JudgeCallError(f"cannot reach the {who} API at {base_url}: {brief(err, secrets, 1000)}") from err
        raise TransientError(f"cannot reach the {who} API at {base_url}: {brief(err, secrets)}") from err
    if response.status >= 400:
        message = error_message(response)
        text = f"{who} API answered HTTP {response.status}: {brief(message, secrets)}"
        if retry(response.status, message):
            raise TransientError(text, retry_after=0.0)
        if response.status in RETRY_STATUS:
            raise TransientError(text, retry_after=ratelimit.retry_after(response.headers), status=response.status)
        raise JudgeCallError(text + hint(response.status))
    try:
        data = orjson.loads(response.body)
    except orjson.JSONDecodeError:
        kind = response.get("content-type") or "no content-type"
        raise TransientError(f"the {who} API sent a non-JSON reply ({kind}): "
                             f"{brief(response.body.decode('utf-8', 'replace'), secrets)}") from None
    if not isinstance(data, dict):
        raise TransientError(f"the {who} API sent an unreadable reply: {brief(data, secrets)}")
    return data


def error_message(response: wire.Response) -> str:
    """What an error body says: the providers' {"error": {"type", "message"}}, else the start of the body."""
    try:
        data = orjson.loads(response.body)
    except orjson.JSONDecodeError:
        return response.body.decode("utf-8", "replace")[:300] or "(empty body)"
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        kind = error.get("type") or error.get("code")
        return f"{kind}: {error['message']}" if kind else str(error["message"])
    return response.body.decode("utf-8", "replace")[:300]


def field(obj: Any, name: str) -> Any:
    """`obj[name]` of a JSON object, or the attribute of an SDK object (a batch's results are read through the SDK)."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)
