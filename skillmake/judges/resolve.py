"""Which provider and model judge a spec (the precedence clauditor documents), and the judge part of a grade key."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model import Case, Spec
from . import criteria, expectations, rubric, sections
from .base import Endpoint
from .render import RENDER_VERSION, context_of

JUDGES = (rubric, criteria, expectations, sections)  # run in this order
PROVIDERS = ("anthropic", "openai", "claude-code")  # the ones implemented; the schema also names codex
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-5.4", "claude-code": "claude-sonnet-4-6"}
PROVIDER_ENV = "SKILLMAKE_JUDGE_PROVIDER"
_OPENAI_MODEL = re.compile(r"^(?:gpt-|o\d)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    """The resolved provider and model; `error` says why no judge can run (the outcome is then judge_error)."""

    provider: str
    model: str
    error: str | None = None
    # Where the provider came from: "judge.provider", "$SKILLMAKE_JUDGE_PROVIDER", "judge.model" or "default"
    # (for messages only, so two choices of the same provider and model are equal).
    source: str = field(default="default", compare=False)


def infer_provider(model: str | None) -> str | None:
    """claude-* → anthropic, gpt-* / o<digit>* → openai, else None."""
    if not model:
        return None
    if model.startswith("claude-"):
        return "anthropic"
    if _OPENAI_MODEL.match(model):
        return "openai"
    return None


def choose(spec: Spec, *, environ: Mapping[str, str] | None = None) -> Choice:
    """judge.provider, else $SKILLMAKE_JUDGE_PROVIDER, else inferred from judge.model, else anthropic; then
    judge.model, else the provider's default (claude-sonnet-4-6 / gpt-5.4)."""
    env = (os.environ if environ is None else environ).get(PROVIDER_ENV, "").strip() or None
    inferred = infer_provider(spec.judge.model)
    provider, source = next((value, name) for value, name in (
        (spec.judge.provider, "judge.provider"), (env, f"${PROVIDER_ENV}"), (inferred, "judge.model"),
        ("anthropic", "default")) if value)
    model = spec.judge.model or DEFAULT_MODELS.get(provider, "")
    if provider not in PROVIDERS:
        return Choice(provider=provider, model=model, source=source,
                      error=f"judge provider {provider!r} (from {source}) is not supported; "
                            f"set it to one of {', '.join(PROVIDERS)}")
    return Choice(provider=provider, model=model, source=source)


def endpoint(choice: Choice, *, environ: Mapping[str, str] | None = None) -> Endpoint:
    """Base URL and credentials for the chosen provider, from skillmake.settings (the environment; None lets
    the SDK use its own defaults). The model stays the judge's: settings' ANTHROPIC_MODEL/OPENAI_MODEL pick
    the agents' model, and a judge must not change with them."""
    from .. import settings

    resolved = (settings.resolve_openai(choice.model, environ=environ) if choice.provider == "openai"
                else settings.resolve_anthropic(choice.model, environ=environ))  # claude-code talks to Anthropic
    return Endpoint(provider=choice.provider, model=choice.model, base_url=resolved.base_url,
                    api_key=resolved.api_key, auth_token=resolved.auth_token)


def applicable(case: Case) -> list[Any]:
    return [j for j in JUDGES if j.applies(case)]


def judge_key(spec: Spec, case: Case) -> dict[str, Any]:
    """The judge config part of a grade key: provider, resolved model, prompt versions, and what else the
    prompts show or the verdicts depend on. Empty when the case has no judge. Never a key or a URL."""
    judges = applicable(case)
    if not judges:
        return {}
    choice = choose(spec)
    key: dict[str, Any] = {
        "provider": choice.provider, "model": choice.model,
        "prompts": {j.NAME: f"{j.NAME}@{j.PROMPT_VERSION}" for j in judges}, "render": RENDER_VERSION,
        # The prompts show the task; a changed prompt with a byte-identical output must still re-judge.
        "context": context_of(case),
    }
    if choice.provider == "claude-code":  # a CLI upgrade may change how it asks the model: re-judge
        from .claude_code_provider import version

        key["cli_version"] = version()
    if rubric.applies(case):
        key["pass_threshold"] = rubric.threshold(spec, case)  # spec-level, so not in the case's grade fragment
    return key
