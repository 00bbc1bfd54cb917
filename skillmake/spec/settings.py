"""Where model calls go: one function per provider resolving the model, base URL and API key.

Order, for each value: the spec (the agent's `model`, and a base URL in the agent's `env`), then the
environment, then the default below. API keys come from the environment only, never from a spec, so a spec
file (and the trial key built from it) never holds a secret.

- anthropic: model ANTHROPIC_MODEL, base URL ANTHROPIC_BASE_URL, key ANTHROPIC_API_KEY (or
  ANTHROPIC_AUTH_TOKEN); defaults claude-sonnet-4-6 and https://api.anthropic.com.
- openai: model OPENAI_MODEL, base URL OPENAI_BASE_URL, key OPENAI_API_KEY (or CODEX_API_KEY); defaults
  gpt-5.4-mini and https://api.openai.com/v1.

An Anthropic base URL has no /v1 (the client appends /v1/messages); an OpenAI one ends in /v1.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from skillmake.spec.model import AgentConfig

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6"
DEFAULT_OPENAI_MODEL = "gpt-5.4-mini"
DEFAULT_ANTHROPIC_URL = "https://api.anthropic.com"
DEFAULT_OPENAI_URL = "https://api.openai.com/v1"
DEFAULT_MAX_TOKENS = 8192  # anthropic requires max_tokens; the spec's agent.max_tokens overrides it
_OPENAI_MODEL = re.compile(r"^(?:gpt-|o\d)")


def infer_provider(model: str | None) -> str | None:
    """The provider a model name belongs to: claude-* → anthropic, gpt-* / o<digit>* → openai, else None."""
    if not model:
        return None
    if model.startswith("claude-"):
        return "anthropic"
    if _OPENAI_MODEL.match(model):
        return "openai"
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSettings:
    """A provider's resolved settings. Keys are kept out of repr() so they never reach a log by accident."""

    provider: str  # "anthropic" | "openai"
    model: str
    model_source: str  # "spec" | "environment" | "default"
    base_url: str | None  # None: not configured, the provider's own endpoint (see `url`)
    api_key: str | None = field(default=None, repr=False)
    auth_token: str | None = field(default=None, repr=False)  # Anthropic: a bearer token instead of a key

    @property
    def url(self) -> str:
        """The base URL the SDK is given: the configured one, else the provider's own."""
        if self.base_url:
            return self.base_url
        return DEFAULT_ANTHROPIC_URL if self.provider == "anthropic" else DEFAULT_OPENAI_URL

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values to scrub from anything written (transcripts, errors)."""
        return tuple(s for s in (self.api_key, self.auth_token) if s)


def _first(*candidates: tuple[str | None, str]) -> tuple[str | None, str]:
    for value, source in candidates:
        if value and value.strip():
            return value.strip(), source
    return None, "default"


def resolve_anthropic(model: str | None = None, *, spec_env: Mapping[str, str] | None = None,
                      environ: Mapping[str, str] | None = None) -> ProviderSettings:
    """Anthropic settings: `model` (from the spec) → ANTHROPIC_MODEL → claude-sonnet-4-6; base URL from the
    spec's agent env → ANTHROPIC_BASE_URL → the real API; key from ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)."""
    env = os.environ if environ is None else environ
    spec = spec_env or {}
    chosen, source = _first((model, "spec"), (env.get("ANTHROPIC_MODEL"), "environment"))
    base, _ = _first((spec.get("ANTHROPIC_BASE_URL"), "spec"), (env.get("ANTHROPIC_BASE_URL"), "environment"))
    return ProviderSettings(provider="anthropic", model=chosen or DEFAULT_ANTHROPIC_MODEL, model_source=source,
                            base_url=base.rstrip("/") if base else None,
                            api_key=env.get("ANTHROPIC_API_KEY") or None,
                            auth_token=env.get("ANTHROPIC_AUTH_TOKEN") or None)


def resolve_openai(model: str | None = None, *, spec_env: Mapping[str, str] | None = None,
                   environ: Mapping[str, str] | None = None) -> ProviderSettings:
    """OpenAI settings: `model` (from the spec) → OPENAI_MODEL → gpt-5.4-mini; base URL from the spec's agent
    env → OPENAI_BASE_URL → the real API; key from OPENAI_API_KEY (or CODEX_API_KEY)."""
    env = os.environ if environ is None else environ
    spec = spec_env or {}
    chosen, source = _first((model, "spec"), (env.get("OPENAI_MODEL"), "environment"))
    base, _ = _first((spec.get("OPENAI_BASE_URL"), "spec"), (env.get("OPENAI_BASE_URL"), "environment"))
    return ProviderSettings(provider="openai", model=chosen or DEFAULT_OPENAI_MODEL, model_source=source,
                            base_url=base.rstrip("/") if base else None,
                            api_key=env.get("OPENAI_API_KEY") or env.get("CODEX_API_KEY") or None)


def resolve_agent_model(agent: AgentConfig, *, environ: Mapping[str, str] | None = None) -> str | None:
    """The model a trial of `agent` runs (part of the trial key). API agents resolve as above; CLI agents
    use the spec's model or None (the CLI's own default, pinned by its version in the key)."""
    if agent.kind == "anthropic":
        return resolve_anthropic(agent.model, environ=environ).model
    if agent.kind == "openai":
        return resolve_openai(agent.model, environ=environ).model
    return agent.model
