"""Selecting what runs: -k EXPR, --tag, --failed and doit task globs, proven by counting agent calls.

The selection is passed through the environment (SKILLMAKE_K, SKILLMAKE_TAGS, SKILLMAKE_FAILED), which both
`skillmake` and plain `doit` read; the front end's -k/--tag/--failed set the same selection.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from .project import DODO, Project, Run, copy_of, template


def doit(project: Project, *args: str, env: dict[str, str] | None = None) -> Run:
    """Plain `doit` with the three-line dodo.py: the selection must work without the front end too."""
    return project.run(cmd=[sys.executable, "-m", "doit", *args], env=env)


def report(project: Project, spec: str) -> dict:
    return orjson.loads((project.root / ".skillmake" / "reports" / spec / "report.json").read_bytes())


def row(rep: dict, case: str, arm: str) -> dict:
    return next(r for r in rep["rows"] if r["case"] == case and r["arm"] == arm)


def tagged(root: Path) -> Project:
    p = Project(root)
    p.write("dodo.py", DODO)
    p.replace("alpha.eval.yaml", "  - id: three\n", "  - id: three\n    tags: [slow, files]\n")
    p.replace("beta.eval.yaml", "  - id: five\n", "  - id: five\n    tags: [slow]\n")
    first = doit(p)
    assert first.code == 0, first.err + first.out
    assert first.agent_calls == 24
    return p


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The tagged project after its first run: a copy of one built once (the first run is the same every time)."""
    return copy_of(template(tmp_path_factory, "selection", tagged), tmp_path / "proj")


def test_k_runs_only_matching_stale_cells_and_refreshes_their_report(project: Project) -> None:
    project.write("skills/alpha/SKILL.md", project.read("skills/alpha/SKILL.md") + "Be brief.\n")
    beta_report = project.root / ".skillmake" / "reports" / "beta" / "report.json"
    beta_before = beta_report.read_bytes()
    run = doit(project, env={"SKILLMAKE_K": "alpha and (one or three) and not without"})
    assert run.agent_calls == 4, run.out + run.err  # one and three, with_skill, 2 trials each
    assert sorted(project.calls()[-4:]) == ["one with_skill 0", "one with_skill 1",
                                            "three with_skill 0", "three with_skill 1"]
    assert (run.trials, run.grades) == (4, 0)  # same outputs: the grades are reused
    alpha = report(project, "alpha")
    assert len(row(alpha, "one", "with_skill")["trial_keys"]) == 2
    # Unselected cells: the up-to-date ones keep their stored results; the stale one has none to show yet.
    assert len(row(alpha, "two", "without_skill")["grade_keys"]) == 2
    assert row(alpha, "two", "with_skill")["grade_keys"] == []
    assert beta_report.read_bytes() == beta_before  # beta was not touched: its report is left alone
    rest = doit(project)
    assert rest.agent_calls == 2  # case two's with_skill trials, still stale
    assert doit(project).agent_calls == 0


def test_k_selection_and_plain_doit_agree(project: Project) -> None:
    project.replace("alpha.eval.yaml", "prompt: say two", "prompt: say two now")
    project.replace("beta.eval.yaml", "prompt: say four", "prompt: say four now")
    run = doit(project, env={"SKILLMAKE_K": "BETA"})
    assert run.code == 0, run.err
    assert run.agent_calls == 6  # beta/four × 3 arms × 2 trials; alpha/two left stale
    assert {line.split()[0] for line in project.calls()[-6:]} == {"four"}
    assert doit(project).agent_calls == 4


def test_tag_selects_cases_carrying_it(project: Project) -> None:
    project.write("fixtures/only3.txt", "three's new input\n")  # alpha/three: 4 stale cells
    project.write("fixtures/shared.txt", "new shared input\n")  # alpha/two, beta/four: 4 + 6 stale cells
    run = doit(project, env={"SKILLMAKE_TAGS": "files,nonexistent"})
    assert run.agent_calls == 4
    assert {line.split()[0] for line in project.calls()[-4:]} == {"three"}
    # -k matches tags as well: "slow" is on alpha/three (now fresh) and beta/five (never stale).
    assert doit(project, env={"SKILLMAKE_K": "slow"}).agent_calls == 0
    assert doit(project).agent_calls == 10


