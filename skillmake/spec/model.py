"""The spec model: frozen dataclasses built only from data that passed the JSON Schema."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

WITH_SKILL = "with_skill"
WITHOUT_SKILL = "without_skill"


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """One deterministic check: its type, optional id/name, target file, and type-specific keys."""

    type: str
    index: int
    id: str | None = None
    name: str | None = None
    file: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.id or f"{self.type}#{self.index}"


@dataclass(frozen=True, slots=True, kw_only=True)
class InputFile:
    """A fixture staged into every trial workspace under its basename."""

    source: str  # absolute, resolved path
    relpath: str  # as written in the spec
    dest: str  # basename in the workspace


@dataclass(frozen=True, slots=True, kw_only=True)
class Criterion:
    id: str
    criterion: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    id: str
    index: int
    eval_id: int | None = None  # skill-creator's integer id; results fall back to `index` without it
    prompt: str | None = None
    args: str | None = None
    description: str | None = None
    user_prompt: str | None = None
    setup: str | None = None
    cleanup: str | None = None
    input_files: tuple[InputFile, ...] = ()
    output_file: str | None = None
    output_files: tuple[str, ...] = ()
    timeout: float | None = None
    checks: tuple[Check, ...] = ()
    rubric: str | None = None
    pass_threshold: int | None = None
    judge_model: str | None = None  # this case's judge model (eva); None: the spec's (judges/resolve.choose)
    expectations: tuple[str, ...] = ()  # the statements' texts: what the judge sees and the grade key holds
    # Names of the expectations written {text, name}, by position (None: unnamed); empty when none is named.
    # Labels, not grade inputs: the judge never sees them, so they are applied to records when a view is built.
    expectation_names: tuple[str | None, ...] = ()
    expectation_types: tuple[str | None, ...] = ()  # skill-creator's assertion types: labels, never key inputs
    expected_output: str | None = None
    criteria: tuple[Criterion, ...] = ()
    sections: tuple[dict[str, Any], ...] = ()
    tags: tuple[str, ...] = ()
    required: bool = False
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def has_judge(self) -> bool:
        return bool(self.rubric or self.expectations or self.criteria or self.sections)

    @property
    def result_id(self) -> int:
        """The integer id results give the case (benchmark.json, eval_metadata.json): eval_id, else its position."""
        return self.index if self.eval_id is None else self.eval_id

    def expectation_name(self, i: int) -> str | None:
        """The name the i-th expectation was given, if any."""
        return self.expectation_names[i] if i < len(self.expectation_names) else None


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentConfig:
    """Settings of the agent; everything but `timeout` is part of the trial key."""

    kind: str
    command: tuple[str, ...] | str | None = None
    model: str | None = None
    max_turns: int | None = None
    max_tokens: int | None = None
    budget_usd: float | None = None
    flags: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    pass_env: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] = ()
    sync_tasks: bool = False
    allow_hang_heuristic: bool = True

    def key_fragment(self) -> dict[str, Any]:
        command = list(self.command) if isinstance(self.command, tuple) else self.command
        fragment = {"kind": self.kind, "command": command, "model": self.model, "max_turns": self.max_turns,
                    "max_tokens": self.max_tokens, "budget_usd": self.budget_usd, "flags": list(self.flags),
                    "env": dict(self.env), "pass_env": sorted(self.pass_env),
                    "allowed_tools": list(self.allowed_tools), "sync_tasks": self.sync_tasks}
        if not self.allow_hang_heuristic:  # only when off (it changes an outcome): every existing key stays
            fragment["allow_hang_heuristic"] = False
        return fragment


@dataclass(frozen=True, slots=True, kw_only=True)
class Arm:
    """A configuration the cases run under."""

    name: str
    agent: AgentConfig
    skill: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeConfig:
    provider: str | None = None
    model: str | None = None
    pass_threshold: int = 4
    # Sent to the API judges (anthropic, openai); None: the provider's own choice. In the grade key only when set.
    temperature: float | None = None
    # Judge the stale grades of a run as one provider batch at half price (run/batch.py); None: the config decides.
    batch: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Thresholds:
    min_pass_rate: float | None = None
    # Which value min_pass_rate is compared with: the point estimate, or the lower/upper end of its 95% Wilson
    # interval (`min_pass_rate: {value: 0.8, on: lower}`); a bare number means the point.
    min_pass_rate_on: str = "point"
    min_mean_score: float | None = None
    min_baseline_delta: float | None = None
    min_stability: float | None = None
    # Trigger gates (results/triggers.py): over every run of every query, and the share of queries passing.
    min_trigger_precision: float | None = None
    min_trigger_recall: float | None = None
    min_trigger_f1: float | None = None
    min_trigger_pass_rate: float | None = None

    @property
    def trigger_declared(self) -> bool:
        return any(v is not None for v in (self.min_trigger_precision, self.min_trigger_recall,
                                           self.min_trigger_f1, self.min_trigger_pass_rate))


@dataclass(frozen=True, slots=True, kw_only=True)
class Adaptive:
    """`trials: {min, max, decide}`: per case and arm, trials run in batches until an anytime-valid confidence
    sequence for the pass rate lies above or below `decide` (core/stats.adaptive_stop); undecided at `most`,
    the case is inconclusive, which fails the verdict or only warns (`inconclusive`)."""

    least: int  # min
    most: int  # max (the spec's `trials`)
    decide: float
    batch: int
    alpha: float = 0.05
    inconclusive: str = "fail"  # fail | warn

    def to_json(self) -> dict[str, Any]:
        return {"min": self.least, "max": self.most, "decide": self.decide, "batch": self.batch,
                "alpha": self.alpha, "inconclusive": self.inconclusive}


TRIGGER_ARM = "trigger"  # the arm name trigger trials carry in their records' labels


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerQuery:
    """One query of a trigger set: whether the skill should fire for it. `id` names its tasks and views."""

    id: str
    query: str
    should_trigger: bool
    index: int  # position in the spec's trigger set (should_trigger first, then should_not_trigger)


@dataclass(frozen=True, slots=True, kw_only=True)
class Distractor:
    """Another skill installed beside the one under test during trigger trials: only its name and description
    are offered to the model, so only they are part of a trigger trial's key."""

    name: str
    description: str
    source: str | None = None  # the SKILL.md (or command file) it was read from; None when written inline


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerTests:
    """Trigger (activation) evals: each query runs `runs` times on a CLI agent with the skill installed among
    distractors; a query triggers when its activation rate reaches `threshold` (skill-creator's rule)."""

    queries: tuple[TriggerQuery, ...]
    agent: AgentConfig
    runs: int = 3
    threshold: float = 0.5
    timeout: float | None = None  # None: the spec's timeout
    distractors: tuple[Distractor, ...] = ()

    @property
    def runnable(self) -> bool:
        """Whether the agent shows activation in its transcript (claude-code and codex do)."""
        return self.agent.kind in ("claude-code", "codex")


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """The thing under test: a SKILL.md folder or a command .md file."""

    name: str
    path: str  # absolute (for "none": the spec's own path)
    # "folder" | "command" | "prompt" (a prompt file, e.g. eva's prompt.xml: hashed, not installed) | "none" (no
    # skill: the agent runs the cases alone, as caliper does for a spec without skill.path)
    kind: str

    @property
    def present(self) -> bool:
        """Whether there is a skill at all; an arm "with" no skill runs (and is keyed) exactly as without it."""
        return self.kind != "none"

    @property
    def skill_md(self) -> str:
        return f"{self.path}/SKILL.md" if self.kind == "folder" else self.path


