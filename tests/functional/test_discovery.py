"""Finding the project and its specs as git, pytest and doit users expect, with the real `skillmake` and `doit`:
the root found upward, [tool.skillmake] / skillmake.toml, no spec → exit 5, clashing names refused, other
tools' spec files skipped, fixtures beside the specs' folder, run settings from the environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .project import Project

SKILL = "---\nname: a\ndescription: answers\n---\nAnswer in UPPERCASE.\n"
SPEC = """\
skill: ../skills/a
agent: {kind: command, command: [python3, ../agent.py]}
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: ONE}]
"""
CALIPER = """\
skill:
  path: ./SKILL.md
  backend: codex
judge:
  backend: codex
tasks:
  - name: Produces the expected answer
    prompt: "what is 2 + 2?"
    expect: "The assistant answers 4."
"""
DODO = "from skillmake.dodo import *  # noqa: F403\n"


@pytest.fixture(autouse=True)
def _no_inherited_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("SKILLMAKE_ROOT", "SKILLMAKE_STORE", "SKILLMAKE_TRIALS", "SKILLMAKE_TIMEOUT", "SKILLMAKE_MODEL",
                "SKILLMAKE_JUDGE_MODEL", "SKILLMAKE_JUDGE_PROVIDER", "SKILLMAKE_JOBS",
                "SKILLMAKE_COMMAND_LINE_SETTINGS"):
        monkeypatch.delenv(var, raising=False)


def evals_project(root: Path, config: str | None = 'specs = ["evals"]\n') -> Project:
    """skills/a, an agent, and evals/a.eval.yaml; `config` is skillmake.toml (None: no configuration)."""
    from .project import AGENT

    files = {"agent.py": AGENT, "skills/a/SKILL.md": SKILL, "evals/a.eval.yaml": SPEC}
    if config is not None:
        files["skillmake.toml"] = config
    return Project.empty(root, files)


def run(cwd: Path, *args: str, doit: bool = False,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "doit" if doit else "skillmake", *args]
    return subprocess.run(argv, cwd=cwd, env=dict(os.environ, **(env or {})), capture_output=True, text=True,
                          timeout=300)


def test_from_a_subfolder_the_project_is_found_upward_and_doit_sees_the_same_specs(tmp_path: Path) -> None:
    p = evals_project(tmp_path / "proj")
    p.write("dodo.py", DODO)
    p.write("notes/draft.eval.yaml", "this: is not where specs live\n")  # outside `specs`: never read
    deep = p.root / "evals" / "deep"
    deep.mkdir()
    first = run(deep)
    assert first.returncode == 0, first.stderr + first.stdout
    assert "ran 1 trial " in first.stdout and len(p.calls()) == 1
    assert not (deep / ".skillmake").exists() and not (p.root / "evals" / ".skillmake").exists()
    assert (p.root / ".skillmake" / "reports" / "a" / "report.json").is_file()
    same = run(p.root, doit=True)  # plain doit at the root: the same specs, the same store
    assert same.returncode == 0, same.stderr + same.stdout
    assert "nothing stale" in same.stdout and len(p.calls()) == 1


def test_root_option_variable_wins_over_the_folder(tmp_path: Path) -> None:
    p = evals_project(tmp_path / "proj")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run(elsewhere, "validate", env={"SKILLMAKE_ROOT": str(p.root)})
    assert done.returncode == 0, done.stderr
    assert "1 spec(s) valid" in done.stdout
    assert not (elsewhere / ".skillmake").exists()


@pytest.mark.parametrize("args", [(), ("validate",), ("explain",)])
def test_no_spec_exits_5_and_creates_nothing(tmp_path: Path, args: tuple[str, ...]) -> None:
    empty = tmp_path / "empty" / "sub"
    empty.mkdir(parents=True)
    done = run(empty, *args)
    assert done.returncode == 5, done.stderr + done.stdout
    assert f"no specs found under {empty} (searched: .)" in done.stderr
    assert "skillmake init" in done.stderr and "Traceback" not in done.stderr
    assert not (empty / ".skillmake").exists()


def test_no_spec_under_plain_doit_exits_5_and_names_what_was_searched(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "proj", {"dodo.py": DODO, "skillmake.toml": 'specs = ["evals", "more/*"]\n'})
    done = run(p.root, doit=True)
    assert done.returncode == 5, done.stderr + done.stdout
    assert f"no specs found under {p.root} (searched: evals, more/*)" in done.stderr
    assert "Traceback" not in done.stderr and not (p.root / ".skillmake").exists()


def test_a_broken_configuration_is_located_and_exits_2(tmp_path: Path) -> None:
    p = evals_project(tmp_path / "proj", config=None)
    p.write("pyproject.toml", '[project]\nname = "x"\n\n[tool.skillmake]\nspecs = ["evals"]\ntrials = 0\n')
    for args in (("validate",), ()):
        done = run(p.root / "evals", *args)
        assert done.returncode == 2, done.stderr + done.stdout
        assert "pyproject.toml:6:10 /tool/skillmake/trials: 0 is out of range: must be >= 1" in done.stderr
        assert "Traceback" not in done.stderr
    assert len(p.calls()) == 0


def test_configured_store_and_exclude(tmp_path: Path) -> None:
    p = evals_project(tmp_path / "proj", config='exclude = ["drafts"]\nstore = "build/evals"\n')
    p.write("evals/drafts/half.eval.yaml", "skill: nowhere\n")  # excluded: its errors do not matter
    done = run(p.root)
    assert done.returncode == 0, done.stderr + done.stdout
    assert (p.root / "build" / "evals" / "reports" / "a" / "report.json").is_file()
    assert (p.root / "build" / "evals" / "doit.db").exists()
    assert not (p.root / ".skillmake").exists()
    again = run(p.root / "evals")  # found from below through skillmake.toml, the same store
    assert "nothing stale" in again.stdout and len(p.calls()) == 1


def test_two_specs_with_one_name_are_both_refused_also_when_one_is_validated_alone(tmp_path: Path) -> None:
    p = evals_project(tmp_path / "proj")
    p.write("evals/b/a.eval.yaml", SPEC.replace("../skills", "../../skills").replace("../agent", "../../agent"))
    whole = run(p.root)
    assert whole.returncode == 2, whole.stderr + whole.stdout
    assert "evals/a.eval.yaml:1:1 /name: spec name 'a' is also the name of evals/b/a.eval.yaml" in whole.stderr
    assert len(p.calls()) == 0  # neither ran (it used to run one of them and exit 0)
    project = run(p.root, "validate")
    assert project.returncode == 2
    assert "evals/a.eval.yaml:1:1 /name: spec name 'a' is also the name of evals/b/a.eval.yaml" in project.stderr
    assert "evals/b/a.eval.yaml:1:1 /name: spec name 'a' is also the name of evals/a.eval.yaml" in project.stderr
    alone = run(p.root, "validate", "evals/b/a.eval.yaml")
    assert alone.returncode == 2
    assert "evals/b/a.eval.yaml:1:1 /name: spec name 'a' is also the name of evals/a.eval.yaml" in alone.stderr
    p.write("evals/b/a.eval.yaml", "name: b\n" + p.read("evals/b/a.eval.yaml"))
    fixed = run(p.root, "validate", "evals/b/a.eval.yaml")
    assert fixed.returncode == 0, fixed.stderr


def test_a_caliper_file_in_the_tree_is_read_as_a_spec_and_never_stops_the_others(tmp_path: Path) -> None:
    p = evals_project(tmp_path / "proj", config=None)
    p.write("vendor/caliper/my-skill.eval.yaml", CALIPER)
    done = run(p.root)
    assert done.returncode == 2, done.stderr + done.stdout  # the caliper spec is invalid: its skill is missing
    assert len(p.calls()) == 1  # the unrelated spec ran all the same
    checked = run(p.root, "validate")
    assert checked.returncode == 2
    assert ("vendor/caliper/my-skill.eval.yaml:2:9 /skill/path: skill './SKILL.md' does not exist "
            "(looked at vendor/caliper/SKILL.md)") in checked.stderr
    assert "skipped" not in checked.stdout + checked.stderr
    p.write("vendor/caliper/SKILL.md", SKILL)
    assert run(p.root, "validate").returncode == 0


def test_fixtures_beside_the_specs_folder_are_allowed_inside_the_project(tmp_path: Path) -> None:
    p = evals_project(tmp_path / "proj")
    p.write("fixtures/input.txt", "from the fixture\n")
    staged = "prompt: say one\n    input_files: [{}]"
    p.write("evals/a.eval.yaml", SPEC.replace("prompt: say one", staged.format("../fixtures/input.txt")))
    ok = run(p.root, "validate")
    assert ok.returncode == 0, ok.stderr
    (tmp_path / "outside.txt").write_text("not the project's\n")
    p.write("evals/a.eval.yaml", SPEC.replace("prompt: say one", staged.format("../../outside.txt")))
    refused = run(p.root, "validate")
    assert refused.returncode == 2 and "outside the project root" in refused.stderr


def test_run_settings_from_the_environment_follow_the_keys(tmp_path: Path) -> None:
    p = evals_project(tmp_path / "proj", config='specs = ["evals"]\ntrials = 2\n')
    first = run(p.root)
    assert first.returncode == 0, first.stderr + first.stdout
    assert len(p.calls()) == 2  # the project's trials = 2 (the spec sets none)
    more = run(p.root, env={"SKILLMAKE_TRIALS": "3"})
    assert more.returncode == 0 and len(p.calls()) == 3  # exactly one more
    timed = run(p.root, env={"SKILLMAKE_TRIALS": "3", "SKILLMAKE_TIMEOUT": "100"})
    assert "nothing stale" in timed.stdout and len(p.calls()) == 3  # a timeout is not in the key
    other = run(p.root, env={"SKILLMAKE_TRIALS": "3", "SKILLMAKE_MODEL": "another-1"})
    assert other.returncode == 0 and len(p.calls()) == 6  # another model: every trial again
    bad = run(p.root, env={"SKILLMAKE_TRIALS": "lots"})
    assert bad.returncode == 3 and "$SKILLMAKE_TRIALS 'lots' is not a whole number" in bad.stderr
