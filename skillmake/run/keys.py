"""Trial and grade keys: what makes a trial or a grade stale (design.md, "Keys").

Each part of a key is canonical JSON whose bytes are also stored as an object, so the part's digest
names a readable fragment: `explain` diffs old and new fragments to say exactly what changed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from skillmake.core.canonical import KEY_VERSION, canonical_json, digest_bytes
from skillmake.spec.model import AgentConfig, Arm, Case, Spec
from skillmake.spec.skillfiles import file_digest, manifest, resolve_system_prompt

CHECKS_VERSION = 1  # bump when a check's semantics change on purpose: every grade becomes stale
API_AGENTS = frozenset({"anthropic", "openai"})  # the agents that take a system prompt of their own


@dataclass(frozen=True, slots=True, kw_only=True)
class Part:
    """One part of a key: the canonical bytes and their digest."""

    data: bytes
    digest: str


def part(value: Any) -> Part:
    data = canonical_json(value)
    return Part(data=data, digest=digest_bytes(data))


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialKey:
    key: str
    skill: Part | None
    run: Part
    agent: Part
    k: int

    def inputs(self) -> dict[str, Any]:
        return {"key_version": KEY_VERSION, "skill": self.skill.digest if self.skill else None,
                "run": self.run.digest, "agent": self.agent.digest, "k": self.k}

    def parts(self) -> list[Part]:
        return [p for p in (self.skill, self.run, self.agent) if p is not None]


class KeyMaker:
    """Computes keys for one project, memoising the skill and agent parts (shared by many trials)."""

    def __init__(self, project_root: str) -> None:
        self.root = project_root
        self._skill_parts: dict[str, Part] = {}
        self._run_parts: dict[tuple[str, int, str], Part] = {}
        self._agent_parts: dict[tuple[AgentConfig, str], Part] = {}

    def skill_part(self, spec: Spec) -> Part:
        cached = self._skill_parts.get(spec.skill.path)
        if cached is None:
            cached = self._skill_parts[spec.skill.path] = part(manifest(spec.skill))
        return cached

    def run_part(self, spec: Spec, case: Case, arm: Arm) -> Part:
        """The case's run fragment: what the agent sees. Never checks, rubric, thresholds or timeout."""
        fragment: dict[str, Any] = {
            "prompt": case.prompt, "args": case.args, "setup": case.setup,
            "input_files": {f.dest: file_digest(f.source) for f in case.input_files},
            "output_file": case.output_file, "output_files": list(case.output_files),
            "forbidden_files": list(spec.forbidden_files), "extra_path": list(spec.extra_path),
        }
        if case.cleanup:
            # It runs after the workspace is kept (python checks read it as the task left it); records from when it
            # ran before have another key.
            fragment["cleanup"] = case.cleanup
            fragment["cleanup_after_keep"] = True
            early = [_check_raw(spec, check) for check in case.checks if check.type == "python"]
            if early:
                # caliper runs a task's assert before its cleanup, over whatever the task changed (files outside
                # the workspace too): the trial runs them, so they are part of what it does.
                fragment["checks_before_cleanup"] = early
        if arm.agent.kind in API_AGENTS:
            skill = spec.skill if arm.skill and spec.skill.present else None
            fragment["system_prompt"] = resolve_system_prompt(spec, skill, self.root)
        elif spec.system_prompt is not None:
            fragment["system_prompt"] = spec.system_prompt
        return part(fragment)

    def agent_part(self, spec: Spec, agent: AgentConfig) -> Part:
        memo = (agent, spec.folder)  # per KeyMaker, i.e. per load: an edited agent script is seen next load
        cached = self._agent_parts.get(memo)
        if cached is None:
            cached = self._agent_parts[memo] = _agent_part(agent, spec.folder)
        return cached

    def trial_key(self, spec: Spec, case: Case, arm: Arm, k: int) -> TrialKey:
        skill = self.skill_part(spec) if arm.skill and spec.skill.present else None
        memo = (spec.path, case.index, arm.name)
        run = self._run_parts.get(memo)
        if run is None:
            run = self._run_parts[memo] = self.run_part(spec, case, arm)
        agent = self.agent_part(spec, arm.agent)
        key = digest_bytes(canonical_json({"key_version": KEY_VERSION, "skill": skill.digest if skill else None,
                                           "run": run.digest, "agent": agent.digest, "k": k}))
        return TrialKey(key=key, skill=skill, run=run, agent=agent, k=k)


def _agent_part(agent: AgentConfig, spec_folder: str) -> Part:
    from skillmake.run.agents import get_agent

    fragment = agent.key_fragment()
    fragment["model"] = resolved_model(agent)
    fragment["version"] = get_agent(agent.kind).version(agent) if agent.kind != "command" else None
    if agent.kind == "command":
        fragment["program_files"] = command_files(agent, spec_folder)
    return part(fragment)


def resolved_model(agent: AgentConfig) -> str | None:
    """The model that will run: spec → environment → default (settings.py), for model agents."""
    if agent.kind == "command":
        return agent.model
    try:
        from skillmake.spec import settings
    except ImportError:  # pragma: no cover - settings.py is part of the package
        return agent.model
    resolver = getattr(settings, "resolve_agent_model", None)
    return resolver(agent) if resolver else agent.model


def command_files(agent: AgentConfig, spec_folder: str) -> dict[str, str]:
    """Digests of the command's arguments that are files beside the spec (editing the agent script re-runs)."""
    argv = list(agent.command) if isinstance(agent.command, tuple) else []
    out = {}
    for arg in argv:
        path = os.path.join(spec_folder, arg)
        if not os.path.isabs(arg) and os.path.isfile(path):
            out[arg] = file_digest(path)
    return out


def _check_raw(spec: Spec, check: Any) -> dict[str, Any]:
    """A check as written, with the digests of the files it reads (a script, a schema file)."""
    raw = dict(check.raw)
    for key in ("schema_file", "script"):
        if key in raw:
            raw[f"{key}_digest"] = file_digest(os.path.join(spec.folder, raw[key]))
    return raw


def grade_part(spec: Spec, case: Case) -> Part:
    """The case's grade fragment: checks (with the files they read), rubric, expectations, criteria, sections."""
    checks = [_check_raw(spec, check) for check in case.checks]
    return part({
        "checks_version": CHECKS_VERSION, "checks": checks, "rubric": case.rubric,
        "pass_threshold": case.pass_threshold or spec.judge.pass_threshold,
        "expectations": list(case.expectations), "expected_output": case.expected_output,
        "criteria": [{"id": c.id, "criterion": c.criterion} for c in case.criteria],
        "sections": list(case.sections), "user_prompt": case.user_prompt,
        "prompt": case.prompt if case.has_judge else None,
    })


def grade_key(outputs_digest: str, grade: Part, judge: Part) -> str:
    return digest_bytes(canonical_json({"key_version": KEY_VERSION, "outputs": outputs_digest,
                                        "grade": grade.digest, "judge": judge.digest}))
