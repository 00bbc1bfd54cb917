"""Trigger tests as a user runs them: `skillmake` with the real claude CLI, the skill installed among distractors,
against the fake API's activation rule (a real activation, and a real non-activation). Counted at the fake: a body
edit runs no trigger trial, a description edit runs every one."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.e2e.cli_fakes import RecordingProxy
from tests.e2e.clis import require_cli
from tests.e2e.conftest import assert_offline
from tests.fakeapi import Activate, FakeAPI, Recorded, Reply
from tests.fakeapi.activation import listed_skills
from tests.functional.project import Project

pytestmark = pytest.mark.e2e

SKILL = """\
---
name: shout
description: Answers by shouting. Use it when asked to shout or to be loud.
---
# Shout

Reply in UPPERCASE letters only.
"""

SPEC = """\
skill: skills/shout
agent: {kind: command, command: [python3, agent.py]}
cases:
  - {id: one, prompt: say one, checks: [{type: contains, needle: one}]}
trigger_tests:
  agent: {kind: claude-code, model: claude-sonnet-4-6}
  runs: 2
  distractors:
    - {name: deploy, description: Deploys the service to staging. Use it when asked to ship or deploy.}
  should_trigger:
    - please shout a greeting to the team
    - be loud about the release
  should_not_trigger:
    - ship the build to staging
    - summarise this paragraph
"""


def rule(api: FakeAPI) -> None:
    """The model picks a skill from what the CLI lists: `shout` for shouting (or, once its description says so,
    for "summarise"), `deploy` for shipping; anything else gets a plain answer."""
    def script(request: Recorded) -> Reply | None:
        shout_when = r"\bshout|\bloud"
        if any("summaries" in d for n, d in listed_skills(request).items() if n == "shout"):
            shout_when += r"|\bsummarise"
        return FakeAPI.activation(Activate(skill="shout", when=shout_when),
                                  Activate(skill="deploy", when=r"\bship|\bdeploy"),
                                  answer=Reply.text("DONE!"), otherwise=Reply.text("Done."))(request)
    api.script = script


def test_real_activations_rates_and_what_an_edit_reruns(api: FakeAPI, proxy: RecordingProxy, tmp_path: Path) -> None:
    require_cli("claude")
    rule(api)
    p = Project.empty(tmp_path / "proj", {"skills/shout/SKILL.md": SKILL, "shout.eval.yaml": SPEC,
                                          "agent.py": "import sys; print(sys.stdin.read())\n"})
    first = p.run()
    assert first.code == 0, first.out + first.err
    # 4 queries × 2 runs; a run that loads a skill makes 2 requests (choose it, then answer), others make 1:
    # shout's 2 queries and the shipping one (deploy, a distractor) load a skill.
    assert api.count("/v1/messages") == 3 * 2 * 2 + 1 * 2 * 1
    report = orjson.loads((p.root / ".skillmake/reports/shout/report.json").read_bytes())["triggers"]
    assert [(q["id"], q["triggers"], q["runs"], q["pass"]) for q in report["queries"]] == [
        ("please-shout-a-greeting-to-the", 2, 2, True), ("be-loud-about-the-release", 2, 2, True),
        ("ship-the-build-to-staging", 0, 2, True), ("summarise-this-paragraph", 0, 2, True)]
    assert (report["summary"]["precision"], report["summary"]["recall"], report["summary"]["f1"]) == (1.0, 1.0, 1.0)
    view = orjson.loads((p.root / ".skillmake/triggers/shout/ship-the-build-to-staging/trial-0/trial.json")
                        .read_bytes())
    assert view["activation"]["skills"] == ["deploy"]  # the distractor was chosen, and seen to be
    assert view["agent"]["version"].startswith("2.1.328")

    p.replace("skills/shout/SKILL.md", "UPPERCASE letters only", "UPPERCASE letters only, always")
    before = api.count("/v1/messages")
    body = p.run()
    assert (body.code, api.count("/v1/messages") - before) == (0, 0)  # a body edit: no trigger trial runs

    p.replace("skills/shout/SKILL.md", "to be loud.", "to be loud, or for summaries.")
    described = p.run()
    # Every trigger trial runs again (8); now "summarise" loads shout too: a false positive, and the spec is red.
    assert api.count("/v1/messages") - before == 4 * 2 * 2 + 0
    assert described.code == 1
    report = orjson.loads((p.root / ".skillmake/reports/shout/report.json").read_bytes())["triggers"]
    assert report["false_positives"] == ["summarise-this-paragraph"]
    assert "✗ false positive" in described.out
    junit = (p.root / ".skillmake/reports/shout/junit.xml").read_text()
    assert 'classname="shout.trigger" name="summarise-this-paragraph"' in junit and "TriggerFailure" in junit
    assert_offline(api, proxy)
