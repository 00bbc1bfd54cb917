"""The `skillmake` command line behaves like the tools people know: one-line usage errors, --root, --version,
quiet exits into a closed pipe, explain by task name, and the exit-code table's codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .project import Project, copy_of, populated

SKILLMAKE = f"{sys.executable} -m skillmake"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path / "proj")


def shell(project: Project, command: str, *, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`command` through sh, so a pipe into `head` closes early as it does for a user."""
    return subprocess.run(["sh", "-c", command], cwd=cwd or project.root, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])))


@pytest.mark.parametrize(("args", "shown"), [
    (["--json"], "skillmake: unknown option --json"),
    (["-k"], "skillmake: option -k needs a value"),
    (["--watch"], "skillmake: unknown option --watch; did you mean `skillmake watch`"),
    (["--quite"], "skillmake: unknown option --quite; did you mean --quiet?"),
    (["list", "--jsn"], "skillmake: unknown option --jsn for `skillmake list`"),
    (["trial", "--alway-execute"], "skillmake: unknown option --alway-execute; did you mean --always-execute?"),
    (["--verbo"], "skillmake: option --verbo is ambiguous: --verbose, --verbosity"),
    # skillmake's own commands (argparse underneath) say it the same way
    (["validate", "--frmat", "json"], "skillmake: unknown option --frmat; did you mean --format?"),
    (["report", "--fromat"], "skillmake: unknown option --fromat"),
    (["promote", "--stauts"], "skillmake: unknown option --stauts; did you mean --status?"),
    (["import", "x.json", "--froce"], "skillmake: unknown option --froce; did you mean --force?"),
    (["init", "--agnet", "command"], "skillmake: unknown option --agnet; did you mean --agent?"),
    (["schema", "--pth"], "skillmake: unknown option --pth; did you mean --path?"),
    (["import"], "skillmake: the following arguments are required: file"),
])
def test_unknown_options_are_one_line_and_a_usage_line(project: Project, args: list[str], shown: str) -> None:
    run = project.run(*args, check_views=False)
    assert run.code == 3
    lines = run.err.splitlines()
    assert lines[0].startswith(shown), run.err
    assert lines[1].startswith("usage: skillmake") and len(lines) == 2, run.err
    assert "CmdOption" not in run.err and "Traceback" not in run.err
    assert project.calls() == []


def test_run_help_is_help(project: Project) -> None:
    for args in (["run", "--help"], ["-h"], ["help"]):
        run = project.run(*args, check_views=False)
        assert run.code == 0, run.err
        assert run.out.startswith("skillmake 0.1.0") and "--judge-model M" in run.out and "-j, --jobs N" in run.out
    listed = project.run("list", "--help", check_views=False)
    assert listed.code == 0 and "list tasks" in listed.out


def test_version_names_both(project: Project) -> None:
    run = project.run("--version", check_views=False)
    assert run.code == 0
    import doit.version

    assert run.out.splitlines() == ["skillmake 0.1.0", "doit " + ".".join(map(str, doit.version.VERSION))]


def test_root_works_for_every_command(project: Project, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = str(project.root)
    cmd = [sys.executable, "-m", "skillmake"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*cmd, *args], cwd=elsewhere, capture_output=True, text=True, timeout=300)

    assert run("validate", "--root", root).stdout.strip() == "2 spec(s) valid"
    first = run("--root", root, "-j", "2")
    assert first.returncode == 0, first.stderr
    assert "ran 24 trials" in first.stdout and len(project.calls()) == 24
    assert not (elsewhere / ".skillmake").exists()
    assert "nothing stale" in run("--root", root).stdout
    assert "trial:alpha/one/with_skill/0" in run("list", "--all", "--root", root).stdout
    assert "reuse 24 trials" in run("explain", "--root", root).stdout
    assert run("report", "--root", root).returncode == 0
    missing = run("--root", str(tmp_path / "nope"), "list")
    assert missing.returncode == 3 and "no such folder" in missing.stderr


