"""A new user's hour on a fresh clone after this stop's engine changes (one task per stale cell, early checkout, the
records' fsync thread, striped key locks): where the terminal, the files and the exit code did not say the same
thing — each test is the repro of one finding."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .project import DODO, ONE_SPEC, Project, copy_of, one_case, template

DOIT = [sys.executable, "-m", "doit"]


@pytest.fixture(scope="module")
def ran_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one-case project with the three-line dodo.py, after one plain `doit` run: the template each test copies."""
    def build(root: Path) -> Project:
        project = one_case(root, **{"dodo.py": DODO})
        first = project.run(cmd=DOIT)
        assert first.code == 0 and first.agent_calls == 1, first.out + first.err
        return project
    return template(tmp_path_factory, "newcomer5-one-run", build)


def _into_a_closed_pipe(project: Project, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`argv | head` whose reader has gone before the first line: every write meets a broken pipe."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(argv, cwd=project.root, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)


# -- plain doit piped into head ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["list", "--all", "--status"], ["info", "trial:a/one/with_skill/0"]])
def test_plain_doit_list_and_info_piped_into_head_end_quietly(ran_once: Path, tmp_path: Path,
                                                               command: list[str]) -> None:
    """`doit list --all --status | head -3` in a project whose dodo.py imports skillmake printed a BrokenPipeError
    traceback and exited 3 (doit's "could not load tasks"): dodo.py guarded sys.stdout, but doit's command had
    taken its own reference to the stream before it loaded the dodo.py. It ends quietly, as `skillmake list` does."""
    project = copy_of(ran_once, tmp_path / "proj")
    piped = _into_a_closed_pipe(project, [*DOIT, *command])
    assert "Traceback" not in piped.stderr and "BrokenPipe" not in piped.stderr, piped.stderr
    assert piped.returncode == 0, piped.stderr  # doit's own code for both: the trial is up to date
    assert _into_a_closed_pipe(project, [sys.executable, "-m", "skillmake", *command]).returncode == 0


# -- a mistyped task --------------------------------------------------------------------------------------------------

def test_a_mistyped_task_group_suggests_the_group_not_a_doit_command(ran_once: Path, tmp_path: Path) -> None:
    """`skillmake tral` said "did you mean 'strace'?" (a doit command no newcomer means): the task groups are
    among the words it suggests from."""
    project = copy_of(ran_once, tmp_path / "proj")
    run = project.run("tral", check_views=False)
    assert run.code == 3, run.out + run.err
    assert "'tral' is not a command or a task; did you mean 'trial'?" in run.err, run.err
    assert run.agent_calls == 0


def test_a_spec_file_given_as_a_task_says_how_to_run_it(ran_once: Path, tmp_path: Path) -> None:
    """`skillmake a.eval.yaml` (as one runs `pytest test_a.py`) said "'a.eval.yaml' is not a command or a task" and
    sent the user to the task list: it names the spec's option, and validate's form, instead."""
    project = copy_of(ran_once, tmp_path / "proj")
    run = project.run("a.eval.yaml", check_views=False)
    assert run.code == 3, run.out + run.err
    assert "'a.eval.yaml' is a spec file, not a command or a task" in run.err, run.err
    assert "hint: `skillmake --spec a` runs it; `skillmake validate a.eval.yaml` checks it" in run.err, run.err


@pytest.mark.parametrize("front", ["skillmake", "doit"])
def test_a_mistyped_task_name_is_one_line_with_the_closest_task(ran_once: Path, tmp_path: Path, front: str) -> None:
    """`skillmake trial:a/on/with_skill/0` printed doit's raw `ERROR: Invalid parameter: "…". Must be a command,
    task, or a target.` and `Type "skillmake list"…`: one skillmake line naming the closest task instead, exit 3 as
    any bad command line (a glob that matches nothing stays exit 5), and nothing runs."""
    project = copy_of(ran_once, tmp_path / "proj")
    project.replace("a.eval.yaml", "say one", "say one again")  # its trial is stale: a typo must not run it
    argv = [sys.executable, "-m", "skillmake"] if front == "skillmake" else DOIT
    run = project.run(cmd=[*argv, "trial:a/on/with_skill/0"], check_views=False)
    assert run.code == 3, run.out + run.err
    assert "'trial:a/on/with_skill/0' is not a task; did you mean 'trial:a/one/with_skill/0'?" in run.err, run.err
    assert "Invalid parameter" not in run.err and "Traceback" not in run.err, run.err
    assert run.agent_calls == 0
    glob = project.run(cmd=[*argv, "trial:a/on/*"], check_views=False)
    assert glob.code == 5 and "matches no task" in glob.err, glob.err
    named = project.run(cmd=[*argv, "trial:a/one/with_skill/0"], check_views=False)  # the right name still runs
    assert named.code == 0 and named.agent_calls == 1, named.out + named.err


# -- validate from a subfolder ----------------------------------------------------------------------------------------

def test_validating_a_missing_file_is_one_error_not_a_name_clash_too(ran_once: Path, tmp_path: Path) -> None:
    """From skills/, `skillmake validate a.eval.yaml` (the spec is one folder up) said "cannot read", then
    "spec name 'a' is also the name of a.eval.yaml": a file that does not exist names no spec, so it clashes with
    none, and the count said 2 errors for one mistake."""
    project = copy_of(ran_once, tmp_path / "proj")
    proc = subprocess.run([sys.executable, "-m", "skillmake", "validate", "a.eval.yaml"], cwd=project.root / "skills",
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = proc.stdout + proc.stderr
    assert "skills/a.eval.yaml: cannot read: No such file or directory" in said, said
    assert "is also the name of" not in said and "1 error(s) in 1 of 1 spec(s)" in said, said


# -- init in a project that already evaluates the skill ---------------------------------------------------------------

def test_init_refuses_a_second_spec_of_the_same_name(ran_once: Path, tmp_path: Path) -> None:
    """`skillmake init` in a project whose a.eval.yaml (at its root) evaluates skills/a wrote skills/a.eval.yaml,
    a second spec named 'a': the project that validated a moment before then failed validate and every run with
    exit 2 on both files. init refuses, as it refuses to overwrite a spec, and writes nothing."""
    project = copy_of(ran_once, tmp_path / "proj")
    init = project.run("init", check_views=False)
    assert init.code == 3, init.out + init.err
    assert "a.eval.yaml is already a spec named 'a'" in init.err and "\n  hint: " in init.err, init.err
    assert not (project.root / "skills" / "a.eval.yaml").exists()
    assert project.run("validate", check_views=False).code == 0


def test_plain_doit_info_of_a_mistyped_task_is_one_line_not_a_keyerror(ran_once: Path, tmp_path: Path) -> None:
    """`doit info trial:a/on/with_skill/0` (plain doit, no info plugin configured) ended in doit's own `KeyError`
    traceback; `skillmake info` said one line with the closest name. Both say that line now, exit 3, and plain
    doit's info keeps its own code for a real task (0 up to date)."""
    project = copy_of(ran_once, tmp_path / "proj")
    for argv in (DOIT, [sys.executable, "-m", "skillmake"]):
        run = project.run(cmd=[*argv, "info", "trial:a/on/with_skill/0"], check_views=False)
        assert run.code == 3, run.out + run.err
        assert "no task named 'trial:a/on/with_skill/0'; did you mean 'trial:a/one/with_skill/0'?" in run.err, run.err
        assert "Traceback" not in run.err, run.err
    assert project.run(cmd=[*DOIT, "info", "trial:a/one/with_skill/0"], check_views=False).code == 0


# -- a named report task ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("front", ["skillmake", "doit"])
def test_a_named_report_task_of_a_failing_spec_exits_1(ran_once: Path, tmp_path: Path, front: str) -> None:
    """`skillmake report:a` (design.md: the report task aggregates the grades into the report files and the exit
    status) printed "nothing changed: …; 1 failing: a" and exited 0: the gate is the `thresholds` task, which a
    named report does not run. A named report task now fails with its spec's gate, as `skillmake report` does;
    a passing spec's stays 0."""
    project = copy_of(ran_once, tmp_path / "proj")
    argv = [sys.executable, "-m", "skillmake"] if front == "skillmake" else DOIT
    assert project.run(cmd=[*argv, "report:a"]).code == 0
    project.replace("a.eval.yaml", "needle: ONE", "needle: NEVER")  # its grade fails; the trial is reused
    run = project.run(cmd=[*argv, "report:a"])
    assert run.code == 1, run.out + run.err
    assert run.agent_calls == 0
    assert "report:a  FAILED" in run.out + run.err, run.out + run.err
    assert project.run("report").code == 1  # the same verdict, the same code
    # A failed report stops no other named one (doit would stop at it): b, after a, is still written.
    project.write("b.eval.yaml", ONE_SPEC)  # the same trial key as a's before the edit: nothing runs
    both = project.run(cmd=[*argv, "report:a", "report:b"])
    assert both.code == 1 and both.agent_calls == 0, both.out + both.err
    assert (project.root / ".skillmake" / "reports" / "b" / "report.json").exists(), both.out + both.err
