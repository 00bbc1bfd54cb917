"""Trial and grade keys: exactly the inputs design.md names, nothing else (paths, ids, timeouts are not)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillmake.run.keys import KeyMaker, grade_part, resolved_model
from skillmake.spec.loader import load_spec
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Spec

SPEC = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py], model: m1}
baseline: true
trials: 2
timeout: 30
cases:
  - id: a
    prompt: do it
    input_files: [fixtures/in.txt]
    checks: [{type: contains, needle: x}]
    rubric: is it good?
"""


def project(root: Path, spec: str = SPEC) -> Path:
    (root / "skills/s").mkdir(parents=True)
    (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (root / "fixtures").mkdir()
    (root / "fixtures/in.txt").write_text("input\n")
    (root / "agent.py").write_text("print('hi')\n")
    (root / "p.eval.yaml").write_text(spec)
    return root / "p.eval.yaml"


def keys(path: Path) -> dict[str, str]:
    spec = load_spec(str(path), root=str(path.parent))
    maker = KeyMaker(str(path.parent))
    return {f"{c.id}/{a.name}/{k}": maker.trial_key(spec, c, a, k).key
            for c in spec.cases for a in spec.arms for k in range(spec.trials)}


def loaded(path: Path) -> Spec:
    return load_spec(str(path), root=str(path.parent))


def test_keys_differ_by_arm_and_index_and_are_stable(tmp_path: Path) -> None:
    path = project(tmp_path)
    first = keys(path)
    assert len(set(first.values())) == 4
    assert keys(path) == first
    assert all(k.startswith("sha256:") and len(k) == 71 for k in first.values())


def test_paths_ids_timeouts_and_formatting_are_not_part_of_the_key(tmp_path: Path) -> None:
    path = project(tmp_path / "one")
    before = keys(path)
    moved = tmp_path / "elsewhere" / "two"
    shutil.copytree(tmp_path / "one", moved)
    assert keys(moved / "p.eval.yaml") == before  # another folder
    text = SPEC.replace("id: a", "id: renamed").replace("timeout: 30", "timeout: 99")
    text = text.replace("rubric: is it good?", "rubric: is it great?") + "# a comment\n"
    (moved / "p.eval.yaml").write_text(text)
    assert sorted(keys(moved / "p.eval.yaml").values()) == sorted(before.values())


def test_each_run_input_changes_the_key(tmp_path: Path) -> None:
    path = project(tmp_path)
    before = keys(path)
    (tmp_path / "fixtures/in.txt").write_text("other input\n")
    assert set(keys(path).values()).isdisjoint(before.values())  # a fixture: every trial of the case
    (tmp_path / "fixtures/in.txt").write_text("input\n")
    assert keys(path) == before  # content, not mtime
    (tmp_path / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nnew body\n")
    after = keys(path)
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {f"a/{WITH_SKILL}/0", f"a/{WITH_SKILL}/1"}  # never the baseline
    (tmp_path / "agent.py").write_text("print('changed agent')\n")
    assert set(keys(path).values()).isdisjoint(after.values())  # the agent program is an input too
    path.write_text(SPEC.replace("model: m1", "model: m2"))
    assert f"a/{WITHOUT_SKILL}/0" in keys(path)


def test_grade_part_covers_checks_and_judges_but_not_run_inputs(tmp_path: Path) -> None:
    path = project(tmp_path)
    base = grade_part(loaded(path), loaded(path).cases[0]).digest
    path.write_text(SPEC.replace("needle: x", "needle: y"))
    assert grade_part(loaded(path), loaded(path).cases[0]).digest != base
    path.write_text(SPEC.replace("rubric: is it good?", "rubric: is it great?"))
    assert grade_part(loaded(path), loaded(path).cases[0]).digest != base
    path.write_text(SPEC.replace("timeout: 30", "timeout: 5").replace("trials: 2", "trials: 7"))
    assert grade_part(loaded(path), loaded(path).cases[0]).digest == base


def test_grade_part_covers_the_content_of_the_files_checks_read(tmp_path: Path) -> None:
    """Issue 13: a python check's script and a json_schema check's schema_file are grade inputs by content."""
    spec = SPEC.replace("checks: [{type: contains, needle: x}]",
                        "output_files: [out.json]\n    checks: [{type: python, script: checks/c.py}, "
                        "{type: json_schema, file: out.json, schema_file: checks/s.json}]")
    path = project(tmp_path, spec)
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks/c.py").write_text("assert output\n")
    (tmp_path / "checks/s.json").write_text('{"type": "object"}\n')
    base = grade_part(loaded(path), loaded(path).cases[0]).digest
    (tmp_path / "checks/c.py").write_text("assert 'x' in output\n")
    after_script = grade_part(loaded(path), loaded(path).cases[0]).digest
    assert after_script != base
    (tmp_path / "checks/s.json").write_text('{"type": "array"}\n')
    after_schema = grade_part(loaded(path), loaded(path).cases[0]).digest
    assert after_schema not in (base, after_script)
    (tmp_path / "checks/c.py").write_text("assert output\n")
    (tmp_path / "checks/s.json").write_text('{"type": "object"}\n')
    assert grade_part(loaded(path), loaded(path).cases[0]).digest == base


# Pins from the mutation run (bench/mutation.py): what the key parts contain, through KeyMaker's public methods.
PIN_SPEC = """\
skill: skills/s
agent: {agent}
baseline: true
{extra}cases:
  - id: a
    prompt: do it
    checks: [{{type: contains, needle: x}}]
"""


def loaded_pin(root: Path, agent: str, extra: str = "") -> Spec:
    (root / "skills/s").mkdir(parents=True, exist_ok=True)
    (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nthe skill body\n")
    (root / "agent.py").write_text("print('hi')\n")
    path = root / "p.eval.yaml"
    path.write_text(PIN_SPEC.format(agent=agent, extra=extra))
    return load_spec(str(path), root=str(root))


def fragment(data: bytes) -> dict[str, object]:
    return json.loads(data)


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_an_api_agent_sees_the_skill_as_its_system_prompt_and_the_baseline_does_not(tmp_path: Path,
                                                                                   kind: str) -> None:
    spec = loaded_pin(tmp_path, f"{{kind: {kind}, model: some-model}}")
    maker, case = KeyMaker(str(tmp_path)), spec.cases[0]
    arms = {a.name: a for a in spec.arms}
    with_skill = fragment(maker.run_part(spec, case, arms[WITH_SKILL]).data)
    without = fragment(maker.run_part(spec, case, arms[WITHOUT_SKILL]).data)
    assert "the skill body" in str(with_skill["system_prompt"])
    assert without["system_prompt"] is None


def test_a_command_agent_gets_only_an_explicit_system_prompt(tmp_path: Path) -> None:
    plain = loaded_pin(tmp_path / "plain", "{kind: command, command: [python3, agent.py]}")
    arm = plain.arms[0]
    assert "system_prompt" not in fragment(KeyMaker(str(tmp_path / "plain")).run_part(plain, plain.cases[0], arm).data)
    told = loaded_pin(tmp_path / "told", "{kind: command, command: [python3, agent.py]}", "system_prompt: be brief\n")
    run = fragment(KeyMaker(str(tmp_path / "told")).run_part(told, told.cases[0], told.arms[0]).data)
    assert run["system_prompt"] == "be brief"


def test_the_agent_part_names_the_resolved_model_and_the_cli_version(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "fake-claude"
    fake.write_text("#!/bin/sh\necho '9.9.9 (Claude Code)'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(fake))
    spec = loaded_pin(tmp_path / "cli", "{kind: claude-code, model: claude-x}")
    agent = fragment(KeyMaker(str(tmp_path / "cli")).agent_part(spec, spec.arms[0].agent).data)
    assert agent["model"] == "claude-x"
    assert agent["version"] == "9.9.9 (Claude Code)"
    command = loaded_pin(tmp_path / "cmd", "{kind: command, command: [python3, agent.py], model: m1}")
    agent = fragment(KeyMaker(str(tmp_path / "cmd")).agent_part(command, command.arms[0].agent).data)
    assert agent["model"] == "m1" and agent["version"] is None
    assert list(agent["program_files"]) == ["agent.py"]  # type: ignore[call-overload]


def test_resolved_model_takes_the_spec_then_the_environment_then_the_default(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    command = loaded_pin(tmp_path / "cmd", "{kind: command, command: [python3, agent.py], model: m1}")
    assert resolved_model(command.arms[0].agent) == "m1"
    api = loaded_pin(tmp_path / "api", "{kind: anthropic}")
    monkeypatch.setenv("ANTHROPIC_MODEL", "from-the-environment")
    assert resolved_model(api.arms[0].agent) == "from-the-environment"
    agent = fragment(KeyMaker(str(tmp_path / "api")).agent_part(api, api.arms[0].agent).data)
    assert agent["model"] == "from-the-environment"  # the model that runs, not the spec's None
    monkeypatch.delenv("ANTHROPIC_MODEL")
    assert resolved_model(api.arms[0].agent)  # the default, never None


def test_a_trial_key_lists_the_skill_part_only_for_arms_with_the_skill(tmp_path: Path) -> None:
    spec = loaded_pin(tmp_path, "{kind: command, command: [python3, agent.py]}")
    maker = KeyMaker(str(tmp_path))
    arms = {a.name: a for a in spec.arms}
    with_skill = maker.trial_key(spec, spec.cases[0], arms[WITH_SKILL], 0)
    without = maker.trial_key(spec, spec.cases[0], arms[WITHOUT_SKILL], 0)
    assert with_skill.parts() == [with_skill.skill, with_skill.run, with_skill.agent]
    assert without.parts() == [without.run, without.agent]


def test_the_grade_part_takes_the_specs_pass_threshold_unless_the_case_sets_one(tmp_path: Path) -> None:
    judge = "judge: {{provider: anthropic, model: claude-haiku-4-5, pass_threshold: {}}}\n"
    cmd = "{kind: command, command: [python3, agent.py]}"
    three = loaded_pin(tmp_path / "three", cmd, judge.format(3))
    four = loaded_pin(tmp_path / "four", cmd, judge.format(4))
    assert fragment(grade_part(three, three.cases[0]).data)["pass_threshold"] == 3
    assert grade_part(three, three.cases[0]).digest != grade_part(four, four.cases[0]).digest
