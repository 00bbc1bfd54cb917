"""The providers' batch APIs for judge calls: Anthropic's Message Batches and OpenAI's Batch API (a JSONL file of
Chat Completions requests), each through its own SDK: submit, see how far a batch is, read its results."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from skillmake.run import sdk
from skillmake.run.judges import anthropic_provider, openai_provider
from skillmake.run.judges.anthropic_provider import shared_client
from skillmake.run.judges.base import Endpoint, JudgeCallError, JudgeRequest, ProviderReply, TransientError, brief
from skillmake.run.judges.retry import with_retries

T = TypeVar("T")
PROVIDERS = ("anthropic", "openai")
_RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


class BatchError(Exception):
    """A batch could not be submitted or read (auth, a bad request, the API gone): the run's batch task fails."""


class BatchGone(BatchError):
    """The provider does not know the batch (404): stored by a run against another account or base URL."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    ended: bool
    done: int  # requests that have a result (succeeded, errored, expired, canceled)
    total: int
    state: str  # the provider's own word: in_progress, ended, validating, finalizing, completed, expired …


# A result is {"message": the provider's reply body} or {"error": why there is none}; only messages are reused.
Result = dict[str, Any]


def submit(endpoint: Endpoint, entries: Sequence[tuple[str, JudgeRequest]]) -> str:
    """Create one batch of `entries` (custom id, request); its id."""
    if endpoint.provider == "anthropic":
        return _anthropic_submit(endpoint, entries)
    return _openai_submit(endpoint, entries)


def progress(endpoint: Endpoint, batch_id: str) -> Progress:
    if endpoint.provider == "anthropic":
        batch = _call(endpoint, lambda c, t: c.messages.batches.retrieve(batch_id, timeout=t))
        counts = batch.request_counts
        total = sum(int(getattr(counts, n, 0) or 0) for n in ("processing", "succeeded", "errored", "canceled",
                                                             "expired"))
        return Progress(ended=batch.processing_status == "ended", done=total - int(counts.processing or 0),
                        total=total, state=str(batch.processing_status))
    batch = _call(endpoint, lambda c, t: c.batches.retrieve(batch_id, timeout=t))
    counts = batch.request_counts
    total = int(getattr(counts, "total", 0) or 0)
    done = int(getattr(counts, "completed", 0) or 0) + int(getattr(counts, "failed", 0) or 0)
    ended = batch.status in ("completed", "failed", "expired", "cancelled")
    return Progress(ended=ended, done=total if ended else done, total=total, state=str(batch.status))


def results(endpoint: Endpoint, batch_id: str) -> dict[str, Result]:
    """Every request's result, by custom id, once the batch has ended."""
    if endpoint.provider == "anthropic":
        return _anthropic_results(endpoint, batch_id)
    return _openai_results(endpoint, batch_id)


def reply(result: Result, request: JudgeRequest, endpoint: Endpoint) -> ProviderReply:
    """The verdict of one stored result, read as a synchronous call's reply (priced at batch rates); raises
    JudgeCallError for a request the batch did not answer."""
    if "message" not in result:
        raise JudgeCallError(str(result.get("error") or "the batch gave no result"), requests=1)
    if endpoint.provider == "anthropic":
        anthropic = _sdk(endpoint)
        message = anthropic.types.Message.model_validate(result["message"])
        return anthropic_provider.reply_of(message, request, endpoint, 1, batch=True)
    openai = _sdk(endpoint)
    completion = openai.types.chat.ChatCompletion.model_validate(result["message"])
    return openai_provider.reply_of(completion, request, endpoint, 1, batch=True)


# --- Anthropic ----------------------------------------------------------------------------------------------------

def _anthropic_submit(endpoint: Endpoint, entries: Sequence[tuple[str, JudgeRequest]]) -> str:
    requests = [{"custom_id": cid, "params": anthropic_provider.params(request, endpoint)} for cid, request in entries]
    batch = _call(endpoint, lambda c, t: c.messages.batches.create(requests=requests, timeout=t))
    return str(batch.id)


def _anthropic_results(endpoint: Endpoint, batch_id: str) -> dict[str, Result]:
    out: dict[str, Result] = {}
    for line in _call(endpoint, lambda c, t: list(c.messages.batches.results(batch_id, timeout=t))):
        result = line.result
        kind = getattr(result, "type", None)
        if kind == "succeeded":
            out[line.custom_id] = {"message": result.message.model_dump(mode="json")}
        elif kind == "errored":
            error = getattr(getattr(result, "error", None), "error", None)
            out[line.custom_id] = {"error": f"the batch request failed: {getattr(error, 'type', 'error')}: "
                                            f"{brief(getattr(error, 'message', ''), endpoint.secrets)}"}
        else:  # expired (not processed within 24 hours) or canceled
            out[line.custom_id] = {"error": f"the batch request was {kind} before it was processed"}
    return out


