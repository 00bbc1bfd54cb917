"""clauditor's command line as a user's CI runs it: `skillmake clauditor grade|validate` on a clauditor spec that
names the claude-code harness, with the real claude CLI and the real Anthropic SDK judge against the fake API.
Every request is counted at the fake: the agent's and the judge's apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.cli_fakes import RecordingProxy
from tests.e2e.clis import require_cli
from tests.e2e.conftest import assert_offline
from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.functional.project import Project

pytestmark = pytest.mark.e2e

COMMAND = "---\ndescription: Greets by shouting\n---\nGreet whoever $ARGUMENTS names, in UPPERCASE letters only.\n"
SPEC = {
    "skill_name": "shout", "test_args": "the team", "harness": "claude-code", "transport": "api",
    "grading_model": "claude-sonnet-4-6",
    "assertions": [{"id": "loud", "type": "contains", "needle": "HELLO"}],
    "grading_criteria": [{"id": "shouted", "criterion": "Is the greeting shouted?"}],
    "variance": {"n_runs": 2},
}
CRITERION = "Is the greeting shouted?"


def script(api: FakeAPI, *, judge: Reply | None = None) -> None:
    """The agent (claude -p) answers the greeting; the judge (any request naming the criterion) passes it."""
    verdict = Reply.text(json.dumps({"criteria": [{"id": "shouted", "passed": True, "score": 1.0,
                                                   "evidence": "HELLO TEAM!", "reasoning": "all capitals"}]}))

    def answer(request: Recorded) -> Reply:
        if CRITERION in request.text():
            return judge or verdict
        return Reply.text("HELLO TEAM!")
    api.script = answer


def counts(api: FakeAPI) -> tuple[int, int]:
    """(agent requests, judge requests) so far."""
    judged = sum(1 for r in api.requests if CRITERION in r.text())
    return len(api.requests) - judged, judged


def test_clauditors_grade_and_validate_with_the_real_claude_cli(api: FakeAPI, proxy: RecordingProxy,
                                                                tmp_path: Path) -> None:
    require_cli("claude")
    script(api)
    p = Project.empty(tmp_path / "proj", {".claude/commands/shout.md": COMMAND,
                                          ".claude/commands/shout.eval.json": json.dumps(SPEC, indent=2)})
    first = p.run("clauditor", "grade", ".claude/commands/shout.md")
    assert first.code == 0, first.out + first.err
    assert counts(api) == (1, 1)  # one run of the skill, graded once (clauditor's grade does not read n_runs)
    view = json.loads((p.root / ".skillmake/runs/shout/shout/with_skill/trial-0/trial.json").read_text())
    assert view["agent"]["version"].startswith("2.1.328") and view["outcome"] == "completed"

    again = p.run("clauditor", "grade", ".claude/commands/shout.md")
    assert (again.code, counts(api)) == (0, (1, 1))  # nothing changed: no request of any kind
    checked = p.run("clauditor", "validate", ".claude/commands/shout.md", "--json")
    assert (checked.code, counts(api)) == (0, (1, 1)), checked.err  # the same trial, checked without a model
    assert [r["outcome"] for r in json.loads(checked.out)["runs"]] == ["pass"]

    more = p.run("clauditor", "grade", ".claude/commands/shout.md", "--variance", "2")  # 1 + 2 runs
    assert (more.code, counts(api)) == (0, (3, 3)), more.out + more.err

    script(api, judge=Reply.error(400, "the judge's request was refused"))
    p.replace(".claude/commands/shout.eval.json", CRITERION, CRITERION + " Loudly?")
    refused = p.run("clauditor", "grade", ".claude/commands/shout.md")
    # A changed criterion re-judges (never re-runs the skill); a judge the API refuses is clauditor's exit 3.
    assert refused.code == 3, refused.out + refused.err
    assert counts(api)[0] == 3 and counts(api)[1] == 3 + 1  # the one run of a plain grade, judged again
    assert_offline(api, proxy)
