"""engine/cell.py: a plain run makes one doit task per stale cell (its trial, then its grade), and only a plain run
does; the reporter still says a line for each and counts both; doit's db keeps no task's values."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from doit.exceptions import TaskFailed

from skillmake.core import console
from skillmake.engine import cell, scope, tasks
from skillmake.engine.reporter import SkillmakeReporter
from tests.functional.project import Project, one_case

SPEC = """\
skill: skills/a
agent: {kind: command, command: [python3, agent.py]}
trials: 2
baseline: true
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: ONE}]
  - id: two
    prompt: say two
    checks: [{type: contains, needle: TWO}]
"""
CELLS = 8  # two cases × two arms × two trials


def doit_tasks(root: Path) -> dict[str, dict[str, Any]]:
    """The tasks doit recorded as done in the project's dep db, by name: what it saved of each."""
    import orjson

    with sqlite3.connect(root / ".skillmake" / "doit.db") as db:
        return {name: orjson.loads(data) for name, data in db.execute("select task_id, task_data from doit")}


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Any]:
    """One first run of the spec (shared by the tests of this module that only read it)."""
    project = one_case(tmp_path_factory.mktemp("cell"), **{"a.eval.yaml": SPEC})
    return project, project.run("-j", "2")


def test_a_first_run_makes_one_task_per_cell_and_says_both_lines(first: tuple[Project, Any]) -> None:
    project, run = first
    assert run.code == 0, run.out + run.err
    assert (run.agent_calls, run.trials, run.grades) == (CELLS, CELLS, CELLS)
    done = doit_tasks(project.root)
    assert sum(name.startswith("trial:") for name in done) == CELLS
    assert not [name for name in done if name.startswith("grade:")]  # each trial task graded its cell
    # The reporter said both lines of every cell, and the counter counted two steps each.
    lines = [line for line in run.out.splitlines() if line.startswith("[")]
    assert len(lines) == 2 * CELLS
    assert sum(" grade:a/" in line for line in lines) == CELLS
    assert lines[-1].startswith(f"[{2 * CELLS}/{2 * CELLS}")
    # Once said, a task's values are dropped: doit's db holds none of them.
    assert all(data.get("_values_:") == {} and data.get("result:", {}) == {} for name, data in done.items()
               if name.startswith("trial:"))


def test_a_regrade_makes_grade_tasks_only_and_a_listing_shows_both(first: tuple[Project, Any],
                                                                   tmp_path: Path) -> None:
    import shutil

    project = Project.empty(tmp_path / "p")
    shutil.copytree(first[0].root, project.root)
    project.replace("a.eval.yaml", "needle: TWO", "needle: SAY")  # a check: re-grade, run nothing
    run = project.run("-j", "2")
    assert (run.code, run.agent_calls, run.trials, run.grades) == (0, 0, 0, 4), run.out + run.err
    assert sum(name.startswith("grade:") for name in doit_tasks(project.root)) == 4
    listed = project.run("list", "--all", check_views=False)
    names = {line.split()[0] for line in listed.out.splitlines() if line.strip()}
    assert {n for n in names if n.startswith("trial:")} and len([n for n in names if n.startswith("grade:")]) == CELLS


@pytest.mark.parametrize(("argv", "merges"), [
    (["-q"], True), (["-n", "4", "-P", "thread"], True), (["run"], True),
    (["trial"], False), (["grade"], False), (["grade:a/one/with_skill/0"], False), (["list"], False),
    (["info", "trial:a/one/with_skill/0"], False), (["clean"], False), (["-a"], False), (["report"], False),
])
def test_only_a_plain_run_merges(monkeypatch: pytest.MonkeyPatch, argv: list[str], merges: bool) -> None:
    monkeypatch.setattr(tasks, "COMMAND", argv)
    monkeypatch.setattr(tasks, "FULL_GRAPH", scope.needs_full_graph(argv))
    assert tasks._merges() is merges


def merged_task(name: str, values: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(name=name, task_dep=[], setup_tasks=[], uptodate=[(False, [], {})], file_dep=set(),
                           values=values, meta=cell.META)


@pytest.fixture
def quiet_style(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "_style", console.Style(configured=True))


@pytest.mark.usefixtures("quiet_style")
def test_the_reporter_counts_a_merged_task_as_two_steps_and_a_failed_grade_as_the_grade() -> None:
    ok = merged_task("trial:s/c/with_skill/0", {"trial": {"outcome": "completed", "ran": True, "seconds": 1.5},
                                                "grade": {"outcome": "pass", "ran": True, "seconds": 0.25}})
    bad = merged_task("trial:s/c/with_skill/1", {})
    broken = merged_task("trial:s/c/with_skill/2", {})
    out = io.StringIO()
    rep = SkillmakeReporter(out, {})
    rep.err = out
    rep.initialize({t.name: t for t in (ok, bad, broken)}, [ok.name, bad.name, broken.name])
    assert rep._progress().startswith("[0/6")
    for t in (ok, bad, broken):
        rep.execute_task(t)
    ok.result = ok.values  # doit's task.result is the dict the action returned
    ok._action_instances = [object()]
    rep.add_success(ok)
    assert ok.values == {} and ok._action_instances is None  # said, counted, dropped
    rep.add_failure(bad, cell.GradeFailed(TaskFailed("judge exploded"), {"outcome": "completed", "ran": True,
                                                                         "seconds": 2.0}))
    rep.add_failure(broken, TaskFailed("no agent"))  # the trial failed: its grade never starts, and leaves the total
    rep.stop.set()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[1/6") and "trial:s/c/with_skill/0  completed  1.5s" in lines[0]
    assert lines[1].startswith("[2/6") and "grade:s/c/with_skill/0  pass  0.2s" in lines[1]
    assert "trial:s/c/with_skill/1  completed  2.0s" in lines[2]
    assert lines[3].startswith("[4/6") and "grade:s/c/with_skill/1  FAILED" in lines[3]
    assert lines[5].startswith("[5/5") and "trial:s/c/with_skill/2  FAILED" in lines[5]
    assert rep.failures == ["grade:s/c/with_skill/1", "trial:s/c/with_skill/2"]
    assert rep.ran == {"trial": 2, "grade": 1}
