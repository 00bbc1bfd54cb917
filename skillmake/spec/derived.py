"""What several layers work out from a loaded spec alone: the labels its views show, and why its trigger tests
cannot run. Here, below results/, so the planner asks without loading the results layer (a no-op never renders)."""

from __future__ import annotations

from skillmake.core.canonical import digest_json
from skillmake.spec.model import Spec


def labels_digest(spec: Spec) -> str | None:
    """What a spec's views show that no key holds: integer eval ids, expectation names and types (a rename re-runs
    and re-grades nothing, but must reach the views). None when no case sets either, so a spec that does not use them
    keeps the report inputs it had."""
    labels = [[c.id, c.eval_id, list(c.expectation_names), *([list(c.expectation_types)] if c.expectation_types
                                                             else [])]
              for c in spec.cases if c.eval_id is not None or c.expectation_names or c.expectation_types]
    return digest_json(labels) if labels else None


def trigger_skip_reason(spec: Spec) -> str | None:
    """Why the spec's trigger tests cannot run (None: they can): activation needs an agent that shows it in its
    transcript, and a skill it can install."""
    tests = spec.trigger_tests
    if tests is None:
        return None
    if not spec.skill.present:
        return "the spec has no skill, so there is nothing to activate"
    if spec.skill.kind == "prompt":
        return ("the skill is a prompt file, which no agent installs or activates (eva asks a judge model instead; "
                "skillmake measures real activations of SKILL.md folders and command files)")
    if not tests.runnable:
        return (f"the {tests.agent.kind} agent shows no skill activation; set trigger_tests.agent (e.g. "
                "{kind: claude-code}) to run them")
    return None
