"""One model API call with a bounded retry budget, its failures turned into outcomes (shared by API agents).

The SDKs' own retries are switched off (max_retries=0) so every attempt is counted and the whole call,
waits included, stays inside the trial's timeout: 408/409/429/5xx/529 and connection failures are retried
up to MAX_ATTEMPTS times, waiting what the server's retry-after(-ms) header asks (else exponential backoff);
a wait that would pass the deadline ends the call at once as an error instead of sleeping through it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import orjson

from skillmake.core.redact import redact_bytes
from skillmake.core.redact import redact_text as scrub
from skillmake.run import ratelimit
from skillmake.run.agents.base import AgentResult, Usage
from skillmake.spec.model import AgentConfig

MAX_ATTEMPTS = 4
BACKOFF_BASE = 0.5  # seconds; doubled per attempt
BACKOFF_CAP = 8.0
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})

_sleep = time.sleep  # tests replace it to record waits instead of sleeping


@dataclass(frozen=True, slots=True, kw_only=True)
class CallResult:
    """The response object (None when the call failed), the outcome-to-be and what the attempts saw."""

    response: Any
    outcome: str  # "completed" | "error" | "timeout"
    error: str | None
    attempts: int
    history: tuple[dict[str, Any], ...]  # one entry per failed attempt: status/error and the wait after it


def retry_after(headers: Any) -> float | None:
    """Seconds the server asked us to wait: retry-after-ms, else retry-after in seconds or as an HTTP date."""
    return ratelimit.retry_after(headers)


def read_json(raw: Any, secrets: tuple[str, ...] = ()) -> tuple[Any, str | None]:
    """The JSON body of a raw SDK response (`.with_raw_response`), or None and why it is not JSON (with the
    start of the body, keys redacted before it is cut: a cut key would no longer be recognised)."""
    http = raw.http_response
    try:
        text = http.text
    except Exception as err:  # a body cut off mid-way surfaces here as the HTTP library's own error type
        return None, scrub(f"the response body could not be read ({type(err).__name__}: {err})", secrets)
    try:
        return orjson.loads(text), None
    except orjson.JSONDecodeError:
        kind = http.headers.get("content-type", "no content-type")
        return None, f"the response is not JSON ({kind}: {scrub(text, secrets)[:80]!r})"


def failure_detail(response: Any) -> str | None:
    """The message of a 200 body that reports a failure: Anthropic's {"type": "error"} or a Responses object
    with status "failed" (what a gateway or an overloaded backend sometimes sends); None otherwise."""
    if not isinstance(response, dict):
        return None
    if response.get("type") == "error" or response.get("status") == "failed":
        error = response.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        return str(message) if message else "no reason given"
    return None


def encode_transcript(record: dict[str, Any], secrets: Iterable[str]) -> bytes:
    """The transcript artifact: request (no headers, so no key), response and attempts, as indented JSON."""
    data = orjson.dumps(record, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
                        default=repr)
    return redact_bytes(data, secrets)


def error_result(record: dict[str, Any], secrets: tuple[str, ...], message: str, *, outcome: str = "error",
                 requests: int = 0) -> AgentResult:
    """A failed API trial: the redacted error and whatever transcript there is."""
    return AgentResult(outcome=outcome, output="", error=scrub(message, secrets),
                       transcript=encode_transcript(record, secrets), usage=Usage(requests=requests))


class ApiAgent:
    """What the API agents (anthropic, openai) share beyond the call itself."""

    def version(self, config: AgentConfig) -> str | None:
        return None  # the SDK's version does not change what the model answers, so it stays out of the key


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """A call that completed: its JSON body (None with `problem` when it is not JSON) and how many requests it took."""

    body: Any
    problem: str | None
    requests: int


def answer(sdk: ModuleType, send: Callable[[float], Any], record: dict[str, Any], *, deadline: float, base_url: str,
           provider: str, env_hint: str, secrets: tuple[str, ...], model: str) -> Answer | AgentResult:
    """One API agent's call (`call`), its attempts noted in `record`; a call that did not complete is the trial's
    error result already. Called inside the SDK client's `with`: the body is read while it is open."""
    result = call(sdk, send, deadline=deadline, base_url=base_url, provider=provider, env_hint=env_hint,
                  secrets=secrets, model=model)
    body, problem = read_json(result.response, secrets) if result.response is not None else (None, None)
    record.update(attempts=result.attempts, failed_attempts=list(result.history))
    if result.outcome != "completed":
        return error_result(record, secrets, result.error or f"{provider} API call failed", outcome=result.outcome,
                            requests=result.attempts)
    record["response"] = body
    return Answer(body=body, problem=problem, requests=result.attempts)


