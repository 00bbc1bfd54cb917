"""The `openai` agent: one Responses API call with the resolved system prompt and the case's prompt."""

from __future__ import annotations

import os
import time
from typing import Any

from skillmake.core.pricing import cost_usd
from skillmake.run import sdk
from skillmake.run.agents import api_call
from skillmake.run.agents.api_call import encode_transcript, error_result, failure_detail
from skillmake.run.agents.base import AgentResult, TrialRequest, Usage
from skillmake.spec.settings import resolve_openai

ENV_HINT = "OPENAI_API_KEY and OPENAI_BASE_URL"


class OpenAIAgent(api_call.ApiAgent):
    """Sends `request.system_prompt` as `instructions` and `request.prompt` as `input` (store=false, so the
    trial leaves nothing stored at OpenAI); `max_output_tokens` only when the spec sets agent.max_tokens."""

    kind = "openai"

    def run(self, request: TrialRequest) -> AgentResult:
        openai = sdk.load("openai", what="the openai agent")

        deadline = time.monotonic() + request.timeout
        settings = resolve_openai(request.agent.model, spec_env=dict(request.agent.env),
                                  environ={**os.environ, **request.env})
        body: dict[str, Any] = {"model": settings.model, "input": request.prompt, "store": False}
        if request.system_prompt:
            body["instructions"] = request.system_prompt
        if request.agent.max_tokens:
            body["max_output_tokens"] = request.agent.max_tokens
        record: dict[str, Any] = {"provider": "openai", "base_url": settings.url, "endpoint": "/responses",
                                  "request": body}
        if not settings.api_key:
            return error_result(record, settings.secrets, "no OpenAI API key: set OPENAI_API_KEY in your environment")
        with openai.OpenAI(api_key=settings.api_key, base_url=settings.url, max_retries=0,
                           timeout=max(request.timeout, 0.001)) as client:
            got = api_call.answer(
                openai, lambda timeout: client.responses.with_raw_response.create(**body, timeout=timeout), record,
                deadline=deadline, base_url=settings.url, provider="openai", env_hint=ENV_HINT,
                secrets=settings.secrets, model=settings.model)
        if isinstance(got, AgentResult):
            return got
        response, requests = got.body, got.requests
        if got.problem or not isinstance(response, dict) or response.get("object") != "response":
            return error_result(record, settings.secrets, f"openai API at {settings.url} answered 200 but "
                                f"{got.problem or 'not with a response object'}; check OPENAI_BASE_URL",
                                requests=requests)
        detail = failure_detail(response)
        if detail is not None:
            return error_result(record, settings.secrets, f"openai response failed: {detail}; the trial is an error "
                                "and runs again next time", requests=requests)
        return AgentResult(outcome="completed", output=_output_text(response),
                           usage=_usage(response, settings.model, requests=requests),
                           transcript=encode_transcript(record, settings.secrets))


def _output_text(response: dict[str, Any]) -> str:
    """The text of every assistant message item, as the SDK's `output_text` joins it."""
    return "".join(part.get("text") or "" for item in response.get("output") or []
                   if isinstance(item, dict) and item.get("type") == "message"
                   for part in item.get("content") or []
                   if isinstance(part, dict) and part.get("type") == "output_text")


def _usage(response: dict[str, Any], model: str, *, requests: int) -> Usage:
    raw = response.get("usage") or {}
    total_in = raw.get("input_tokens")
    cached = (raw.get("input_tokens_details") or {}).get("cached_tokens") or 0
    # OpenAI counts cached tokens inside input_tokens; Usage keeps them apart (see skillmake.core.pricing).
    counts = {"input_tokens": total_in - cached if isinstance(total_in, int) else None,
              "output_tokens": raw.get("output_tokens"), "cache_read_tokens": cached if total_in is not None else None,
              "cache_creation_tokens": None}
    priced_as = response.get("model") if isinstance(response.get("model"), str) else model
    return Usage(**counts, cost_usd=cost_usd(priced_as, **counts), num_turns=1, requests=requests)


AGENT = OpenAIAgent()
