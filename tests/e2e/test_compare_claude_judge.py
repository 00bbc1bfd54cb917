"""Blind A/B comparison judged by the real `claude` CLI (judge provider claude-code) against the fake API, whose
model has pure position bias — whatever it is shown first wins. The swap cancels it: every pair is a tie."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.cli_fakes import RecordingProxy
from tests.e2e.clis import require_cli
from tests.e2e.conftest import assert_offline
from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.functional.project import Project
from tests.functional.test_compare import AGENT, LOUD

pytestmark = pytest.mark.e2e

SPEC = """\
skill: skills/alpha
agent: {kind: command, command: [python3, agent.py]}
judge: {provider: claude-code, model: claude-haiku-4-5}
baseline: true
cases:
  - {id: one, prompt: say one, checks: [{type: contains, needle: ONE}]}
"""


def test_a_position_biased_cli_judge_is_cancelled_by_the_swap(api: FakeAPI, proxy: RecordingProxy,
                                                              tmp_path: Path) -> None:
    claude = require_cli("claude")
    shown: list[str] = []

    def first_wins(request: Recorded) -> Reply:
        text = request.text()
        shown.append(text.split("<output_1>", 1)[1].split("</output_1>", 1)[0].strip() if "<output_1>" in text else "")
        if request.turn == 0:  # the CLI offers a StructuredOutput tool built from the verdict's schema
            scores = {"content_score": 4, "structure_score": 4, "overall_score": 8}
            quality = {"score": 8, "strengths": ["clear"], "weaknesses": []}
            return Reply.tool_use("StructuredOutput", {
                "rubric": {"1": scores, "2": scores}, "output_quality": {"1": quality, "2": quality},
                "reasoning": "Output 1 reads better.", "winner": "1"})
        return Reply.text("done")

    api.script = first_wins
    p = Project.empty(tmp_path / "proj", {"agent.py": AGENT, "skills/alpha/SKILL.md": LOUD, "alpha.eval.yaml": SPEC})
    run = p.run("compare", "alpha", "--format", "json", env={"SKILLMAKE_CLAUDE": claude})
    assert run.code == 0, run.out + run.err
    data = json.loads(run.out)
    assert (data["summary"]["a_wins"], data["summary"]["b_wins"], data["summary"]["ties"]) == (0, 0, 1)
    [pair] = data["cases"][0]["pairs"]
    assert [(o["shown"], o["winner"]) for o in pair["orders"]] == [(["A", "B"], "A"), (["B", "A"], "B")]
    # The CLI was called once per order, and each time saw the other output first.
    assert len([s for s in shown if s]) == 2 and shown[0] != shown[1]
    again = p.run("compare", "alpha", env={"SKILLMAKE_CLAUDE": claude})
    assert again.code == 0 and api.count("/v1/messages") == 2  # both verdicts reused
    assert_offline(api, proxy)
