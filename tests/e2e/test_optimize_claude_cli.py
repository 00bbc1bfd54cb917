"""skill-creator's description loop as a user runs it: `skillmake optimize-description` with the real claude CLI
deciding activations from the listed descriptions (the fake API's activation rule) and an anthropic improver at the
same fake. The second run of the loop costs zero agent calls and zero improver calls."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.cli_fakes import RecordingProxy
from tests.e2e.clis import require_cli
from tests.e2e.conftest import assert_offline
from tests.fakeapi import Activate, FakeAPI, Recorded, Reply
from tests.fakeapi.activation import listed_skills
from tests.functional.project import Project

pytestmark = pytest.mark.e2e

SKILL = "---\nname: kids\ndescription: Find activities for kids\n---\nBody.\n"
BETTER = "Use for activities, outings and birthday parties with kids or toddlers"
SPEC = """\
skill: skills/kids
agent: {kind: command, command: [python3, agent.py]}
judge: {provider: anthropic, model: claude-haiku-4-5}
cases:
  - {id: one, prompt: say one, checks: [{type: contains, needle: one}]}
trigger_tests:
  agent: {kind: claude-code, model: claude-sonnet-4-6}
  runs: 1
  should_trigger: [find kid activities nearby, fun outings with toddlers, plan a birthday party]
  should_not_trigger: [what is the weather today, write me a python script]
"""


def model(request: Recorded) -> Reply | None:
    """The improver (a forced record_verdict call) proposes BETTER; the CLI's model loads `kids` for a query
    that shares a word with the description the CLI lists for it."""
    if ((request.json or {}).get("tool_choice") or {}).get("name") == "record_verdict":
        return Reply.tool_use("record_verdict", {"description": BETTER})
    description = listed_skills(request).get("kids", "")
    words = "|".join(w for w in re.findall(r"[a-z]{5,}", description.lower()))
    rules = [Activate(skill="kids", when=rf"\b({words})")] if words else []
    return FakeAPI.activation(*rules, answer=Reply.text("Here you go."), otherwise=Reply.text("Sure."))(request)


def test_the_loop_improves_the_description_and_a_second_run_costs_nothing(api: FakeAPI, proxy: RecordingProxy,
                                                                         tmp_path: Path) -> None:
    require_cli("claude")
    api.script = model
    p = Project.empty(tmp_path / "proj", {"skills/kids/SKILL.md": SKILL, "kids.eval.yaml": SPEC,
                                          "agent.py": "import sys; print(sys.stdin.read())\n"})
    args = ("optimize-description", "kids", "--holdout", "0", "--max-iterations", "3", "--format", "json")
    first = p.run(*args)
    assert first.code == 0, first.out + first.err
    data = json.loads(first.out)
    assert [it["description"] for it in data["iterations"]] == ["Find activities for kids", BETTER]
    assert [it["train_score"] for it in data["iterations"]] == [0.6, 1.0]  # outings and birthday were missed
    assert data["best_description"] == BETTER and data["exit_reason"].startswith("all_passed")
    requests = api.count("/v1/messages")
    agent_runs = [c["agent"]["made"] for c in (it["calls"] for it in data["iterations"])]
    assert agent_runs == [5, 5]  # each new description: every query once, through the real CLI

    second = p.run(*args)
    assert second.code == 0, second.out + second.err
    again = json.loads(second.out)
    assert [(c["agent"]["made"], c["improver"]["made"]) for c in (it["calls"] for it in again["iterations"])] == [
        (0, 0), (0, 0)]
    assert api.count("/v1/messages") == requests  # not one request: every trial and proposal was stored
    assert (p.root / "skills/kids/SKILL.md").read_text() == SKILL  # never edited without --apply
    assert_offline(api, proxy)
