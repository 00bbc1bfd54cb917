"""The two ways in: a three-line dodo.py with plain doit, and the `skillmake` front end."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .project import Project, copy_of, populated

DODO = '"""Evals of this project."""\nfrom skillmake.dodo import *  # noqa: F403\n'


def doit(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "doit", *args], cwd=project.root, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    p = Project(tmp_path / "proj")
    p.write("dodo.py", DODO)
    assert len(DODO.splitlines()) <= 3
    return p


def test_plain_doit_runs_lists_and_skips(project: Project) -> None:
    first = doit(project)
    assert first.returncode == 0, first.stderr + first.stdout
    assert len(project.calls()) == 24
    assert "ran 24 trials" in first.stdout
    again = doit(project)
    assert again.returncode == 0
    assert "nothing stale" in again.stdout
    assert len(project.calls()) == 24
    assert (project.root / ".skillmake" / "doit.db").exists()

    listed = doit(project, "list")
    assert listed.returncode == 0
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert names == ["batch", "grade", "report", "thresholds", "trial", "trigger", "validate"]
    every = doit(project, "list", "--all")
    assert "trial:alpha/one/with_skill/0" in every.stdout
    assert "grade:beta/five/alt/1" in every.stdout
    assert "report:alpha" in every.stdout

    info = doit(project, "info", "trial:alpha/one/with_skill/0")
    assert info.returncode == 0 and "up-to-date" in info.stdout


def test_doit_report_exits_1_on_a_failing_spec_as_skillmake_report_does(project: Project) -> None:
    project.replace("alpha.eval.yaml", "needle: ONE}", "needle: NEVER}")  # alpha's case one fails every trial
    assert doit(project).returncode == 1
    calls = len(project.calls())
    named = doit(project, "report")  # the report group, named: each report gates on its own spec
    assert named.returncode == 1, named.stdout + named.stderr
    assert "alpha" in named.stdout + named.stderr and len(project.calls()) == calls  # nothing ran again
    one = doit(project, "report:beta")  # a passing spec's report alone passes
    assert one.returncode == 0, one.stdout + one.stderr


def test_doit_validate_rechecks_only_changed_specs(project: Project) -> None:
    first = doit(project, "validate")
    assert first.returncode == 0, first.stderr
    assert len(project.calls()) == 0  # validate runs no trial
    project.replace("alpha.eval.yaml", "type: regex", "type: regexp")
    broken = doit(project, "validate")
    assert broken.returncode == 1
    assert "alpha.eval.yaml:16:21 /cases/2/checks/0/type: 'regexp' is not a check type" in broken.stderr
    assert "did you mean 'regex'?" in broken.stderr
    assert "beta.eval.yaml" not in broken.stderr
    project.replace("alpha.eval.yaml", "type: regexp", "type: regex")
    assert doit(project, "validate").returncode == 0
    (project.root / "fixtures" / "only3.txt").unlink()  # the spec file is unchanged, but now it is broken
    gone = doit(project, "validate")
    assert gone.returncode == 1
    assert ("alpha.eval.yaml:15:19 /cases/2/input_files/0: input file 'fixtures/only3.txt' does not exist"
            in gone.stderr)


def test_broken_spec_does_not_stop_the_others(project: Project) -> None:
    project.replace("alpha.eval.yaml", "trials: 2", "trials: two")
    run = doit(project)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "alpha.eval.yaml:3:9 /trials: expected an integer" in run.stderr
    # beta still ran: 2 cases × 3 arms × 2 trials
    assert len(project.calls()) == 12
    listed = doit(project, "list", "--all")
    assert listed.returncode == 0


def test_parallel_threads_forget_and_clean(project: Project) -> None:
    run = doit(project, "-n", "8", "-P", "thread")
    assert run.returncode == 0, run.stderr
    assert len(project.calls()) == 24
    assert "ran 24 trials" in run.stdout
    forget = doit(project, "forget", "trial")
    assert forget.returncode == 0
    assert "nothing stale" in doit(project).stdout  # the action cache decides reuse, not doit's db
    assert len(project.calls()) == 24
    runs = project.root / ".skillmake" / "runs" / "alpha"
    assert runs.is_dir()
    clean = doit(project, "clean", "trial")
    assert clean.returncode == 0, clean.stderr
    assert not any(runs.rglob("trial.json"))
    assert (project.root / ".skillmake" / "objects").is_dir()  # clean never empties the shared store


def test_skillmake_front_end_needs_no_dodo(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    # populated's first run is `skillmake` in the project with no dodo.py: exit 0 and 24 agent calls (asserted there)
    p = copy_of(populated(tmp_path_factory), tmp_path / "nododo")
    assert not (p.root / "dodo.py").exists() and len(p.calls()) == 24
    listed = p.run("list")
    assert "trial" in listed.out and listed.code == 0
    explained = p.run("explain")
    assert "would run 0 trials" in explained.out
    report = p.run("report")
    assert report.code == 0 and report.agent_calls == 0
    assert "nothing changed" in report.out
    p.replace("skills/beta/SKILL.md", "Use UPPERCASE.", "Use UPPERCASE, always.")
    explained = p.run("explain")
    assert explained.agent_calls == 0
    assert "trial:beta/four/with_skill/0  skill file SKILL.md changed" in explained.out
    assert "would run 8 trials" in explained.out  # with_skill and alt (which installs the skill)
    report = p.run("report")  # re-renders what is stored; the stale trials have no grade yet
    assert report.code == 1 and report.agent_calls == 0
    assert "beta: 8 of 12 trials have no grade" in report.err


def test_repository_dodo_runs_the_examples(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    shutil.copytree(repo / "examples", copy / "examples", ignore=shutil.ignore_patterns(".skillmake"))
    shutil.copy(repo / "dodo.py", copy / "dodo.py")
    run = subprocess.run([sys.executable, "-m", "doit"], cwd=copy, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr + run.stdout
    assert "ran 24 trials" in run.stdout
    again = subprocess.run([sys.executable, "-m", "doit"], cwd=copy, capture_output=True, text=True, timeout=300)
    assert again.stdout.strip().splitlines()[-1].startswith("skillmake: nothing stale")


def test_two_specs_with_one_name_are_an_error_not_a_crash(tmp_path: Path) -> None:
    p = Project(tmp_path / "dup")
    p.write("other/alpha.eval.yaml", "skill: ../skills/alpha\nagent: {kind: command, command: echo}\n"
                                     "cases: [{id: a, prompt: hi, checks: [{type: contains, needle: hi}]}]\n")
    run = p.run("validate")
    assert run.code == 2
    assert ("other/alpha.eval.yaml:1:1 /name: spec name 'alpha' is also the name of alpha.eval.yaml" in run.err)
    assert "set a different `name:`" in run.err
    listed = p.run("list", "--all")
    assert listed.code == 0 and "Traceback" not in listed.err
