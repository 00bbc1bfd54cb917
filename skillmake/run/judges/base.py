"""What judges exchange: the request a judge builds, the reply a provider returns, the outcome, the errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skillmake.core.redact import redact_text
from skillmake.run.agents.base import Usage

TOOL_NAME = "record_verdict"  # the one tool every judge forces the model to call


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeOutcome:
    """What the judges of one case said about one trial.

    `expectations` are grading.json entries ({"text", "passed", "evidence", "source": "judge", "id", "score"});
    `score` is the mean over the entries that carry one (None when nothing was scored); `error` is set when a
    judge could not produce a verdict (the grade's outcome is then judge_error, never fail).
    """

    expectations: tuple[dict[str, Any], ...] = ()
    score: float | None = None
    usage: Usage = field(default_factory=Usage)
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeRequest:
    """One call to a model: instructions, the material to judge, and the JSON Schema the reply must match."""

    judge: str  # rubric | criteria | expectations | sections
    system: str
    user: str
    schema: dict[str, Any]  # the record_verdict tool's input schema (also the OpenAI response format)
    max_tokens: int = 8192  # a ceiling, not a spend: thinking models need headroom before the tool call
    temperature: float | None = None  # the spec's judge.temperature; None: the provider's own choice
    # How much of `user` is the case's fixed part (instructions, rubric or criteria, expected output, task), before the
    # material judged: the same for every trial of the case, so Anthropic is asked to cache it (OpenAI caches a long
    # shared prefix by itself; the templates put it first).
    shared: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """Where a provider is reached: resolved model, base URL and key (never part of a key or a record)."""

    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    auth_token: str | None = field(default=None, repr=False)  # Anthropic: a bearer token instead of a key

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self.api_key, self.auth_token) if s)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderReply:
    """What a provider returned: the structured data when the model called the tool, else its text."""

    data: dict[str, Any] | None
    text: str
    usage: Usage


class JudgeCallError(Exception):
    """A call failed for good (bad request, auth, budget spent). `requests` counts the HTTP attempts made
    (None: the retry loop fills it in)."""

    def __init__(self, message: str, *, requests: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.requests = requests


class TransientError(Exception):
    """A call failed in a way worth retrying (429, 5xx/529, connection, timeout, a garbled 200)."""

    def __init__(self, message: str, *, retry_after: float | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after
        self.status = status  # the HTTP status, when the server answered one (429/529 tell the rate limiter)


class ReplyError(Exception):
    """The model answered, but not with a verdict that fits the schema (a judge_error, never a fail)."""


def add_usage(a: Usage, b: Usage) -> Usage:
    """The sum of two usages; a field stays None only when both sides are None."""

    def plus(x: Any, y: Any) -> Any:
        return None if x is None and y is None else (x or 0) + (y or 0)

    return Usage(input_tokens=plus(a.input_tokens, b.input_tokens),
                 output_tokens=plus(a.output_tokens, b.output_tokens),
                 cache_read_tokens=plus(a.cache_read_tokens, b.cache_read_tokens),
                 cache_creation_tokens=plus(a.cache_creation_tokens, b.cache_creation_tokens),
                 cost_usd=plus(a.cost_usd, b.cost_usd), num_turns=plus(a.num_turns, b.num_turns),
                 requests=plus(a.requests, b.requests))


def brief(text: object, secrets: tuple[str, ...], limit: int = 300) -> str:
    """`text` on one line, keys redacted, then cut to `limit` characters (redacting first: a cut could
    otherwise leave half a key that no later redaction recognises)."""
    flat = " ".join(redact_text(str(text), secrets).split())
    return flat if len(flat) <= limit else flat[:limit] + "…"
