"""What a newcomer saw disagree when trying this stop's features (issues 23, 24, 25) through the real `skillmake`
front end: shards of adaptive specs, … — each test is the repro of one finding."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import orjson
import pytest

from .project import AGENT, Project, copy_of, one_case, template

ADAPTIVE_SPEC = """\
skill: skills/a
agent: {kind: command, command: [python3, agent.py]}
trials: {min: 3, max: 12, decide: 0.5}
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: ONE}]
  - id: two
    prompt: say two
    checks: [{type: contains, needle: TWO}]
  - id: three
    prompt: say three
    checks: [{type: contains, needle: THREE}]
"""
SKILL = "---\nname: a\ndescription: shouts\n---\nAnswer in UPPERCASE.\n"


@pytest.fixture(scope="module")
def adaptive_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three-case adaptive project, never run (the template each test copies)."""
    return template(tmp_path_factory, "newcomer-adaptive", lambda root: Project.empty(
        root, {"agent.py": AGENT, "skills/a/SKILL.md": SKILL, "a.eval.yaml": ADAPTIVE_SPEC}))


# -- a CI matrix of an adaptive spec ----------------------------------------------------------------------------------

def test_shards_of_an_adaptive_spec_run_each_cell_to_its_decision_once(adaptive_project: Path, tmp_path: Path) -> None:
    """Split by trial key, a shard held trial 1 of a cell but not trial 0: its look after `min` trials found
    another job's trials missing and stopped, so one matrix pass left every cell undecided. A cell's sequence is
    one job's (the shard of its first trial's key): the matrix runs what one run would, each trial once."""
    whole = copy_of(adaptive_project, tmp_path / "whole")
    alone = whole.run()
    assert alone.code == 0, alone.out + alone.err
    matrix = copy_of(adaptive_project, tmp_path / "matrix")
    for i in (1, 2):
        job = matrix.run("--shard", f"{i}/2", check_views=False)
        assert job.code == 0, job.out + job.err
    calls = Counter(matrix.calls())
    assert sorted(calls) == sorted(whole.calls()), "the matrix ran other trials than one run does"
    assert set(calls.values()) == {1}, "a trial ran twice"
    report = matrix.run("report")
    assert report.code == 0, report.out + report.err
    assert "INCONCLUSIVE" not in report.out and "no grade" not in report.out, report.out


# -- a baseline that has not run yet ----------------------------------------------------------------------------------

BASELINE_SPEC = """\
skill: skills/a
agent: {kind: command, command: [python3, agent.py]}
baseline: true
thresholds: {min_baseline_delta: 0.5}
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: ONE}]
"""


def test_report_before_the_baseline_ran_does_not_ask_for_baseline_true(tmp_path: Path) -> None:
    """`skillmake -k with_skill`, then `skillmake report`: the spec says `baseline: true`, yet the gate's fix was
    'set baseline: true in the spec'. The baseline arm is there; its trials have not run."""
    project = Project.empty(tmp_path / "proj", {"agent.py": AGENT, "skills/a/SKILL.md": SKILL,
                                                "a.eval.yaml": BASELINE_SPEC})
    assert project.run("-k", "with_skill").code == 0
    report = project.run("report")
    assert report.code == 1, report.out + report.err
    assert "set baseline: true" not in report.out + report.err
    assert "no graded without_skill trial to compare with for min_baseline_delta 0.50" in report.err, report.err


# -- turning a flag off through the environment -----------------------------------------------------------------------

def test_skillmake_adaptive_false_turns_adaptive_trials_off(tmp_path: Path) -> None:
    """SKILLMAKE_BATCH=false turns batching off, but SKILLMAKE_ADAPTIVE=false ran every spec adaptively (3 to 30
    trials a cell): anything but '' and '0' read as on."""
    project = one_case(tmp_path / "proj")

    def planned(value: str) -> int:
        out = project.run("explain", "--format", "json", env={"SKILLMAKE_ADAPTIVE": value}, check_views=False)
        assert out.code == 0, out.out + out.err
        return int(orjson.loads(out.out)["would_run"]["trials"])

    assert {value: planned(value) for value in ("0", "false", "No", "off", "1", "yes")} == {
        "0": 1, "false": 1, "No": 1, "off": 1, "1": 30, "yes": 30}


# -- push to a remote it cannot reach ---------------------------------------------------------------------------------

