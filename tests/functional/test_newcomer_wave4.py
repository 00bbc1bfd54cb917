"""Loose ends a newcomer saw through the real `skillmake` front end, where the header, the files and the exit code
did not agree with what happened (the team's notes of the last stop) — each test is the repro of one finding."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from .project import ONE_SPEC, Project, copy_of, one_case, template

ONE_RUN = "newcomer4-one-run"


@pytest.fixture(scope="module")
def ran_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one-case project after one run (its trial and grade stored): the template each test copies."""
    def build(root: Path) -> Project:
        project = one_case(root)
        assert project.run("-q").code == 0
        return project
    return template(tmp_path_factory, ONE_RUN, build)


# -- push: what is stored, not what the specs say ---------------------------------------------------------------------

def test_push_sends_what_is_stored_when_the_specs_are_gone(ran_once: Path, tmp_path: Path) -> None:
    """`skillmake push` in a project whose spec was deleted said "no specs found" and exited 5, with two results
    stored that the remote lacked: push reads the store, not the specs."""
    project = copy_of(ran_once, tmp_path / "proj")
    (project.root / "a.eval.yaml").unlink()
    bucket = (tmp_path / "bucket").as_uri()
    push = project.run("push", "--remote", bucket, check_views=False)
    assert push.code == 0, push.out + push.err
    assert "pushed 2 of 2 results" in push.out, push.out  # its trial and its grade


def test_push_with_nothing_stored_says_nothing_to_push_not_no_specs(tmp_path: Path) -> None:
    """In a folder where nothing ran, push said "no specs found … write a <skill>.eval.yaml": nothing is stored
    to push (the wrong folder, or no run yet), exit 5 as `report` with no results; no remote is still exit 3."""
    project = Project.empty(tmp_path / "empty", {"notes.txt": "not a project\n"})
    push = project.run("push", "--remote", (tmp_path / "bucket").as_uri(), check_views=False)
    assert push.code == 5, push.out + push.err
    assert "nothing to push" in push.err and "no specs found" not in push.err, push.err
    assert not (project.root / ".skillmake").exists()  # it creates nothing where there is nothing
    unset = project.run("push", env={"SKILLMAKE_REMOTE": ""}, check_views=False)
    assert unset.code == 3 and "no remote store" in unset.err, unset.err
    fresh = one_case(tmp_path / "fresh")  # specs, but no run yet: nothing stored either
    assert fresh.run("push", "--remote", (tmp_path / "bucket").as_uri(), check_views=False).code == 5


# -- a shard set in the environment -----------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [[], ["explain"]])
def test_a_bad_skillmake_shard_names_the_variable_not_the_option(tmp_path: Path, command: list[str]) -> None:
    """`SKILLMAKE_SHARD=9/4 skillmake` said "--shard '9/4': I must be 1 to 4" and told the user to run `--shard
    1/4 …`: they typed no --shard. The error names what they set, and the fix is in its terms."""
    project = one_case(tmp_path / "proj")
    run = project.run(*command, env={"SKILLMAKE_SHARD": "9/4"}, check_views=False)
    assert run.code == 3, run.out + run.err
    assert "SKILLMAKE_SHARD='9/4': I must be 1 to 4" in run.err, run.err
    # and its fix said as every error says one (explain printed it bare, the run with "  hint: ")
    assert "\n  hint: a matrix of 4 jobs runs SKILLMAKE_SHARD=1/4" in run.err, run.err
    assert "--shard" not in run.err, run.err
    assert "Traceback" not in run.err


# -- explain's own usage ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["--max-connections", "0"], ["--trials", "x"], ["--timeout", "-1"]])
def test_a_bad_value_of_explain_prints_explains_usage(tmp_path: Path, args: list[str]) -> None:
    """`skillmake explain --max-connections 0` printed the run's usage line (`usage: skillmake [OPTIONS] [TASK…]`),
    sending the user to `skillmake --help` for a command they did not run."""
    project = one_case(tmp_path / "proj")
    run = project.run("explain", *args, check_views=False)
    assert run.code == 3, run.out + run.err
    assert "usage: skillmake explain [OPTIONS]" in run.err, run.err
    assert not re.search(r"usage: skillmake \[OPTIONS\]", run.err), run.err


# -- --batch with nothing it can batch --------------------------------------------------------------------------------

JUDGED = ONE_SPEC.replace("cases:", "judge: {provider: anthropic, model: claude-sonnet-4-6}\ncases:").replace(
    "checks: [{type: contains, needle: ONE}]", "rubric: Is it loud?")