@dataclass(frozen=True, slots=True, kw_only=True)
class Spec:
    name: str
    path: str  # absolute path of the spec file
    relpath: str  # as found under the project root
    skill: Skill
    agent: AgentConfig
    arms: tuple[Arm, ...]
    cases: tuple[Case, ...]
    trials: int = 1  # with `adaptive`: its max
    timeout: float = 300.0
    adaptive: Adaptive | None = None  # `trials: {min, max, decide}`; None: a fixed count
    description: str | None = None
    system_prompt: str | None = None
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    thresholds: Thresholds = field(default_factory=Thresholds)
    forbidden_files: tuple[str, ...] = ()
    extra_path: tuple[str, ...] = ()
    trigger_tests: TriggerTests | None = None
    tags: tuple[str, ...] = ()
    format: str | None = None  # the other tool's format it was read from (skillmake.spec.adapters); None: native
    declared: frozenset[str] = frozenset()  # the top-level keys the spec (or its translation) writes
    # What a translation from another tool's format could not carry over (adapters' Translation.notes), shown by
    # `validate -v`. Never a key input: a note says what was not read, so it changes nothing that runs.
    notes: tuple[str, ...] = ()

    @property
    def folder(self) -> str:
        return self.path.rsplit("/", 1)[0]

    def case(self, case_id: str) -> Case:
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(case_id)