def test_push_to_a_remote_it_cannot_reach_fails_and_does_not_say_the_rest_were_there(tmp_path: Path) -> None:
    """`skillmake push --remote nosuch://x` said 'pushed 0 of 1 results (0 B sent; the rest were there already)'
    and exited 0, after a note that the remote was unreachable: CI's push step passed with nothing sent."""
    project = one_case(tmp_path / "proj")
    assert project.run("-q").code == 0
    push = project.run("push", "--remote", "nosuch://x", check_views=False)
    assert push.code == 1, push.out + push.err
    assert "there already" not in push.out, push.out
    assert "2 results stay local" in push.err, push.err  # its trial and its grade
    assert "Traceback" not in push.err


def test_push_offline_says_to_drop_offline_not_to_set_a_remote(tmp_path: Path) -> None:
    """`skillmake push --offline --remote URL`: the remote is set; the fix offered was to set one."""
    project = one_case(tmp_path / "proj")
    push = project.run("push", "--offline", "--remote", (tmp_path / "bucket").as_uri(), check_views=False)
    assert push.code == 3, push.out + push.err
    assert "say where" not in push.err and "drop --offline" in push.err, push.err


# -- bisect on a case that never passed -------------------------------------------------------------------------------

def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=k@example.com", "-c", "user.name=k", *args], cwd=root, check=True,
                   capture_output=True)


def test_bisect_on_a_case_that_never_passed_does_not_ask_for_an_older_good(tmp_path: Path) -> None:
    """With no --good, the good end is the skill's first commit: there is no older revision to pass, yet the fix
    offered was 'pass --good REV with an older revision where it passes'."""
    project = one_case(tmp_path / "proj")
    _git(project.root, "init", "-q", ".")
    _git(project.root, "add", "-A")
    _git(project.root, "commit", "-qm", "one")
    project.write("skills/a/notes.md", "two\n")
    _git(project.root, "add", "-A")
    _git(project.root, "commit", "-qm", "two")
    project.replace("a.eval.yaml", "needle: ONE", "needle: ZZZ")  # no version of the skill makes this pass
    run = project.run("bisect", "one", check_views=False)
    assert run.code == 3, run.out + run.err
    assert "older revision" not in run.err, run.err
    assert "fails at every version of skills/a in git" in run.err, run.err


def test_bisect_with_a_typo_in_check_costs_no_trial(tmp_path: Path) -> None:
    """`--check` was looked up in the first trial's grade: a typo ran (and paid for) a trial, after printing the
    header, before 'case one has no check'. It is checked against the spec first, with a suggestion."""
    project = one_case(tmp_path / "proj")
    _git(project.root, "init", "-q", ".")
    _git(project.root, "add", "-A")
    _git(project.root, "commit", "-qm", "one")
    project.write("skills/a/notes.md", "two\n")
    _git(project.root, "add", "-A")
    _git(project.root, "commit", "-qm", "two")
    run = project.run("bisect", "one", "--check", "contain#0", check_views=False)
    assert run.code == 3, run.out + run.err
    assert run.agent_calls == 0 and run.out == "", run.out
    assert "case one has no check 'contain#0'; did you mean 'contains#0'?" in run.err, run.err


def test_bisect_on_an_invalid_spec_shows_its_errors_and_exits_2(tmp_path: Path) -> None:
    """A typo in the spec (`regexp`) made `skillmake bisect one` say "no case 'one'" with an empty list of cases,
    exit 3: the spec's errors were never shown. Its --help says 2 is an invalid spec."""
    project = one_case(tmp_path / "proj")
    _git(project.root, "init", "-q", ".")
    _git(project.root, "add", "-A")
    _git(project.root, "commit", "-qm", "one")
    project.replace("a.eval.yaml", "type: contains", "type: contain")
    run = project.run("bisect", "one", check_views=False)
    assert run.code == 2, run.out + run.err
    assert "a.eval.yaml:6:" in run.err and "'contain' is not a check type" in run.err, run.err
    assert "no case" not in run.err and run.agent_calls == 0, run.err


# -- report with an invalid spec --------------------------------------------------------------------------------------

