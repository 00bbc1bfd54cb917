"""The Agent protocol, the request a trial gives it, the result it returns, and the registry."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from skillmake.spec.model import AgentConfig, Case, Skill, Spec


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_creation_tokens: int | None = None
    cost_usd: float | None = None
    num_turns: int | None = None
    requests: int | None = None

    @property
    def total_tokens(self) -> int | None:
        parts = [self.input_tokens, self.output_tokens, self.cache_read_tokens, self.cache_creation_tokens]
        return sum(p for p in parts if p) if any(p is not None for p in parts) else None

    def to_json(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_read_tokens": self.cache_read_tokens, "cache_creation_tokens": self.cache_creation_tokens,
                "total_tokens": self.total_tokens, "cost_usd": self.cost_usd, "num_turns": self.num_turns,
                "requests": self.requests}


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialRequest:
    """Everything an agent needs to run one trial. The workspace already holds the staged inputs."""

    spec: Spec
    case: Case
    arm_name: str
    k: int
    agent: AgentConfig
    skill: Skill | None  # None for an arm that runs without the skill
    prompt: str  # the text sent to the agent (prompt and args)
    system_prompt: str | None  # resolved (explicit > AGENTS.md > SKILL.md body); for API agents
    workspace: str  # the trial's working directory
    home: str  # a fresh HOME for the agent
    env: dict[str, str]  # the clean base environment (allow-list); agents add what they need
    timeout: float
    # the `command` words that its trial key names as program files beside the spec (a command agent runs those from
    # the spec's folder; every other word is passed as written)
    program_files: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentResult:
    """What an agent produced. `outcome` is completed, error, timeout or cheat."""

    outcome: str
    output: str  # the text graded by default (stdout, or the final result text)
    stdout: bytes = b""
    stderr: bytes = b""
    transcript: bytes | None = None
    exit_code: int | None = None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    activated_skills: tuple[str, ...] = ()
    forbidden_reads: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)  # agent facts for the record (schema: trial-record)


class Agent(Protocol):
    """An agent kind. `version` is part of the trial key for CLI agents (None when it has none)."""

    kind: str

    def version(self, config: AgentConfig) -> str | None: ...

    def run(self, request: TrialRequest) -> AgentResult: ...


_MODULES = {"command": "command", "claude-code": "claude_code", "codex": "codex",
            "anthropic": "anthropic_api", "openai": "openai_api"}
_cache: dict[str, Agent] = {}


def get_agent(kind: str) -> Agent:
    """The agent for `kind`, importing its module only now."""
    if kind not in _cache:
        module = importlib.import_module(f"{__package__}.{_MODULES[kind]}")
        _cache[kind] = module.AGENT
    return _cache[kind]
