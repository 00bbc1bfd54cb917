"""overrides.py: command line > environment > spec > project config > default, applied to the loaded specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillmake.run.judges import resolve
from skillmake.run.project import Project
from skillmake.spec import overrides
from skillmake.spec.model import Spec
from tests.conftest import write

SPEC = """\
skill: skills/a
agent: {kind: command, command: [echo, hi]}
{extra}
variants:
  - {name: small, agent: {model: tiny-1}}
cases:
  - {id: c1, prompt: hi, timeout: 5, checks: [{type: contains, needle: hi}]}
  - {id: c2, prompt: ho, rubric: "Is it good? 1-5"}
"""


pytestmark = pytest.mark.usefixtures("clean_run_settings")


def project(root: Path, *, extra: str = "", config: str = "") -> Project:
    write(root / "skills" / "a" / "SKILL.md", "---\nname: a\ndescription: d\n---\nbody\n")
    write(root / "a.eval.yaml", SPEC.replace("{extra}", extra))
    if config:
        write(root / "skillmake.toml", config)
    return Project.open(str(root))


def only(p: Project) -> tuple[Spec, dict[str, str]]:
    [spec] = p.specs
    return spec, {name: s.line() for name, s in p.settings[spec.name].items()}


def test_defaults_when_nobody_says(tmp_path: Path) -> None:
    spec, lines = only(project(tmp_path))
    assert (spec.trials, spec.timeout) == (1, 300.0)
    assert lines["trials"] == "trials: 1 (default)" and lines["timeout"] == "timeout: 300s (default)"
    assert lines["model"] == "model: the agent's default (default)"
    assert lines["judge_provider"] == "judge_provider: the provider's default (default)"


def test_each_level_beats_the_one_below(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = "trials = 2\ntimeout = 60\n"
    spec, lines = only(project(tmp_path / "p1", config=config))
    assert (spec.trials, spec.timeout, lines["trials"]) == (2, 60.0, "trials: 2 (project config)")

    spec, lines = only(project(tmp_path / "p2", extra="trials: 1\ntimeout: 30", config=config))
    assert (spec.trials, spec.timeout, lines["trials"]) == (1, 30.0, "trials: 1 (spec)")  # an explicit 1 counts

    monkeypatch.setenv("SKILLMAKE_TRIALS", "4")
    spec, lines = only(project(tmp_path / "p3", extra="trials: 1", config=config))
    assert (spec.trials, lines["trials"]) == (4, "trials: 4 (environment)")

    overrides.set_command_line({"trials": "5"})
    spec, lines = only(project(tmp_path / "p4", extra="trials: 1", config=config))
    assert (spec.trials, lines["trials"]) == (5, "trials: 5 (command line)")
    assert overrides.describe(project(tmp_path / "p5").settings["a"])[:2] == [
        "trials: 5 (command line)", "timeout: 300s (default)"]


def test_the_command_line_reaches_worker_processes_through_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    overrides.set_command_line({"model": "m-1"})
    environ = {"SKILLMAKE_COMMAND_LINE_SETTINGS": overrides.os.environ["SKILLMAKE_COMMAND_LINE_SETTINGS"]}
    overrides.set_command_line({})  # a spawned worker: nothing set in its memory, only its environment
    given = overrides.overridden("model", environ=environ)
    assert given is not None and (given.value, given.source) == ("m-1", "command line")


@pytest.mark.parametrize(("var", "value", "message"), [
    ("SKILLMAKE_TRIALS", "three", r"\$SKILLMAKE_TRIALS 'three' is not a whole number from 1 to 1000"),
    ("SKILLMAKE_TRIALS", "100000000000000000000", r"is not a whole number from 1 to 1000"),
    ("SKILLMAKE_TIMEOUT", "1.0e+300", r"is not a number of seconds above 0 and at most 86400"),
    ("SKILLMAKE_JOBS", "0", r"\$SKILLMAKE_JOBS '0' is not a whole number"),
    ("SKILLMAKE_TIMEOUT", "-1", r"\$SKILLMAKE_TIMEOUT '-1' is not a number of seconds above 0"),
    ("SKILLMAKE_TIMEOUT", "inf", r"is not a number of seconds above 0"),
])
def test_bad_environment_values_are_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, var: str,
                                                 value: str, message: str) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(overrides.OverrideError, match=message) as caught:
        project(tmp_path)
    assert caught.value.exit_code == 3
    assert not (tmp_path / ".skillmake").exists()  # refused before anything was created


def test_bad_command_line_values_are_refused_when_given() -> None:
    with pytest.raises(overrides.OverrideError, match=r"--timeout 'soon' is not a number of seconds"):
        overrides.set_command_line({"timeout": "soon"})
    with pytest.raises(ValueError, match="not run settings: colour"):
        overrides.set_command_line({"colour": "red"})


def test_an_empty_environment_value_is_unset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLMAKE_TRIALS", " ")
    assert only(project(tmp_path))[0].trials == 1


def test_model_changes_trial_keys_and_timeout_does_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def keys(p: Project) -> dict[str, str]:
        spec = p.specs[0]
        return {f"{c.id}/{a.name}": p.keys.trial_key(spec, c, a, 0).key for c in spec.cases for a in spec.arms}

    before = keys(project(tmp_path))
    monkeypatch.setenv("SKILLMAKE_TIMEOUT", "7")
    timed = project(tmp_path)
    assert keys(timed) == before
    assert timed.specs[0].timeout == 7.0 and all(c.timeout is None for c in timed.specs[0].cases)  # beats cases'
    overrides.set_command_line({"model": "big-2"})
    moved = project(tmp_path)
    after = keys(moved)
    assert after["c1/with_skill"] != before["c1/with_skill"]
    assert after["c1/small"] == before["c1/small"]  # a variant that names its own model keeps it
    assert {a.name: a.agent.model for a in moved.specs[0].arms} == {"with_skill": "big-2", "small": "tiny-1"}


def test_project_config_fills_agent_settings_the_spec_leaves_unset(tmp_path: Path) -> None:
    p = project(tmp_path, extra="", config='agent = {model = "m-cfg", max_turns = 6}\n')
    spec, lines = only(p)
    assert spec.agent.model == "m-cfg" and spec.agent.max_turns == 6
    assert {a.name: (a.agent.model, a.agent.max_turns) for a in spec.arms} == {
        "with_skill": ("m-cfg", 6), "small": ("tiny-1", 6)}
    assert lines["model"] == "model: m-cfg (project config)"


def test_a_judge_model_given_for_the_run_brings_its_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLMAKE_JUDGE_MODEL", "gpt-5.4-mini")
    spec, lines = only(project(tmp_path, extra="judge: {provider: anthropic, model: claude-haiku-4-5}"))
    assert (spec.judge.provider, spec.judge.model) == ("openai", "gpt-5.4-mini")
    assert lines["judge_provider"] == "judge_provider: openai (environment, from the judge model)"
    assert resolve.choose(spec) == resolve.Choice(provider="openai", model="gpt-5.4-mini")


def test_a_judge_provider_given_for_the_run_drops_a_model_of_another_family(tmp_path: Path) -> None:
    overrides.set_command_line({"judge_provider": "openai"})
    spec, _ = only(project(tmp_path, extra="judge: {provider: anthropic, model: claude-haiku-4-5}"))
    assert (spec.judge.provider, spec.judge.model) == ("openai", None)
    choice = resolve.choose(spec)
    assert (choice.provider, choice.model, choice.source) == ("openai", "gpt-5.4", "--judge-provider")


def test_judge_provider_precedence_is_command_line_then_environment_then_spec(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    spec = only(project(tmp_path, extra="judge: {provider: anthropic}"))[0]
    monkeypatch.setenv(resolve.PROVIDER_ENV, "openai")
    assert resolve.choose(spec).provider == "openai"  # the environment beats the spec (it used to be the reverse)
    overrides.set_command_line({"judge_provider": "claude-code"})
    assert resolve.choose(spec).provider == "claude-code"


def test_the_judge_key_follows_the_judge_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = project(tmp_path)
    case = p.specs[0].case("c2")
    before = resolve.judge_key(p.specs[0], case)
    overrides.set_command_line({"judge_model": "claude-opus-4-1"})
    p = project(tmp_path)
    assert resolve.judge_key(p.specs[0], case)["model"] == "claude-opus-4-1" != before["model"]


def test_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = project(tmp_path, config="jobs = 3\n")
    assert p.config is not None
    assert overrides.jobs(p.config).line() == "jobs: 3 (project config)"
    monkeypatch.setenv("SKILLMAKE_JOBS", "6")
    assert overrides.jobs(p.config).line() == "jobs: 6 (environment)"
    overrides.set_command_line({"jobs": "2"})
    assert overrides.jobs(p.config).value == 2
