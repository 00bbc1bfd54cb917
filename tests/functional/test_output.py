"""What a run prints: quiet and verbose, colour only on a terminal, a line for a slow trial, counters over what
runs, each failure once — and the permissions of what it writes."""

from __future__ import annotations

import os
import pty
import re
import select
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from .project import Project, copy_of, one_case, populated

ANSI = re.compile(r"\x1b\[[0-9;]*m")
PROGRESS = re.compile(r"^\[\s*(\d+)/(\d+)[^\]]*\] (trial|grade):", re.M)
DODO = "from skillmake.dodo import *  # noqa: F403\n"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path / "proj")


@pytest.fixture
def after_first_run(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The project after its first run (exit 0), copied from one built once."""
    return copy_of(populated(tmp_path_factory), tmp_path / "proj")


def on_terminal(project: Project, *args: str, env: dict[str, str] | None = None) -> str:
    """Run skillmake with its stdout and stderr on a pseudo-terminal, as a user at a shell sees it."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "skillmake", *args], cwd=project.root, stdin=subprocess.DEVNULL,
                            stdout=follower, stderr=follower, env=dict(os.environ, **(env or {})))
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    proc.wait(timeout=120)
    return b"".join(chunks).decode("utf-8", "replace")


def test_quiet_prints_only_failures_and_the_closing_line(project: Project) -> None:
    quiet = project.run("-q")
    assert quiet.code == 0, quiet.err
    assert not PROGRESS.search(quiet.out), quiet.out
    assert "ran 24 trials" in quiet.out.splitlines()[-1]
    assert "trial(s) per case" not in quiet.out, quiet.out  # a spec that passed prints no summary table
    project.replace("skills/alpha/SKILL.md", "Answer in UPPERCASE.", "Answer quietly.")
    failing = project.run("-q")
    assert failing.code == 1
    assert not PROGRESS.search(failing.out)
    assert "alpha (alpha, 2 trial(s) per case): FAILED" in failing.out and "beta (" not in failing.out
    assert "thresholds  FAILED" in failing.err and "6 of 6 with_skill trials failed" in failing.out
    assert "alpha: FAILED — 1 reason in its summary above" in failing.err  # each reason printed once


def test_verbose_lists_up_to_date_tasks_with_the_reason(after_first_run: Project) -> None:
    project = after_first_run
    verbose = project.run("-v")
    assert verbose.code == 0
    assert "trial:alpha/one/with_skill/0  up to date  (its key is in the store)" in verbose.out
    assert "grade:beta/five/alt/1  up to date  (its grade is in the store)" in verbose.out
    assert "validate:alpha.eval.yaml  up to date  (unchanged and valid)" in verbose.out
    assert "up to date" not in project.run().out.replace("up to date (", "")  # not without -v


def test_counters_count_only_what_runs_and_each_failure_is_printed_once(after_first_run: Project) -> None:
    project = after_first_run
    project.replace("skills/alpha/SKILL.md", "Answer in UPPERCASE.", "Answer plainly.")
    for args in ((), ("-v",)):  # -v creates every task; the counter still counts the 12 that run
        project.replace("skills/alpha/SKILL.md", "plainly", "plainly" + "!")
        run = project.run(*args)
        assert run.code == 1
        counters = [(int(done), int(total)) for done, total, _ in PROGRESS.findall(run.out)]
        assert counters == [(i, 12) for i in range(1, 13)], run.out
        assert run.out.count("6 of 6 with_skill trials failed") == 2, run.out  # the spec's header and its ✗ line
        assert "6 of 6 with_skill trials failed" not in run.err, run.err  # not again in a closing summary
        assert "alpha: FAILED — 1 reason in its summary above" in run.err
        assert run.out.splitlines()[-1].count("1 failed: thresholds") == 1


def test_colour_on_a_terminal_only(project: Project) -> None:
    shown = on_terminal(project)
    assert "\x1b[32mpass\x1b[0m" in shown, shown  # pass in green
    assert not ANSI.search(project.run().out + project.run("-a").out)  # a pipe: never
    assert ANSI.search(project.run("-a", "--color").out)
    assert not ANSI.search(on_terminal(project, "-a", env={"NO_COLOR": "1"}))
    assert not ANSI.search(on_terminal(project, "-a", "--no-color"))
    project.replace("skills/alpha/SKILL.md", "Answer in UPPERCASE.", "Answer plainly.")
    failing = on_terminal(project)
    assert "\x1b[31mfail\x1b[0m" in failing and "\x1b[31mFAILED\x1b[0m" in failing


def test_a_slow_trial_says_it_is_running(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "slow", {
        "slow.py": "import time, sys\nsys.stdin.read()\ntime.sleep(3)\nprint('done')\n",
        "skills/s/SKILL.md": "---\nname: s\ndescription: slow\n---\nbody\n",
        "s.eval.yaml": "skill: skills/s\nagent: {kind: command, command: [python3, slow.py]}\ncases:\n"
                       "  - id: one\n    prompt: go\n    checks: [{type: contains, needle: done}]\n",
    })
    run = project.run()
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    slow = [i for i, line in enumerate(lines) if re.search(r"… running trial:s/one/with_skill/0 \(started "
                                                           r"\d\d:\d\d:\d\d\)$", line)]
    done = [i for i, line in enumerate(lines) if "trial:s/one/with_skill/0  completed" in line]
    assert slow and done and slow[0] < done[0], run.out


def test_plain_doit_follows_the_same_conventions(project: Project) -> None:
    project.write("dodo.py", DODO)
    quiet = project.run(cmd=[sys.executable, "-m", "doit", "-v", "0"])
    assert quiet.code == 0, quiet.err
    assert not PROGRESS.search(quiet.out) and "ran 24 trials" in quiet.out
    project.replace("skills/beta/SKILL.md", "Use UPPERCASE.", "Use UPPERCASE!")
    counted = project.run(cmd=[sys.executable, "-m", "doit"])
    assert [int(t) for _, t, _ in PROGRESS.findall(counted.out)] == [16] * 16  # 8 trials and their 8 grades


@pytest.mark.parametrize(("mask", "file_mode", "object_mode"), [(0o022, 0o644, 0o444), (0o077, 0o600, 0o400)])
def test_written_files_follow_the_umask(tmp_path: Path, mask: int, file_mode: int, object_mode: int) -> None:
    project = one_case(tmp_path / "proj")  # one trial writes every kind of file a run writes
    run = subprocess.run(["sh", "-c", f'umask {mask:03o} && exec "$0" -m skillmake', sys.executable],
                         cwd=project.root, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    state = project.root / ".skillmake"
    for rel in ("reports/a/report.json", "reports/a/junit.xml", "reports/a/report.html"):
        assert stat.S_IMODE((state / rel).stat().st_mode) == file_mode, rel
    actions = [p for p in (state / "actions").rglob("*.json")]
    objects = [p for p in (state / "objects").rglob("*") if p.is_file()]
    assert actions and objects
    assert {stat.S_IMODE(p.stat().st_mode) for p in actions} == {file_mode}
    assert {stat.S_IMODE(p.stat().st_mode) for p in objects} == {object_mode}