def test_doit_options_work_through_skillmake_after_task_names(tmp_path: Path,
                                                             tmp_path_factory: pytest.TempPathFactory) -> None:
    project = copy_of(populated(tmp_path_factory), tmp_path / "proj")  # after its first run (exit 0)
    named = project.run("trial:alpha/one/with_skill/0")
    assert "trial:alpha/one/with_skill/0" not in named.out  # up to date: doit skips it
    again = project.run("trial:alpha/one/with_skill/0", "-a", "-s")  # make-style: options after the target
    assert again.code == 0, again.err
    assert "[1/1] trial:alpha/one/with_skill/0  completed" in again.out  # -a: doit executed it (the store served it)
    assert again.agent_calls == 0


def test_a_closed_pipe_ends_quietly(project: Project) -> None:
    for command in ("-h", "explain", "validate", "list --all", "--version", "-v", "report", "-q -v"):
        run = shell(project, f"{SKILLMAKE} {command} | head -c 0")
        assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr, (command, run.stderr)
        assert "Exception ignored" not in run.stderr, (command, run.stderr)
    # a run that prints a line per trial keeps going after the reader left, and finishes its trials
    assert len(project.calls()) == 24


def test_explain_takes_task_names_cells_and_globs(project: Project) -> None:
    plain = project.run("explain", "trial:alpha/one/with_skill/0", check_views=False)
    assert plain.code == 0, plain.err
    # What `skillmake trial:alpha/one/with_skill/0` runs: the trial, not its grade (one function decides both).
    assert plain.out.splitlines() == ["trial:alpha/one/with_skill/0  new",
                                      "would run 1 trial (1 agent call) and 0 grades; reuse 0 trials and 0 grades"]
    cells = project.run("explain", "alpha/*/without_skill/1", "grade:beta/five/alt/*", check_views=False)
    tasks = [line.split()[0] for line in cells.out.splitlines()[:-1]]
    assert tasks == ["trial:alpha/one/without_skill/1", "grade:alpha/one/without_skill/1",
                     "trial:alpha/two/without_skill/1", "grade:alpha/two/without_skill/1",
                     "trial:alpha/three/without_skill/1", "grade:alpha/three/without_skill/1",
                     "trial:beta/five/alt/0", "grade:beta/five/alt/0", "trial:beta/five/alt/1", "grade:beta/five/alt/1"]
    beta = project.run("explain", "report:beta", check_views=False).out
    assert beta.endswith("would run 12 trials (12 agent calls) and 12 grades; reuse 0 trials and 0 grades\n")
    assert len(project.run("explain", "alpha/two", check_views=False).out.splitlines()) == 4 * 2 + 1
    nothing = project.run("explain", "trial:gamma/*", check_views=False)
    assert nothing.code == 3
    assert nothing.err.splitlines()[0] == "skillmake: no spec, task or cell matches 'trial:gamma/*'"


def test_explain_json_and_run_settings(project: Project) -> None:
    run = project.run("explain", "--format", "json", "--trials", "3", "beta", check_views=False)
    assert run.code == 0, run.err
    payload = json.loads(run.out)
    assert set(payload) == {"version", "stale", "would_run", "reused", "overrides", "blocked", "invalid"}
    assert payload["would_run"] == {"trials": 18, "grades": 18, "judge_calls": 0, "trigger_trials": 0,
                                    "cost_usd": 0.0}
    assert payload["stale"][0] == {"task": "trial:beta/four/with_skill/0", "kind": "trial",
                                   "cell": "beta/four/with_skill/0", "reasons": ["new"], "estimate_usd": 0.0,
                                   "estimate_basis": "command agent: no model call it reports"}
    assert payload["overrides"] == ["trials: 3 (command line)"]
    text = project.run("explain", "--trials", "3", "beta", check_views=False)
    assert text.out.splitlines()[0] == "run setting trials: 3 (command line)"


def test_no_spec_found_is_exit_5(tmp_path: Path) -> None:
    empty = Project.empty(tmp_path / "empty", {"notes.md": "nothing here\n"})
    for args in ([], ["validate"], ["explain"], ["report"]):
        run = empty.run(*args, check_views=False)
        assert run.code == 5, (args, run.out, run.err)
        assert re.search(r"no specs? found", run.err), (args, run.err)


def test_an_invalid_spec_is_exit_2_and_a_task_bug_is_not_1(project: Project) -> None:
    project.replace("alpha.eval.yaml", "trials: 2", "trials: two")
    run = project.run()
    assert run.code == 2, run.err
    assert "alpha.eval.yaml:3:9 /trials: expected an integer" in run.err
    assert run.agent_calls == 12  # beta still ran