def test_report_with_an_invalid_spec_shows_its_errors_and_exits_2(tmp_path: Path) -> None:
    """After a run, a typo in the spec made `skillmake report` say 'no results yet; run `skillmake` first' and
    exit 5: the results were there, and the spec's errors were never shown."""
    project = one_case(tmp_path / "proj")
    assert project.run("-q").code == 0
    project.replace("a.eval.yaml", "type: contains", "type: contain")
    report = project.run("report", check_views=False)
    assert report.code == 2, report.out + report.err
    assert "a.eval.yaml:6:" in report.err and "'contain' is not a check type" in report.err, report.err
    assert "no results yet" not in report.err


# -- explain --adaptive -----------------------------------------------------------------------------------------------

def test_explain_adaptive_counts_only_the_trials_a_look_can_skip(tmp_path: Path) -> None:
    """`explain --adaptive` on one case said 'adaptive: 30 of those trials run only while their case is undecided';
    the first 3 (min) run whatever happens: 27 are conditional."""
    project = one_case(tmp_path / "proj")
    out = project.run("explain", "--adaptive", check_views=False)
    assert out.code == 0, out.out + out.err
    assert "would run up to 30 trials" in out.out, out.out
    assert "adaptive: 27 of those trials run only while their case is undecided" in out.out, out.out


# -- a shard with none of the selected cells --------------------------------------------------------------------------

def test_a_shard_with_none_of_the_selected_cells_does_not_blame_the_selection(tmp_path: Path) -> None:
    """`--shard I/2 -k one` in the job that holds none of one's trials said "-k 'one' selects none of the 1 cells"
    (the selection matched; the other job has them). It says the shard has none of them, and exits 0."""
    project = one_case(tmp_path / "proj")
    jobs = [project.run("--shard", f"{i}/2", "-k", "one", check_views=False) for i in (1, 2)]
    assert [job.code for job in jobs] == [0, 0], [job.err for job in jobs]
    assert sorted(job.agent_calls for job in jobs) == [0, 1]
    idle = next(job for job in jobs if job.agent_calls == 0)
    assert "selects none" not in idle.err, idle.err
    assert "none of the 1 cell(s) -k 'one' selects is this shard's" in idle.err, idle.err


# -- a command after the run options ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["--adaptive", "explain"], ["--trials", "5", "bisect", "one"], ["-q", "push"]])
def test_a_command_after_options_says_to_put_it_first(tmp_path: Path, args: list[str]) -> None:
    """`skillmake --adaptive explain` said "'explain' is not a command or a task; did you mean 'explain'?"."""
    project = one_case(tmp_path / "proj")
    run = project.run(*args, check_views=False)
    assert run.code == 3, run.out + run.err
    word = next(a for a in args if not a.startswith("-") and not a.isdigit())
    assert f"{word!r} is a command: it goes first" in run.err, run.err
    assert "did you mean" not in run.err and run.agent_calls == 0, run.err


def test_report_after_run_options_is_the_report_command_and_runs_nothing(tmp_path: Path) -> None:
    """`skillmake --adaptive report` (the way to say the shards ran with --adaptive: `report --adaptive` is an
    unknown option) ran doit's task group `report`, and with it every stale trial: 30 agent calls in a command
    that 'runs nothing'. It is the report command, read with the run's settings."""
    project = one_case(tmp_path / "proj")
    assert project.run("-q").code == 0
    report = project.run("--adaptive", "report")
    assert report.agent_calls == 0, report.out
    assert report.code == 1, report.out + report.err  # 1 of up to 30 trials: undecided, so inconclusive
    assert "3–30 adaptive trials per case" in report.out and "skillmake report: reports in" in report.out, report.out


def test_bisect_under_the_baseline_arm_is_refused_before_any_trial(tmp_path: Path) -> None:
    """`bisect one --arm without_skill` ran the case without the skill at every version (all alike: the arm has no
    skill) and ended 'fails at every version'. The arm cannot change between versions of the skill: a usage error."""
    project = one_case(tmp_path / "proj")
    project.replace("a.eval.yaml", "cases:", "baseline: true\ncases:")
    _git(project.root, "init", "-q", ".")
    _git(project.root, "add", "-A")
    _git(project.root, "commit", "-qm", "one")
    project.write("skills/a/notes.md", "two\n")
    _git(project.root, "add", "-A")
    _git(project.root, "commit", "-qm", "two")
    run = project.run("bisect", "one", "--arm", "without_skill", check_views=False)
    assert run.code == 3, run.out + run.err
    assert run.agent_calls == 0 and run.out == "", run.out
    assert "arm without_skill runs without the skill" in run.err, run.err
