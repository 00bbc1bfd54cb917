"""The real claude and codex CLIs through skillmake's trial runner: records, the action cache, and exactly which
trials a SKILL.md edit re-runs, counted at the fake API."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillmake.run import trial
from skillmake.run.project import Project
from tests.e2e.cli_fakes import RecordingProxy
from tests.e2e.clis import require_cli
from tests.e2e.conftest import SKILL_BODY_MARK, Trials, assert_offline
from tests.e2e.test_claude_code import shout_model as claude_model
from tests.e2e.test_codex import shout_model as codex_model
from tests.fakeapi import FakeAPI

pytestmark = pytest.mark.e2e


def run_all(root: Path) -> dict[str, tuple[str, list[str], bool]]:
    """Every trial of the project: (spec/arm) → (outcome, activated skills, whether it ran)."""
    project = Project.open(str(root))
    assert project.broken == {}
    out = {}
    for spec in project.specs:
        for arm in spec.arms:
            case = spec.cases[0]
            done = trial.execute(project, spec, case, arm, 0, project.keys.trial_key(spec, case, arm, 0))
            out[f"{spec.name}/{arm.name}"] = (done.record["outcome"], done.record["activation"]["skills"], done.ran)
    return out


def test_trials_are_cached_and_a_skill_edit_reruns_only_the_skill_arms(api: FakeAPI, proxy: RecordingProxy,
                                                                       trials: Trials) -> None:
    require_cli("claude")
    require_cli("codex")
    root = trials.root / "project"
    for name, kind, model in (("cc", "claude-code", "claude-sonnet-4-6"), ("cx", "codex", "gpt-5.4")):
        (root / f"{name}.eval.yaml").write_text(f"skill: skills/shout\nagent: {{kind: {kind}, model: {model}}}\n"
                                                "baseline: true\ncases:\n  - id: greet\n    prompt: say hello\n"
                                                "    checks: [{type: min_length, length: 1}]\n")
    api.script = lambda r: claude_model(r) if r.path == "/v1/messages" else codex_model(r)

    first = run_all(root)
    assert first == {"cc/with_skill": ("completed", ["shout"], True), "cc/without_skill": ("completed", [], True),
                     "cx/with_skill": ("completed", ["shout"], True), "cx/without_skill": ("completed", [], True)}
    assert (api.count("/v1/messages"), api.count("/v1/responses")) == (3, 3)  # 2 with the skill + 1 baseline each

    assert all(not ran for _, _, ran in run_all(root).values())
    assert len(api.requests) == 6  # nothing ran again

    skill_md = root / "skills" / "shout" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace(SKILL_BODY_MARK, f"{SKILL_BODY_MARK}, always"))
    third = run_all(root)
    assert {k for k, (_, _, ran) in third.items() if ran} == {"cc/with_skill", "cx/with_skill"}
    assert (api.count("/v1/messages"), api.count("/v1/responses")) == (5, 5)
    assert_offline(api, proxy)
