"""What a run says it spent is what the agents reported: model requests counted from the real claude CLI's
stream (retries inside the CLI included) agree with the requests the fake API received; a missing CLI made none."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from tests.e2e.cli_fakes import RecordingProxy
from tests.e2e.clis import require_cli
from tests.e2e.conftest import SHOUT_SKILL
from tests.e2e.test_claude_code import shout_model
from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.functional.project import Project

pytestmark = pytest.mark.e2e

SPEC = """\
skill: skills/shout
agent: {kind: claude-code, model: claude-sonnet-4-6}
trials: 2
cases:
  - id: greet
    prompt: say hello to the team
    checks: [{type: regex, pattern: "^[A-Z !]+$"}]
"""


def _requests_line(out: str) -> int:
    m = re.search(r"ran \d+ trials? \((\d+) model requests", out)
    assert m, out
    return int(m.group(1))


def test_requests_retried_inside_the_cli_are_counted(api: FakeAPI, proxy: RecordingProxy, tmp_path: Path) -> None:
    require_cli("claude")
    lock = threading.Lock()
    overloaded = {"left": 3}

    def model(request: Recorded) -> Reply:
        with lock:  # the first three model requests are refused with 529; the CLI retries them
            if overloaded["left"]:
                overloaded["left"] -= 1
                return Reply.fault("529", retry_after=0)
        return shout_model(request)

    api.script = model
    p = Project.empty(tmp_path / "proj", {"skills/shout/SKILL.md": SHOUT_SKILL, "shout.eval.yaml": SPEC})
    run = p.run()
    assert run.code == 0, run.out + run.err
    received = api.count("/v1/messages")
    assert overloaded["left"] == 0
    assert _requests_line(run.out) == received  # 4 answered + 3 retried, as the server counted them
    assert "ran 2 trials" in run.out


def test_a_missing_cli_made_no_request(api: FakeAPI, proxy: RecordingProxy, tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "proj", {"skills/shout/SKILL.md": SHOUT_SKILL, "shout.eval.yaml": SPEC})
    run = p.run(env={"SKILLMAKE_CLAUDE": str(tmp_path / "no-such-claude")})
    assert run.code == 1
    assert api.count("/v1/messages") == 0
    assert _requests_line(run.out) == 0
    assert "claude CLI not found" in run.out + run.err
