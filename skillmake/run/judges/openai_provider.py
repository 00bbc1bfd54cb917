"""The OpenAI judge provider: Chat Completions with a strict JSON-schema response format."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from skillmake.core.pricing import batch_price, cost_usd
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
from skillmake.spec.settings import DEFAULT_OPENAI_URL

# Reasoning models (gpt-5 family, o-series) refuse any temperature but the default.
_NO_TEMPERATURE = re.compile(r"^(?:gpt-5|o\d)")


def complete(request: JudgeRequest, endpoint: Endpoint) -> ProviderReply:
    """One verdict from an OpenAI model, retried within the budget; raises JudgeCallError when none can be had.
    Over the standard library (run/wire.py), as the Anthropic judge: no SDK import."""
    secrets = endpoint.secrets  # redacted from every message before it is cut short
    if not endpoint.api_key:
        raise JudgeCallError("no OpenAI API key for the judge; set OPENAI_API_KEY (or CODEX_API_KEY)", requests=0)
    headers = {"authorization": f"Bearer {endpoint.api_key}"}
    # What the SDK would send from the environment: the organisation and project a key is billed to.
    for variable, header in (("OPENAI_ORG_ID", "openai-organization"), ("OPENAI_PROJECT_ID", "openai-project")):
        if os.environ.get(variable):
            headers[header] = os.environ[variable]
    base_url = (endpoint.base_url or DEFAULT_OPENAI_URL).rstrip("/")
    body = params(request, endpoint)

    def attempt(timeout: float) -> dict[str, Any]:
        completion = post(f"{base_url}/chat/completions", body, headers=headers, timeout=timeout, who="OpenAI",
                          base_url=base_url, secrets=secrets, hint=lambda status: _hint(status, request.temperature))
        if not isinstance(completion.get("choices"), list):  # a 200 whose body is not a completion
            raise TransientError(f"the OpenAI API sent an unreadable reply: {brief(completion, secrets)}")
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
    choices = field(completion, "choices") or []
    if not choices:
        raise JudgeCallError("the OpenAI API returned no choices", requests=attempts)
    choice = choices[0]
    if field(choice, "finish_reason") == "length":
        raise JudgeCallError(f"the judge's reply was cut off at max_completion_tokens={request.max_tokens}",
                             requests=attempts)
    message = field(choice, "message")
    refusal = field(message, "refusal")
    if refusal:
        raise JudgeCallError(f"the judge model refused: {brief(refusal, secrets)}", requests=attempts)
    text = str(field(message, "content") or "")
    data: dict[str, Any] | None = None
    try:
        value = json.loads(text)
        data = value if isinstance(value, dict) else None
    except ValueError:
        data = None  # left to the judge's lenient text parsing, which reports the error
    return ProviderReply(data=data, text=text, usage=usage)


def _usage(completion: Any, model: str, attempts: int, *, batch: bool = False) -> Usage:
    raw = field(completion, "usage")
    prompt = field(raw, "prompt_tokens")
    output = field(raw, "completion_tokens")
    cached = field(field(raw, "prompt_tokens_details"), "cached_tokens")
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
