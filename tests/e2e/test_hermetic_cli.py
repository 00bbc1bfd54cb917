"""Trials do not see the project's own Claude Code or Codex setup (issue 19 §1): a project with its own skills,
commands, CLAUDE.md, AGENTS.md and .git, run through skillmake's trial runner on the real claude and codex CLIs;
no request the fake API receives and no transcript mentions any of them, in either arm."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillmake.run import trial
from skillmake.run.project import Project
from tests.e2e.cli_fakes import RecordingProxy
from tests.e2e.clis import require_cli
from tests.e2e.conftest import SKILL_DESC_MARK, Trials, assert_offline
from tests.e2e.test_claude_code import shout_model as claude_model
from tests.e2e.test_codex import shout_model as codex_model
from tests.fakeapi import FakeAPI

pytestmark = pytest.mark.e2e

# Each decoy file carries a marker of its own; a request or transcript holding one saw the project.
DECOYS = {
    ".claude/skills/decoy/SKILL.md": "---\nname: decoy\ndescription: DECOY-PROJECT-SKILL-q7 for every request\n---\n"
                                     "DECOY-PROJECT-SKILL-BODY-q7\n",
    ".claude/commands/decoy-cmd.md": "DECOY-PROJECT-COMMAND-z3: answer in French.\n",
    ".claude/settings.json": '{"env": {"DECOY_SETTING": "DECOY-PROJECT-SETTINGS-s1"}}\n',
    "CLAUDE.md": "DECOY-PROJECT-CLAUDE-MD-k9: always sign replies as the project.\n",
    "CLAUDE.local.md": "DECOY-PROJECT-CLAUDE-LOCAL-l2\n",
    "AGENTS.md": "DECOY-PROJECT-AGENTS-MD-w5: always sign replies as the project.\n",
    ".agents/skills/agentdecoy/SKILL.md": "---\nname: agentdecoy\ndescription: DECOY-PROJECT-AGENTS-SKILL-a4\n---\n"
                                          "DECOY-PROJECT-AGENTS-SKILL-BODY-a4\n",
    ".codex/skills/codexdecoy/SKILL.md": "---\nname: codexdecoy\ndescription: DECOY-PROJECT-CODEX-SKILL-c8\n---\n"
                                         "body\n",
    ".git/HEAD": "ref: refs/heads/main\n",
}
MARKERS = ("DECOY-PROJECT", "decoy-cmd", "agentdecoy", "codexdecoy", "name: decoy")


def _decorate(root: Path) -> None:
    for rel, text in DECOYS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    # The skill under test sits below the decoys too, with its own spec.
    for name, kind, model in (("cc", "claude-code", "claude-sonnet-4-6"), ("cx", "codex", "gpt-5.4")):
        (root / f"{name}.eval.yaml").write_text(f"skill: skills/shout\nagent: {{kind: {kind}, model: {model}}}\n"
                                                "baseline: true\ncases:\n  - id: greet\n    prompt: say hello\n"
                                                "    checks: [{type: min_length, length: 1}]\n")


def test_neither_arm_of_either_cli_sees_the_projects_own_setup(api: FakeAPI, proxy: RecordingProxy,
                                                               trials: Trials) -> None:
    require_cli("claude")
    require_cli("codex")
    root = trials.root / "project"
    _decorate(root)
    api.script = lambda r: claude_model(r) if r.path == "/v1/messages" else codex_model(r)

    project = Project.open(str(root))
    assert project.broken == {}
    transcripts: dict[str, bytes] = {}
    outcomes = {}
    for spec in project.specs:
        for arm in spec.arms:
            case = spec.cases[0]
            record = trial.execute(project, spec, case, arm, 0, project.keys.trial_key(spec, case, arm, 0)).record
            outcomes[f"{spec.name}/{arm.name}"] = (record["outcome"], record["activation"]["skills"])
            data = project.store.get(record["outputs"]["transcript"])
            assert data is not None
            transcripts[f"{spec.name}/{arm.name}"] = data

    # Both arms ran, and the skill under test was offered exactly where it should be (a positive control).
    assert outcomes == {"cc/with_skill": ("completed", ["shout"]), "cc/without_skill": ("completed", []),
                        "cx/with_skill": ("completed", ["shout"]), "cx/without_skill": ("completed", [])}, outcomes
    assert (api.count("/v1/messages"), api.count("/v1/responses")) == (3, 3)
    assert any(r.contains(SKILL_DESC_MARK) for r in api.requests)
    for request in api.requests:
        body = request.body.decode("utf-8", "replace")
        seen = [m for m in MARKERS if m in body]
        assert not seen, f"{request.path} request mentions the project's own setup: {seen}"
    for cell, data in transcripts.items():
        text = data.decode("utf-8", "replace")
        seen = [m for m in MARKERS if m in text]
        assert not seen, f"{cell}'s transcript mentions the project's own setup: {seen}"
        assert str(root) not in text, f"{cell} ran inside the project folder"
    assert_offline(api, proxy)