def _status_message(err: Any) -> str:
    body = getattr(err, "body", None)
    detail = body.get("error") if isinstance(body, dict) else None
    if isinstance(detail, dict):
        kind = detail.get("type") or detail.get("code") or ""
        message = detail.get("message") or ""
        return f"HTTP {err.status_code} {kind}: {message}".replace("  ", " ").strip()
    return f"HTTP {err.status_code}: {getattr(err, 'message', err)}"


def call(sdk: ModuleType, send: Callable[[float], Any], *, deadline: float, base_url: str, provider: str,
         env_hint: str, secrets: Iterable[str] = (), model: str = "") -> CallResult:
    """Call `send(timeout_seconds)` until it returns, fails for good, or `deadline` (time.monotonic) passes.

    `sdk` is the anthropic or openai module (both name their errors alike). Never raises for an API,
    network or parse failure: those come back as outcome "error" (or "timeout") with a message that ends
    with what to check. Each attempt holds a slot of the run's rate limiter for (provider, model) and reports
    the status it got (ratelimit.py): a 429/529 with a retry-after pauses every trial and judge of that model.
    """
    secrets = tuple(secrets)
    history: list[dict[str, Any]] = []
    attempt = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return CallResult(response=None, outcome="timeout", attempts=attempt, history=tuple(history),
                              error=f"{provider} API call did not finish within the trial's timeout")
        attempt += 1
        headers = None
        try:
            return CallResult(response=_limited(sdk, send, provider=provider, model=model, deadline=deadline),
                              outcome="completed", error=None, attempts=attempt, history=tuple(history))
        except ratelimit.NoSlot as err:
            return CallResult(response=None, outcome="timeout", attempts=attempt - 1, history=tuple(history),
                              error=f"{provider} API: no request slot before the trial's timeout ({err})")
        except sdk.APITimeoutError:
            return CallResult(response=None, outcome="timeout", attempts=attempt, history=tuple(history),
                              error=f"{provider} API at {base_url} did not answer within the trial's timeout")
        except sdk.APIStatusError as err:
            message = _status_message(err)
            retryable = err.status_code in RETRY_STATUSES or err.status_code >= 500
            headers = err.response.headers
            if err.status_code in (401, 403):
                message += f"; check {env_hint}"
            elif not retryable:
                message += "; check the agent's model and max_tokens in the spec"
        except sdk.APIConnectionError as err:
            message = f"could not reach {base_url}: {err.__cause__ or err}"
            retryable = True
        except sdk.APIResponseValidationError as err:
            return _failed(f"{provider} API at {base_url} sent a body that is not the expected JSON ({err}); "
                           f"check the base URL", attempt, history, secrets)
        except sdk.APIError as err:
            return _failed(f"{provider} API error: {err}", attempt, history, secrets)
        wait = retry_after(headers)
        if wait is None:
            wait = min(BACKOFF_BASE * 2 ** (attempt - 1), BACKOFF_CAP)
        history.append({"attempt": attempt, "error": scrub(message, secrets), "wait_s": wait})
        if not retryable:
            return _failed(f"{provider} API: {message}", attempt, history, secrets)
        if attempt >= MAX_ATTEMPTS:
            return _failed(f"{provider} API: {message} (after {attempt} attempts); the trial is an error and "
                           "runs again next time", attempt, history, secrets)
        if time.monotonic() + wait >= deadline:
            return _failed(f"{provider} API: {message}; waiting {wait:g}s to retry would pass the trial's "
                           "timeout (raise the case's timeout, or run again later)", attempt, history, secrets)
        _sleep(wait)


def _limited(sdk: ModuleType, send: Callable[[float], Any], *, provider: str, model: str, deadline: float) -> Any:
    """One attempt inside a rate-limiter slot, its status reported; the wait for the slot counts against `deadline`."""
    with ratelimit.slot(provider, model, deadline=deadline) as slot:
        try:
            response = send(max(deadline - time.monotonic(), 0.001))
        except sdk.APIStatusError as err:
            slot.report(err.status_code, retry_after(err.response.headers))
            raise
        slot.report(200)
        return response


def _failed(message: str, attempts: int, history: list[dict[str, Any]], secrets: Iterable[str]) -> CallResult:
    return CallResult(response=None, outcome="error", error=scrub(message, secrets), attempts=attempts,
                      history=tuple(history))