def test_batch_with_no_judge_it_can_batch_says_so_once(ran_once: Path, tmp_path: Path) -> None:
    """`skillmake --batch` on specs whose cases have only checks ran as if the flag were not there and said
    nothing: the user expected half-price judging. One note (not an error: the run's own exit code)."""
    stored = copy_of(ran_once, tmp_path / "stored").run("--batch")  # nothing stale: still nothing it could batch
    assert stored.code == 0, stored.out + stored.err
    assert stored.err.count("nothing is batched") == 1, stored.err
    fresh = one_case(tmp_path / "fresh")
    run = fresh.run("--batch")
    assert run.code == 0 and run.agent_calls == 1, run.out + run.err
    assert run.err.count("nothing is batched") == 1 and "--batch" in run.err, run.err
    assert "nothing is batched" not in fresh.run().err  # without --batch: no note
    assert "nothing is batched" not in fresh.run("--batch", "list", check_views=False).err  # runs nothing: no note
    judged = one_case(tmp_path / "judged", **{"a.eval.yaml": JUDGED})
    listed = judged.run("--batch", "list", check_views=False)  # a judge it can batch: no note
    assert listed.code == 0, listed.out + listed.err
    assert "nothing is batched" not in listed.err, listed.err


# -- the viewer after a selected run ----------------------------------------------------------------------------------

TWO_CASES = ONE_SPEC + "  - id: two\n    prompt: say two\n    checks: [{type: contains, needle: TWO}]\n"


def _pages(project: Project, folder: Path) -> tuple[str, str]:
    """(the spec's page, case two's page) of `skillmake view --export`."""
    shutil.rmtree(folder, ignore_errors=True)
    export = project.run("view", "--export", str(folder), check_views=False)
    assert export.code == 0, export.out + export.err
    return ((folder / "specs/a/index.html").read_text(), (folder / "specs/a/cases/two.html").read_text())


def test_the_viewer_says_not_run_for_a_cell_the_selection_left_out(tmp_path: Path) -> None:
    """After `skillmake -k one`, the viewer showed case two as 0/0 with 'missing' trials ('no record yet') and
    counted it among the failures, where the terminal said 'not run (not selected)'. It says what the terminal
    says; once two has a stored result, a later `-k one` shows that result."""
    project = one_case(tmp_path / "proj", **{"a.eval.yaml": TWO_CASES})
    assert project.run("-q", "-k", "one").code == 0
    spec, case = _pages(project, tmp_path / "site")
    row = re.search(r"<tr data-row[^>]*data-text=\"two .*?</tr>", spec, re.S)
    assert row is not None, spec
    assert "not run (not selected)" in row.group(0) and "0/0" not in row.group(0), row.group(0)
    assert 'data-failed=""' in row.group(0), row.group(0)  # not run is not failed
    assert "0/0" not in case and "no record yet" not in case, case
    assert "not run (not selected)" in case and "left this cell out" in case, case
    assert project.run("-q").code == 0  # two runs and is stored; then a selection leaves it out again
    assert project.run("-q", "-k", "one").code == 0
    spec, case = _pages(project, tmp_path / "site")
    row = re.search(r"<tr data-row[^>]*data-text=\"two .*?</tr>", spec, re.S)
    assert row is not None and "1/1" in row.group(0) and "not run" not in row.group(0), spec
    assert "not run" not in case and "1/1" in case, case


# -- an adaptive run's last progress line -----------------------------------------------------------------------------

ADAPTIVE_ONE = ONE_SPEC.replace("cases:", "trials: {min: 3, max: 12, decide: 0.5}\ncases:")


def test_an_adaptive_run_ends_with_its_count_and_total_agreeing(tmp_path: Path) -> None:
    """One case decided after 9 of 12 trials: the trials after the look report "not needed" after every counter
    line was printed, so the run ended at [18/24]. It ends at [18/18], saying why, before the spec's summary."""
    project = one_case(tmp_path / "proj", **{"a.eval.yaml": ADAPTIVE_ONE})
    run = project.run()
    assert run.code == 0 and run.agent_calls == 9, run.out + run.err
    counters = re.findall(r"^\[\s*(\d+)/(\d+)[^\]]*\](.*)$", run.out, re.M)
    assert counters[-1][:2] == ("18", "18"), run.out
    assert "adaptive: 3 trials not needed" in counters[-1][2], run.out
    assert run.out.index("adaptive: 3 trials not needed") < run.out.index("a (a, 3–12 adaptive"), run.out
