"""Trigger trial keys: the skill's name, description and invocation settings, the distractors' names and
descriptions, the query, the agent and k — never the SKILL.md body, nor the threshold or runs (they only say how
many samples to draw and how to count them)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from skillmake.core.canonical import KEY_VERSION, canonical_json, digest_bytes
from skillmake.run.keys import KeyMaker, TrialKey, part
from skillmake.run.project import Project
from skillmake.spec.model import Spec, TriggerQuery, TriggerTests
from skillmake.spec.trigger_spec import skill_identity
from skillmake.triggers.stub import STUB_VERSION


@dataclass(frozen=True, slots=True, kw_only=True)
class Offered:
    """What the agent is offered: the skill under test and the distractors, as installed."""

    name: str
    description: str
    settings: dict[str, Any]
    distractors: tuple[dict[str, str], ...]

    def fragment(self) -> dict[str, Any]:
        return {"stub": STUB_VERSION,
                "skill": {"name": self.name, "description": self.description, "settings": self.settings},
                "distractors": sorted(self.distractors, key=lambda d: d["name"])}


class TriggerKeys:
    """Computes trigger keys for one load of a project, reading each skill's frontmatter once."""

    def __init__(self, keys: KeyMaker) -> None:
        self.keys = keys
        self._identity: dict[tuple[str, int, int], tuple[str, str | None, dict[str, Any]]] = {}

    def offered(self, spec: Spec, tests: TriggerTests, *, description: str | None = None) -> Offered:
        """What a trigger trial of `spec` installs; `description` stands in for the skill's own (the optimiser's
        candidates)."""
        md = spec.skill.skill_md
        st = os.stat(md)
        memo = (md, st.st_size, st.st_mtime_ns)
        identity = self._identity.get(memo)
        if identity is None:
            identity = self._identity[memo] = skill_identity(spec.skill)
        name, own, settings = identity
        return Offered(name=name, description=description if description is not None else (own or ""),
                       settings=settings,
                       distractors=tuple({"name": d.name, "description": d.description} for d in tests.distractors))

    def key(self, spec: Spec, tests: TriggerTests, query: TriggerQuery, k: int, *,
            description: str | None = None) -> TrialKey:
        skill = part(self.offered(spec, tests, description=description).fragment())
        run = part({"trigger": True, "query": query.query})
        agent = self.keys.agent_part(spec, tests.agent)
        key = digest_bytes(canonical_json({"key_version": KEY_VERSION, "skill": skill.digest, "run": run.digest,
                                           "agent": agent.digest, "k": k}))
        return TrialKey(key=key, skill=skill, run=run, agent=agent, k=k)


def trigger_keys(project: Project) -> TriggerKeys:
    """The project's trigger trial keys, made once per load and sharing its agent parts with the trial keys."""
    keys = project.memo.get("trigger_keys")
    if keys is None:
        keys = project.memo["trigger_keys"] = TriggerKeys(project.keys)
    return keys
