"""`skillmake bisect`: a repository built here with 16 commits of a skill, where commit 11 breaks the case. The
answer is commit 11, found with at most 5 versions evaluated; a second bisect makes 0 agent calls; the user's work
tree is never checked out; bad input gets one clear line and exit 3."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from .project import Project, Run, copy_of, template

AGENT = """\
import os
from pathlib import Path
env = os.environ
with open(Path(__file__).resolve().parent / "calls.log", "a") as log:
    log.write(env["SKILLMAKE_CASE"] + " " + env["SKILLMAKE_TRIAL"] + "\\n")
body = Path(env["SKILLMAKE_SKILL"], "SKILL.md").read_text() if env.get("SKILLMAKE_SKILL") else ""
print(("no" if "BROKEN" in body else "PASS") + " done")
"""

SPEC = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
trials: 2
cases:
  - id: greet
    prompt: hi
    checks:
      - {type: contains, needle: PASS, id: says-pass}
      - {type: contains, needle: done, id: says-done}
  - id: other
    prompt: other
    checks: [{type: contains, needle: done}]
"""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


FIRST: dict[str, Any] = {}


def _build(root: Path) -> Project:
    project = Project.empty(root, {"agent.py": AGENT, "s.eval.yaml": SPEC, ".gitignore": "calls.log\n.skillmake/\n"})
    _git(root, "init", "-q", ".")
    _git(root, "config", "user.email", "t@example.com")
    _git(root, "config", "user.name", "t")
    for i in range(1, 17):
        body = f"---\nname: s\ndescription: says hi\n---\nversion {i}\n" + ("BROKEN\n" if i >= 11 else "")
        project.write("skills/s/SKILL.md", body)
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"commit {i}")
    FIRST.update(head=_git(root, "rev-parse", "HEAD"), status=_git(root, "status", "--porcelain"))
    FIRST["first"] = project.run("bisect", "greet", check_views=False)
    FIRST["calls"] = project.calls()
    FIRST["second"] = project.run("bisect", "greet", check_views=False)
    return project


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository after one bisect of case greet (its trials are in the store), and a second one."""
    return template(tmp_path_factory, "bisect-repo", _build)


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    return copy_of(repo, tmp_path / "proj")


def _commit(root: Path, n: int) -> str:
    log = _git(root, "log", "--format=%H %s")
    return next(line.split()[0] for line in log.splitlines() if line.endswith(f"commit {n}"))


def test_finds_commit_11_with_at_most_5_versions_and_a_second_bisect_costs_nothing(repo: Path) -> None:
    first: Run = FIRST["first"]
    assert first.code == 0, first.out + first.err
    eleven = _commit(repo, 11)
    assert f"first bad commit: {eleven} commit 11" in first.out
    assert "skills/s/SKILL.md | " in first.out  # the diff stat of the skill's files
    assert f"evidence: at {eleven[:12]} pass rate 0.00 (0/2) < 1.00" in first.out
    assert f"at the version before it, {_commit(repo, 10)[:12]}, pass rate 1.00 (2/2)" in first.out
    assert "✗ trial 0: output contains 'PASS'" in first.out
    evaluated = int(first.out.split("versions evaluated: ")[1].split()[0])
    assert evaluated <= 5
    assert first.agent_calls == 2 * evaluated  # 2 trials per version, only of case greet
    assert {line.split()[0] for line in FIRST["calls"]} == {"greet"}
    # the user's work tree is not checked out: same HEAD, same (clean) status, the skill as committed last
    assert _git(repo, "rev-parse", "HEAD") == FIRST["head"]
    assert _git(repo, "status", "--porcelain") == FIRST["status"]
    assert "version 16" in (repo / "skills/s/SKILL.md").read_text()

    second: Run = FIRST["second"]
    assert second.code == 0 and second.agent_calls == 0, second.out + second.err
    assert f"first bad commit: {eleven}" in second.out
    assert "trials run 0, from the store 10" in second.out


def test_a_run_at_head_shares_the_trials_bisect_made(project: Project) -> None:
    run = project.run(check_views=False)
    assert run.agent_calls == 2  # case other's 2 trials; greet's at HEAD (commit 16) were run by the bisect
    assert {line.split()[0] for line in project.calls()[-2:]} == {"other"}


def test_good_and_bad_revisions_narrow_the_search(project: Project) -> None:
    run = project.run("bisect", "greet", "--good", _commit(project.root, 9), "--bad", _commit(project.root, 12),
                      check_views=False)
    assert run.code == 0, run.out + run.err
    assert f"first bad commit: {_commit(project.root, 11)}" in run.out
    assert "4 versions of skills/s" in run.out


def test_a_chosen_check(project: Project) -> None:
    flipped = project.run("bisect", "greet", "--check", "says-pass", check_views=False)
    assert flipped.code == 0 and f"first bad commit: {_commit(project.root, 11)}" in flipped.out
    assert flipped.agent_calls == 0  # the same trials, graded on one check
    steady = project.run("bisect", "greet", "--check", "says-done", check_views=False)
    assert steady.code == 3  # that check never fails: the bad end is not bad
    assert "the case is not bad at HEAD" in steady.err


@pytest.mark.parametrize(("args", "message"), [
    (["nope"], "no case 'nope'"),
    (["gret"], "did you mean 'greet'?"),
    (["greet", "--bad", "no-such-rev"], "--bad no-such-rev: git knows no revision 'no-such-rev'"),
    (["greet", "--good", "HEAD", "--bad", "HEAD~3"], "is not an ancestor of --bad HEAD~3"),
    (["greet", "--good", "HEAD~2"], "the case is already bad at the good end"),
    (["greet", "--check", "no-such-check"], "case greet has no check 'no-such-check'"),
    (["greet", "--arm", "without_skill"], "spec s has no arm 'without_skill'"),
    ([], "name one case to bisect"),
])
def test_bad_input_is_one_line_and_exit_3(project: Project, args: list[str], message: str) -> None:
    run = project.run("bisect", *args, check_views=False)
    assert run.code == 3, run.out + run.err
    assert message in run.err
    assert "Traceback" not in run.err


def test_outside_git_is_a_clear_error(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "plain", {"agent.py": AGENT, "s.eval.yaml": SPEC,
                                                 "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nv\n"})
    run = project.run("bisect", "greet", check_views=False)
    assert run.code == 3 and "is not inside a git repository" in run.err
    assert run.agent_calls == 0


def test_with_adaptive_trials_each_version_stops_at_its_decision(tmp_path: Path) -> None:
    """4 commits, the third breaks the case; at decide 0.5 seven equal outcomes decide, so each version evaluated
    runs 7 of its up to 10 trials."""
    spec = SPEC.replace("trials: 2", "trials: {min: 7, max: 10, decide: 0.5, batch: 1}")
    root = tmp_path / "small"
    project = Project.empty(root, {"agent.py": AGENT, "s.eval.yaml": spec, ".gitignore": "calls.log\n.skillmake/\n"})
    _git(root, "init", "-q", ".")
    _git(root, "config", "user.email", "t@example.com")
    _git(root, "config", "user.name", "t")
    for i in range(1, 5):
        broken = "BROKEN\n" if i >= 3 else ""
        project.write("skills/s/SKILL.md", f"---\nname: s\ndescription: d\n---\nv{i}\n{broken}")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"commit {i}")
    run = project.run("bisect", "greet", check_views=False)
    assert run.code == 0, run.out + run.err
    assert f"first bad commit: {_commit(root, 3)} commit 3" in run.out
    assert "pass rate 0.00 (0/7)  bad; decided below 0.50" in run.out
    assert "pass rate 1.00 (7/7)  good; decided above 0.50" in run.out
    assert "(decided below after 7 trials)" in run.out
    assert run.agent_calls == 3 * 7  # the bad end, commit 2, commit 3: 7 trials each, not 10