def test_failed_selects_cells_that_did_not_pass_and_says_they_are_stored(project: Project) -> None:
    # without_skill never shouts, so its cells fail: 3 cases × 2 in alpha, 2 cases × 2 in beta.
    run = doit(project, env={"SKILLMAKE_FAILED": "1"})
    assert run.agent_calls == 0
    assert "10 failed trials are stored results; add --resample to draw fresh samples" in run.err
    assert run.err.count("add --resample") == 1
    # A failed cell made stale runs; a passing stale cell is not selected.
    project.replace("alpha.eval.yaml", "prompt: say one", "prompt: say one again")
    run = doit(project, env={"SKILLMAKE_FAILED": "1"})
    assert run.agent_calls == 2
    assert sorted(project.calls()[-2:]) == ["one without_skill 0", "one without_skill 1"]
    assert "8 failed trials are stored results" in run.err
    assert doit(project).agent_calls == 2  # one/with_skill, which passed last time


def test_failed_counts_a_cell_without_a_grade(project: Project) -> None:
    project.replace("beta.eval.yaml", "trials: 2", "trials: 3")  # k=2 is new: no grade in the last report
    run = doit(project, env={"SKILLMAKE_FAILED": "1", "SKILLMAKE_K": "five and with_skill"})
    assert run.agent_calls == 1
    assert project.calls()[-1] == "five with_skill 2"


def test_selection_that_matches_nothing_says_so(project: Project) -> None:
    run = doit(project, env={"SKILLMAKE_K": "nosuchcase"})
    assert run.code == 5 and run.agent_calls == 0  # pytest's "no tests collected": a typo must not pass green
    assert run.err.strip() == "skillmake: -k 'nosuchcase' selects none of the 24 trials"


@pytest.mark.parametrize("via", ["skillmake", "doit"])
def test_bad_expression_is_a_usage_error_with_its_column(project: Project, via: str) -> None:
    cmd = [sys.executable, "-m", "doit"] if via == "doit" else None
    run = project.run(cmd=cmd, env={"SKILLMAKE_K": "alpha and (one"}, check_views=False)
    assert run.code == 3, run.err
    assert "at column 15: expected ')'" in run.err
    assert "Traceback" not in run.err
    assert run.agent_calls == 0


def test_doit_task_glob_runs_the_matching_trials(project: Project) -> None:
    project.write("skills/alpha/SKILL.md", project.read("skills/alpha/SKILL.md") + "Be brief.\n")
    run = doit(project, "trial:alpha/one/*")
    assert run.code == 0, run.err
    assert run.agent_calls == 2
    assert sorted(project.calls()[-2:]) == ["one with_skill 0", "one with_skill 1"]
    assert doit(project, "grade:alpha/t*/with_skill/*").agent_calls == 4


def test_spec_selects_one_spec_exactly_and_a_typo_says_which_it_meant(project: Project) -> None:
    # alpha and beta are both stale; `--spec beta` runs beta's only (a -k beta would also match a case named so).
    project.replace("alpha.eval.yaml", "prompt: say two", "prompt: say two now")
    project.replace("beta.eval.yaml", "prompt: say four", "prompt: say four now")
    run = project.run("--spec", "beta")
    assert (run.code, run.agent_calls) == (0, 6), run.out + run.err  # four: its three arms, 2 trials each
    assert {c.split()[0] for c in project.calls()[-6:]} == {"four"}
    typo = project.run("--spec", "bta")
    assert (typo.code, typo.agent_calls) == (3, 0), typo.out + typo.err
    assert "--spec bta: no such spec; did you mean 'beta'?" in typo.err and "the specs are: alpha, beta" in typo.err
    assert doit(project, env={"SKILLMAKE_SPECS": "alpha"}).agent_calls == 4  # plain doit reads SKILLMAKE_SPECS
