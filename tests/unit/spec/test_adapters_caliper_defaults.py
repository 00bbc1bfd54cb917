"""caliper run's defaults (--k 3, --timeout 120) for specs read from caliper: below the project config, above
skillmake's own (1 trial, 300 s), beaten by the command line and the environment; a native spec keeps 1/300."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillmake.commands import argv
from skillmake.engine.main import doit_options
from skillmake.run.keys import KeyMaker
from skillmake.run.project import Project
from skillmake.spec import overrides
from skillmake.spec.model import Spec
from tests.conftest import write

SEED = Path(__file__).resolve().parents[2] / "data" / "seeds" / "caliper" / "quick-start"
# A native spec on the same skill that says nothing about trials or timeout.
PLAIN = """\
skill: skill/SKILL.md
agent: {kind: codex}
cases:
  - {id: c1, prompt: hi, checks: [{type: contains, needle: hi}]}
"""


pytestmark = pytest.mark.usefixtures("clean_run_settings")


def parse(*words: str) -> argv.Invocation:
    return argv.parse(list(words), doit_commands=lambda: {name: argv.doit_table(options)
                                                          for name, options in doit_options().items()})


def project(root: Path, *, config: str = "", twin: bool = False) -> Project:
    """The caliper quick start (my-skill, and its native twin when asked) in `skill/`, beside a plain native spec."""
    shutil.copytree(SEED, root / "skill", ignore=None if twin else shutil.ignore_patterns("*-native.eval.yaml"))
    write(root / "plain.eval.yaml", PLAIN)
    if config:
        write(root / "skillmake.toml", config)
    return Project.open(str(root))


def settings(p: Project, name: str) -> tuple[Spec, dict[str, str]]:
    spec = next(s for s in p.specs if s.name == name)
    return spec, {k: s.line() for k, s in p.settings[name].items()}


def test_a_caliper_spec_runs_with_calipers_defaults(tmp_path: Path) -> None:
    p = project(tmp_path)
    spec, lines = settings(p, "my-skill")
    assert spec.format == "caliper" and (spec.trials, spec.timeout) == (3, 120.0)
    assert lines["trials"] == "trials: 3 (caliper's default)"
    assert lines["timeout"] == "timeout: 120s (caliper's default)"
    # caliper's other defaults are none of these: the model and judge stay the backend's own
    assert lines["model"] == "model: the agent's default (default)"
    # What `skillmake explain` shows for it, beside the settings the command line gives every spec.
    assert overrides.format_default_lines(p.settings) == ["my-skill: trials: 3 (caliper's default)",
                                                          "my-skill: timeout: 120s (caliper's default)"]
    # caliper's --workers 4 is parallelism only: skillmake's -j default stays.
    assert overrides.jobs(p.config).line() == "jobs: 1 (default)"


def test_a_native_spec_keeps_skillmakes_defaults(tmp_path: Path) -> None:
    spec, lines = settings(project(tmp_path), "plain")
    assert spec.format is None and (spec.trials, spec.timeout) == (1, 300.0)
    assert (lines["trials"], lines["timeout"]) == ("trials: 1 (default)", "timeout: 300s (default)")


def test_the_project_config_beats_calipers_default(tmp_path: Path) -> None:
    spec, lines = settings(project(tmp_path / "both", config="trials = 2\ntimeout = 60\n"), "my-skill")
    assert (spec.trials, spec.timeout) == (2, 60.0)
    assert (lines["trials"], lines["timeout"]) == ("trials: 2 (project config)", "timeout: 60s (project config)")
    # Each setting on its own: the one the config leaves unset is still caliper's.
    p = project(tmp_path / "trials", config="trials = 2\n")
    spec, lines = settings(p, "my-skill")
    assert (spec.trials, spec.timeout) == (2, 120.0) and lines["timeout"] == "timeout: 120s (caliper's default)"
    assert overrides.format_default_lines(p.settings) == ["my-skill: timeout: 120s (caliper's default)"]
    assert settings(p, "plain")[1]["timeout"] == "timeout: 300s (default)"


def test_the_environment_beats_calipers_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLMAKE_TRIALS", "1")
    monkeypatch.setenv("SKILLMAKE_TIMEOUT", "30")
    p = project(tmp_path, config="trials = 2\n")
    spec, lines = settings(p, "my-skill")
    assert (spec.trials, spec.timeout) == (1, 30.0)
    assert (lines["trials"], lines["timeout"]) == ("trials: 1 (environment)", "timeout: 30s (environment)")
    assert overrides.format_default_lines(p.settings) == []


@pytest.mark.parametrize("words", [("--k", "1"), ("--trials", "1"), ("--k=1",)])
def test_k_and_trials_beat_calipers_default_and_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, words: tuple[str, ...]) -> None:
    monkeypatch.setenv("SKILLMAKE_TRIALS", "4")
    overrides.set_command_line(dict(parse(*words, "--timeout", "10").overrides))
    spec, lines = settings(project(tmp_path), "my-skill")
    assert (spec.trials, spec.timeout) == (1, 10.0)
    assert (lines["trials"], lines["timeout"]) == ("trials: 1 (command line)", "timeout: 10s (command line)")


def test_keys_follow_only_the_trial_count(tmp_path: Path) -> None:
    """caliper's defaults change how many trials run, never a trial's key: the seed's 3 trials are its native
    twin's (which writes `trials: 3`), and --k 1 --timeout 300 keeps trial 0's key."""
    p = project(tmp_path, twin=True)
    seed, twin = (next(s for s in p.specs if s.name == n) for n in ("my-skill", "my-skill-native"))
    assert (seed.trials, seed.timeout) == (twin.trials, twin.timeout) == (3, 120.0)
    keys = KeyMaker(p.root)

    def trial_keys(spec: Spec) -> list[str]:
        return [keys.trial_key(spec, spec.cases[0], spec.arms[0], k).key for k in range(spec.trials)]

    by_default = trial_keys(seed)
    assert len(set(by_default)) == 3 and by_default == trial_keys(twin)
    overrides.set_command_line({"trials": "1", "timeout": "300"})
    one = next(s for s in project(tmp_path / "again").specs if s.name == "my-skill")
    assert (one.trials, one.timeout) == (1, 300.0)
    assert trial_keys(one) == by_default[:1]
