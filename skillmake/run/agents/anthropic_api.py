"""The `anthropic` agent: one Messages API call with the resolved system prompt and the case's prompt."""

from __future__ import annotations

import os
import time
from typing import Any

from skillmake.core.pricing import cost_usd
from skillmake.run import sdk
from skillmake.run.agents import api_call
from skillmake.run.agents.api_call import encode_transcript, error_result, failure_detail
from skillmake.run.agents.base import AgentResult, TrialRequest, Usage
from skillmake.spec.settings import DEFAULT_MAX_TOKENS, resolve_anthropic

ENV_HINT = "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) and ANTHROPIC_BASE_URL"


class AnthropicAgent(api_call.ApiAgent):
    """Sends `request.system_prompt` as `system` and `request.prompt` as the one user message."""

    kind = "anthropic"

    def run(self, request: TrialRequest) -> AgentResult:
        anthropic = sdk.load("anthropic", what="the anthropic agent")

        deadline = time.monotonic() + request.timeout
        settings = resolve_anthropic(request.agent.model, spec_env=dict(request.agent.env),
                                     environ={**os.environ, **request.env})
        body: dict[str, Any] = {"model": settings.model,
                                "max_tokens": request.agent.max_tokens or DEFAULT_MAX_TOKENS,
                                "messages": [{"role": "user", "content": request.prompt}]}
        if request.system_prompt and request.system_prompt.strip():  # a body-less SKILL.md's "\n": the API's 400
            # The skill is the same for every trial of a spec: marked cacheable, the trials after the first read it
            # at a tenth of the input price (Anthropic caches a prefix of 1,024+ tokens; a shorter one is simply not
            # cached). Cache reads and writes are recorded and priced apart (pricing.py).
            body["system"] = [{"type": "text", "text": request.system_prompt, "cache_control": {"type": "ephemeral"}}]
        record: dict[str, Any] = {"provider": "anthropic", "base_url": settings.url, "endpoint": "/v1/messages",
                                  "request": body}
        if not settings.secrets:
            return error_result(record, settings.secrets, "no Anthropic credential: set ANTHROPIC_API_KEY in your "
                                                    "environment (or ANTHROPIC_AUTH_TOKEN)")
        credential = ({"api_key": settings.api_key} if settings.api_key else {"auth_token": settings.auth_token})
        with anthropic.Anthropic(base_url=settings.url, max_retries=0, timeout=max(request.timeout, 0.001),
                                 **credential) as client:
            got = api_call.answer(
                anthropic, lambda timeout: client.messages.with_raw_response.create(**body, timeout=timeout), record,
                deadline=deadline, base_url=settings.url, provider="anthropic", env_hint=ENV_HINT,
                secrets=settings.secrets, model=settings.model)
        if isinstance(got, AgentResult):
            return got
        response, requests = got.body, got.requests
        detail = failure_detail(response)
        if detail is not None:
            return error_result(record, settings.secrets, f"anthropic API answered 200 with an error: {detail}; "
                                "the trial is an error and runs again next time", requests=requests)
        if got.problem or not isinstance(response, dict) or response.get("type") != "message":
            return error_result(record, settings.secrets, f"anthropic API at {settings.url} answered 200 but "
                                f"{got.problem or 'not with a message'}; check ANTHROPIC_BASE_URL", requests=requests)
        text = "".join(block.get("text") or "" for block in response.get("content") or []
                       if isinstance(block, dict) and block.get("type") == "text")
        usage = _usage(response, settings.model, requests=requests)
        return AgentResult(outcome="completed", output=text, usage=usage,
                           transcript=encode_transcript(record, settings.secrets))


def _usage(response: dict[str, Any], model: str, *, requests: int) -> Usage:
    raw = response.get("usage") or {}
    counts = {"input_tokens": raw.get("input_tokens"), "output_tokens": raw.get("output_tokens"),
              "cache_read_tokens": raw.get("cache_read_input_tokens"),
              "cache_creation_tokens": raw.get("cache_creation_input_tokens")}
    priced_as = response.get("model") if isinstance(response.get("model"), str) else model
    return Usage(**counts, cost_usd=cost_usd(priced_as, **counts), num_turns=1, requests=requests)


AGENT = AnthropicAgent()
