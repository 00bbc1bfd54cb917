"""The OpenAI judge provider: Chat Completions with a strict JSON-schema response format."""

from __future__ import annotations

import json
import re
from typing import Any

from skillmake.core.pricing import batch_price, cost_usd
from skillmake.run import sdk
from skillmake.run.agents.base import Usage
from skillmake.run.judges.anthropic_provider import retry_after, shared_client
from skillmake.run.judges.base import (
    TOOL_NAME,
    Endpoint,
    JudgeCallError,
    JudgeRequest,
    ProviderReply,
    TransientError,
    brief,
)
from skillmake.run.judges.retry import with_retries

_RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
# Reasoning models (gpt-5 family, o-series) refuse any temperature but the default.
_NO_TEMPERATURE = re.compile(r"^(?:gpt-5|o\d)")


def complete(request: JudgeRequest, endpoint: Endpoint) -> ProviderReply:
    """One verdict from an OpenAI model, retried within the budget; raises JudgeCallError when none can be had."""
    try:
        openai = sdk.load("openai", what="the openai judge")
    except sdk.MissingSDK as err:
        raise JudgeCallError(err.render(), requests=0) from err

    secrets = endpoint.secrets  # redacted from every message before it is cut short
    try:
        client = shared_client(openai.OpenAI, api_key=endpoint.api_key, base_url=endpoint.base_url, max_retries=0)
    except openai.OpenAIError as err:
        raise JudgeCallError(f"cannot create the OpenAI client for the judge: {brief(err, secrets)}; "
                             "set OPENAI_API_KEY", requests=0) from err
    create: Any = client.chat.completions.create  # typed loosely: the schema is a plain dict built at run time
    body = params(request, endpoint)

    def attempt(timeout: float) -> Any:
        try:
            completion = create(**body, timeout=timeout)
        except openai.APIStatusError as err:
            text = f"OpenAI API answered HTTP {err.status_code}: {brief(err.message, secrets)}"
            if err.status_code in _RETRY_STATUS:
                raise TransientError(text, retry_after=retry_after(err.response.headers),
                                     status=err.status_code) from err
            raise JudgeCallError(text + _hint(err.status_code, request.temperature)) from err
        except openai.APIConnectionError as err:  # includes timeouts
            raise TransientError(f"cannot reach the OpenAI API at {client.base_url}: {brief(err, secrets)}") from err
        except (openai.APIResponseValidationError, ValueError) as err:  # a 200 whose body is not a completion
            raise TransientError(f"the OpenAI API sent an unreadable reply: {brief(err, secrets)}") from err
        except openai.OpenAIError as err:
            raise JudgeCallError(f"the OpenAI client failed: {brief(err, secrets)}") from err
        if not hasattr(completion, "choices"):  # the SDK hands back a non-JSON body as plain text
            raise TransientError(f"the OpenAI API sent a non-JSON reply: {brief(completion, secrets)}")
        return completion

    completion, attempts = with_retries(attempt, key=("openai", endpoint.model))
    return reply_of(completion, request, endpoint, attempts)


def params(request: JudgeRequest, endpoint: Endpoint) -> dict[str, Any]:
    """The Chat Completions body of one judge call, as `complete` sends it: what a Batch API request line carries.
    The system prompt and the user turn's fixed part come first, so OpenAI's automatic prefix cache can serve it."""
    # The spec's judge.temperature is sent as written, whatever the model; without one, 0 where the model takes it.
    extra: dict[str, Any] = ({"temperature": request.temperature} if request.temperature is not None
                             else {} if _NO_TEMPERATURE.match(endpoint.model) else {"temperature": 0})
    return {"model": endpoint.model, "max_completion_tokens": request.max_tokens,
            "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": request.user}],
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": TOOL_NAME, "schema": request.schema, "strict": True}},
            **extra}


def reply_of(completion: Any, request: JudgeRequest, endpoint: Endpoint, attempts: int, *,
             batch: bool = False) -> ProviderReply:
    """The verdict a chat completion carries (from a call, or a batch's output line); batch rates with `batch`."""
    secrets = endpoint.secrets
    usage = _usage(completion, endpoint.model, attempts, batch=batch)
    choices = getattr(completion, "choices", None) or []
    if not choices:
        raise JudgeCallError("the OpenAI API returned no choices", requests=attempts)
    choice = choices[0]
    if getattr(choice, "finish_reason", None) == "length":
        raise JudgeCallError(f"the judge's reply was cut off at max_completion_tokens={request.max_tokens}",
                             requests=attempts)
    message = getattr(choice, "message", None)
    refusal = getattr(message, "refusal", None)
    if refusal:
        raise JudgeCallError(f"the judge model refused: {brief(refusal, secrets)}", requests=attempts)
    text = str(getattr(message, "content", None) or "")
    data: dict[str, Any] | None = None
    try:
        value = json.loads(text)
        data = value if isinstance(value, dict) else None
    except ValueError:
        data = None  # left to the judge's lenient text parsing, which reports the error
    return ProviderReply(data=data, text=text, usage=usage)


def _usage(completion: Any, model: str, attempts: int, *, batch: bool = False) -> Usage:
    raw = getattr(completion, "usage", None)
    prompt = getattr(raw, "prompt_tokens", None)
    output = getattr(raw, "completion_tokens", None)
    cached = getattr(getattr(raw, "prompt_tokens_details", None), "cached_tokens", None)
    prompt = prompt if isinstance(prompt, int) else None
    output = output if isinstance(output, int) else None
    cached = cached if isinstance(cached, int) else None
    # OpenAI counts cached tokens inside prompt_tokens; Usage keeps the two apart (as Anthropic reports them).
    fresh = max(prompt - (cached or 0), 0) if prompt is not None else None
    return Usage(input_tokens=fresh, output_tokens=output, cache_read_tokens=cached,
                 cost_usd=batch_price(cost_usd(model, input_tokens=fresh, output_tokens=output,
                                               cache_read_tokens=cached), batch),
                 requests=attempts)


def _hint(status: int, temperature: float | None = None) -> str:
    if status in (401, 403):
        return "; check OPENAI_API_KEY (and OPENAI_BASE_URL)"
    if status == 404:
        return "; check the judge model name (judge.model) and OPENAI_BASE_URL"
    if temperature is not None:
        return "; check the judge settings (judge.model, judge.provider, judge.temperature: reasoning models " \
               "(gpt-5, o-series) take none)"
    return "; check the judge settings (judge.model, judge.provider)"
