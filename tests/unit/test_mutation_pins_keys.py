"""Pins from the mutation run (bench/mutation.py): what the key parts contain, through KeyMaker's public methods."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillmake.run.keys import KeyMaker, grade_part, resolved_model
from skillmake.spec.loader import load_spec
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Spec

SPEC = """\
skill: skills/s
agent: {agent}
baseline: true
{extra}cases:
  - id: a
    prompt: do it
    checks: [{{type: contains, needle: x}}]
"""


def loaded(root: Path, agent: str, extra: str = "") -> Spec:
    (root / "skills/s").mkdir(parents=True, exist_ok=True)
    (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nthe skill body\n")
    (root / "agent.py").write_text("print('hi')\n")
    path = root / "p.eval.yaml"
    path.write_text(SPEC.format(agent=agent, extra=extra))
    return load_spec(str(path), root=str(root))


def fragment(data: bytes) -> dict[str, object]:
    return json.loads(data)


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_an_api_agent_sees_the_skill_as_its_system_prompt_and_the_baseline_does_not(tmp_path: Path,
                                                                                   kind: str) -> None:
    spec = loaded(tmp_path, f"{{kind: {kind}, model: some-model}}")
    maker, case = KeyMaker(str(tmp_path)), spec.cases[0]
    arms = {a.name: a for a in spec.arms}
    with_skill = fragment(maker.run_part(spec, case, arms[WITH_SKILL]).data)
    without = fragment(maker.run_part(spec, case, arms[WITHOUT_SKILL]).data)
    assert "the skill body" in str(with_skill["system_prompt"])
    assert without["system_prompt"] is None


def test_a_command_agent_gets_only_an_explicit_system_prompt(tmp_path: Path) -> None:
    plain = loaded(tmp_path / "plain", "{kind: command, command: [python3, agent.py]}")
    arm = plain.arms[0]
    assert "system_prompt" not in fragment(KeyMaker(str(tmp_path / "plain")).run_part(plain, plain.cases[0], arm).data)
    told = loaded(tmp_path / "told", "{kind: command, command: [python3, agent.py]}", "system_prompt: be brief\n")
    run = fragment(KeyMaker(str(tmp_path / "told")).run_part(told, told.cases[0], told.arms[0]).data)
    assert run["system_prompt"] == "be brief"


def test_the_agent_part_names_the_resolved_model_and_the_cli_version(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "fake-claude"
    fake.write_text("#!/bin/sh\necho '9.9.9 (Claude Code)'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(fake))
    spec = loaded(tmp_path / "cli", "{kind: claude-code, model: claude-x}")
    agent = fragment(KeyMaker(str(tmp_path / "cli")).agent_part(spec, spec.arms[0].agent).data)
    assert agent["model"] == "claude-x"
    assert agent["version"] == "9.9.9 (Claude Code)"
    command = loaded(tmp_path / "cmd", "{kind: command, command: [python3, agent.py], model: m1}")
    agent = fragment(KeyMaker(str(tmp_path / "cmd")).agent_part(command, command.arms[0].agent).data)
    assert agent["model"] == "m1" and agent["version"] is None
    assert list(agent["program_files"]) == ["agent.py"]  # type: ignore[call-overload]


def test_resolved_model_takes_the_spec_then_the_environment_then_the_default(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    command = loaded(tmp_path / "cmd", "{kind: command, command: [python3, agent.py], model: m1}")
    assert resolved_model(command.arms[0].agent) == "m1"
    api = loaded(tmp_path / "api", "{kind: anthropic}")
    monkeypatch.setenv("ANTHROPIC_MODEL", "from-the-environment")
    assert resolved_model(api.arms[0].agent) == "from-the-environment"
    agent = fragment(KeyMaker(str(tmp_path / "api")).agent_part(api, api.arms[0].agent).data)
    assert agent["model"] == "from-the-environment"  # the model that runs, not the spec's None
    monkeypatch.delenv("ANTHROPIC_MODEL")
    assert resolved_model(api.arms[0].agent)  # the default, never None


def test_a_trial_key_lists_the_skill_part_only_for_arms_with_the_skill(tmp_path: Path) -> None:
    spec = loaded(tmp_path, "{kind: command, command: [python3, agent.py]}")
    maker = KeyMaker(str(tmp_path))
    arms = {a.name: a for a in spec.arms}
    with_skill = maker.trial_key(spec, spec.cases[0], arms[WITH_SKILL], 0)
    without = maker.trial_key(spec, spec.cases[0], arms[WITHOUT_SKILL], 0)
    assert with_skill.parts() == [with_skill.skill, with_skill.run, with_skill.agent]
    assert without.parts() == [without.run, without.agent]


def test_the_grade_part_takes_the_specs_pass_threshold_unless_the_case_sets_one(tmp_path: Path) -> None:
    judge = "judge: {{provider: anthropic, model: claude-haiku-4-5, pass_threshold: {}}}\n"
    cmd = "{kind: command, command: [python3, agent.py]}"
    three = loaded(tmp_path / "three", cmd, judge.format(3))
    four = loaded(tmp_path / "four", cmd, judge.format(4))
    assert fragment(grade_part(three, three.cases[0]).data)["pass_threshold"] == 3
    assert grade_part(three, three.cases[0]).digest != grade_part(four, four.cases[0]).digest
