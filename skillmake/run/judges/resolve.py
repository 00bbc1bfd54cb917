"""Which provider and model judge a spec (the precedence clauditor documents), and the judge part of a grade key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from skillmake.run.judges import criteria, expectations, rubric, sections
from skillmake.run.judges.base import Endpoint
from skillmake.run.judges.render import RENDER_VERSION, context_of
from skillmake.spec.model import Case, Spec
from skillmake.spec.overrides import ENV, overridden
from skillmake.spec.settings import infer_provider

JUDGES = (rubric, criteria, expectations, sections)  # run in this order
PROVIDERS = ("anthropic", "openai", "claude-code", "codex")
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-5.4", "claude-code": "claude-sonnet-4-6",
                  "codex": "gpt-5.4"}
# The model family each provider runs (infer_provider's answer for its models).
_FAMILY = {"anthropic": "anthropic", "claude-code": "anthropic", "openai": "openai", "codex": "openai"}
PROVIDER_ENV = ENV["judge_provider"]  # SKILLMAKE_JUDGE_PROVIDER
__all__ = ["PROVIDER_ENV", "Choice", "applicable", "choose", "endpoint", "infer_provider", "judge_key"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    """The resolved provider and model; `error` says why no judge can run (the outcome is then judge_error)."""

    provider: str
    model: str
    error: str | None = None
    # Where the provider came from: "--judge-provider", "$SKILLMAKE_JUDGE_PROVIDER", "judge.provider", "judge.model"…
    # (for messages only, so two choices of the same provider and model are equal).
    source: str = field(default="default", compare=False)


def choose(spec: Spec, case: Case | None = None, *, environ: Mapping[str, str] | None = None) -> Choice:
    """The judge, as every run setting (overrides.py): --judge-provider, else $SKILLMAKE_JUDGE_PROVIDER, else
    judge.provider, else inferred from the judge model, else anthropic; then --judge-model, else
    $SKILLMAKE_JUDGE_MODEL, else the case's judge.model (eva), else judge.model, else the provider's default
    (claude-sonnet-4-6 / gpt-5.4).

    Specs of a project already carry these (overrides.apply): looking again here gives the same answer, and
    keeps a spec built without a project honest. A case's model of another family than the written
    judge.provider (gpt-* under anthropic) takes its own provider, as a written judge.model alone would."""
    given = overridden("judge_provider", environ=environ)
    given_model = overridden("judge_model", environ=environ)
    case_model = case.judge_model if case is not None else None
    chosen_model = given_model.value if given_model else case_model or spec.judge.model
    inferred = infer_provider(chosen_model)
    labels = {"command line": "--judge-provider", "environment": f"${PROVIDER_ENV}"}
    # Only a case model that the written provider cannot run overrides it; None leaves every existing choice as is.
    case_provider = (inferred if case_model and not given_model and _FAMILY.get(spec.judge.provider or "")
                     not in (None, inferred) and inferred else None)
    provider, source = next((value, name) for value, name in (
        (given.value if given else None, labels.get(given.source, "") if given else ""),
        (inferred if given_model else None, "the judge model given for this run"),
        (case_provider, f"cases[{case.index if case else 0}].judge.model"),
        (spec.judge.provider, "judge.provider"),
        (inferred, f"cases[{case.index}].judge.model" if case_model and case else "judge.model"),
        ("anthropic", "default")) if value)
    model = chosen_model
    if given and not given_model and inferred not in (None, provider):
        model = None  # a provider chosen for this run does not inherit a written model of another family
    model = model or DEFAULT_MODELS.get(provider, "")
    if provider not in PROVIDERS:
        return Choice(provider=provider, model=model, source=source,
                      error=f"judge provider {provider!r} (from {source}) is not supported; "
                            f"set it to one of {', '.join(PROVIDERS)}")
    return Choice(provider=provider, model=model, source=source)


def endpoint(choice: Choice, *, environ: Mapping[str, str] | None = None) -> Endpoint:
    """Base URL and credentials for the chosen provider, from skillmake.spec.settings (the environment; None lets
    the SDK use its own defaults). The model stays the judge's: settings' ANTHROPIC_MODEL/OPENAI_MODEL pick
    the agents' model, and a judge must not change with them."""
    from skillmake.spec import settings

    # claude-code talks to Anthropic, codex to OpenAI (OPENAI_BASE_URL, OPENAI_API_KEY or CODEX_API_KEY)
    resolved = (settings.resolve_openai(choice.model, environ=environ) if choice.provider in ("openai", "codex")
                else settings.resolve_anthropic(choice.model, environ=environ))
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
    choice = choose(spec, case)
    key: dict[str, Any] = {
        "provider": choice.provider, "model": choice.model,
        "prompts": {j.NAME: f"{j.NAME}@{j.PROMPT_VERSION}" for j in judges}, "render": RENDER_VERSION,
        # The prompts show the task; a changed prompt with a byte-identical output must still re-judge.
        "context": context_of(case),
    }
    # A CLI upgrade may change how it asks the model: re-judge. Only the CLI providers' keys hold a version.
    if choice.provider == "claude-code":
        from skillmake.run.judges.claude_code_provider import version

        key["cli_version"] = version()
    elif choice.provider == "codex":
        from skillmake.run.judges.codex_provider import version as codex_version

        key["cli_version"] = codex_version()
    if rubric.applies(case):
        key["pass_threshold"] = rubric.threshold(spec, case)  # spec-level, so not in the case's grade fragment
    return key
