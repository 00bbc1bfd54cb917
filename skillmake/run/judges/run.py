"""judge_case: run every judge a case declares over one trial's output and collect the verdicts."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from skillmake.core.redact import redact_text
from skillmake.run.agents.base import Usage
from skillmake.run.judges import anthropic_provider, claude_code_provider, codex_provider, openai_provider, verdict
from skillmake.run.judges.base import (
    Endpoint,
    JudgeCallError,
    JudgeOutcome,
    JudgeRequest,
    ProviderReply,
    ReplyError,
    add_usage,
)
from skillmake.run.judges.render import material
from skillmake.run.judges.resolve import applicable, choose, endpoint
from skillmake.spec.model import Case, Spec

_PROVIDERS = {"anthropic": anthropic_provider.complete, "openai": openai_provider.complete,
              "claude-code": claude_code_provider.complete, "codex": codex_provider.complete}
_AGAIN = "it is judged again on the next build (if this repeats, try another judge.model)"


Call = Callable[[JudgeRequest, Endpoint], ProviderReply]


def judge_requests(spec: Spec, case: Case, *, output: str, files: Mapping[str, bytes]
                   ) -> tuple[Endpoint, list[tuple[Any, JudgeRequest]]] | None:
    """Where the judges of `case` are asked and what each is asked about one trial, in order; None when the case
    has no judge or none can run (judge_case then says why). The requests a batch sends (run/batch.py)."""
    judges = applicable(case)
    if not judges:
        return None
    choice = choose(spec, case)
    if choice.error:
        return None
    shown = material(output, files)
    asked = []
    for judge in judges:
        request = judge.request(spec, case, shown)
        if spec.judge.temperature is not None:
            request = dataclasses.replace(request, temperature=spec.judge.temperature)
        asked.append((judge, request))
    return endpoint(choice), asked


def judge_case(spec: Spec, case: Case, *, output: str, files: Mapping[str, bytes], call: Call | None = None
               ) -> JudgeOutcome:
    """Every judge of `case` over one trial; an empty outcome (no calls) when the case has none. `call` answers
    each request instead of the provider (a batch's results: run/batch.py); the verdicts are read the same way.

    The judges run one after another and stop at the first that cannot give a verdict: the grade is then a
    judge_error, retried on the next build, so judging the rest would only spend money.
    """
    if not applicable(case):
        return JudgeOutcome()
    choice = choose(spec, case)
    if choice.error:
        return JudgeOutcome(error=choice.error)
    asked = judge_requests(spec, case, output=output, files=files)
    assert asked is not None
    target, requests = asked
    entries: list[dict[str, Any]] = []
    usage = Usage()
    for judge, request in requests:
        try:
            reply = (call or _PROVIDERS[target.provider])(request, target)
        except JudgeCallError as err:
            usage = add_usage(usage, Usage(requests=err.requests or 0))
            return _finish(entries, usage, error=_scrub(f"{judge.NAME} judge ({target.model}): {err.message}", target))
        usage = add_usage(usage, reply.usage)
        try:
            data = verdict.read(judge, request, reply)
            entries.extend(judge.verdicts(spec, case, data))
        except ReplyError as err:
            return _finish(entries, usage, error=_scrub(f"{judge.NAME} judge ({target.model}) gave no usable "
                                                        f"verdict: {err}; {_AGAIN}", target))
    return _finish(entries, usage, error=None)


def _finish(entries: list[dict[str, Any]], usage: Usage, *, error: str | None) -> JudgeOutcome:
    scores = [e["score"] for e in entries if e.get("score") is not None]
    return JudgeOutcome(expectations=tuple(entries), score=sum(scores) / len(scores) if scores else None,
                        usage=usage, error=error)


def _scrub(text: str, target: Endpoint) -> str:
    """Error text goes into records and reports: make sure no key ends up there."""
    return redact_text(text, target.secrets)