# --- OpenAI -------------------------------------------------------------------------------------------------------

def _openai_submit(endpoint: Endpoint, entries: Sequence[tuple[str, JudgeRequest]]) -> str:
    lines = [json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions",
                         "body": openai_provider.params(request, endpoint)}) for cid, request in entries]
    data = ("\n".join(lines) + "\n").encode()
    upload = _call(endpoint, lambda c, t: c.files.create(file=("judge-batch.jsonl", data), purpose="batch", timeout=t))
    batch = _call(endpoint, lambda c, t: c.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                                          completion_window="24h", timeout=t))
    return str(batch.id)


def _openai_results(endpoint: Endpoint, batch_id: str) -> dict[str, Result]:
    batch = _call(endpoint, lambda c, t: c.batches.retrieve(batch_id, timeout=t))
    out: dict[str, Result] = {}
    for file_id in (batch.output_file_id, batch.error_file_id):
        if not file_id:
            continue
        text: str = _call(endpoint, _content_of(file_id))
        for raw in text.splitlines():
            if not raw.strip():
                continue
            line = json.loads(raw)
            response = line.get("response") or {}
            body = response.get("body")
            if response.get("status_code") == 200 and isinstance(body, dict):
                out[line["custom_id"]] = {"message": body}
                continue
            error = line.get("error") or (body or {}).get("error") or {}
            out[line["custom_id"]] = {"error": f"the batch request failed: {error.get('code') or 'error'}: "
                                               f"{brief(error.get('message', ''), endpoint.secrets)}"}
    return out


def _said(err: Any) -> str:
    """What the API said, from its error body (both providers nest it as {"error": {"message": …}})."""
    body = getattr(err, "body", None)
    inner = body.get("error") if isinstance(body, dict) else None
    message = inner.get("message") if isinstance(inner, dict) else None
    return str(message) if message else str(err.message)


def _content_of(file_id: str) -> Callable[[Any, float], str]:
    return lambda client, timeout: str(client.files.content(file_id, timeout=timeout).text)


# --- the SDKs -----------------------------------------------------------------------------------------------------

def _sdk(endpoint: Endpoint) -> Any:
    try:
        return sdk.load(endpoint.provider, what=f"the {endpoint.provider} batch judge")
    except sdk.MissingSDK as err:
        raise BatchError(err.render()) from err


def _call(endpoint: Endpoint, do: Callable[[Any, float], T]) -> T:
    """One batch API call with the judges' retries (429/5xx/connection), errors as BatchError with the fix."""
    module = _sdk(endpoint)
    secrets = endpoint.secrets
    name = "Anthropic" if endpoint.provider == "anthropic" else "OpenAI"
    try:
        if endpoint.provider == "anthropic":
            token = None if endpoint.api_key else endpoint.auth_token
            client = shared_client(module.Anthropic, api_key=endpoint.api_key, auth_token=token,
                                   base_url=endpoint.base_url, max_retries=0)
        else:
            client = shared_client(module.OpenAI, api_key=endpoint.api_key, base_url=endpoint.base_url, max_retries=0)
    except Exception as err:  # the SDK's own error for a missing key
        raise BatchError(f"cannot create the {name} client for the batch: {brief(err, secrets)}") from err

    def attempt(timeout: float) -> T:
        try:
            return do(client, timeout)
        except module.APIStatusError as err:
            text = f"{name} batch API answered HTTP {err.status_code}: {brief(_said(err), secrets)}"
            if err.status_code in _RETRY_STATUS:
                raise TransientError(text, retry_after=anthropic_provider.retry_after(err.response.headers)) from err
            if err.status_code == 404:
                raise BatchGone(text) from err
            raise JudgeCallError(text) from err
        except module.APIConnectionError as err:
            raise TransientError(f"cannot reach the {name} batch API: {brief(err, secrets)}") from err
        except (module.APIResponseValidationError, ValueError, KeyError) as err:
            raise TransientError(f"the {name} batch API sent an unreadable reply: {brief(err, secrets)}") from err
        except TypeError as err:  # the SDKs raise TypeError when they find no credentials at all
            raise JudgeCallError(f"no {name} credentials for the batch: {brief(err, secrets)}") from err

    try:
        return with_retries(attempt)[0]
    except JudgeCallError as err:
        key = "ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL)" if name == "Anthropic" else "OPENAI_API_KEY (and " \
                                                                                         "OPENAI_BASE_URL)"
        raise BatchError(f"{err.message}; check {key}, or run without --batch") from err
