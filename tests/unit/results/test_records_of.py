"""What a cell shows (checkout.records_of) when its records are not plain results, and the no-op's look at the views
(checkout.views_current): each way a view can stop showing its cell's records makes it not current."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from skillmake.core import atomic
from skillmake.engine import actions
from skillmake.engine import report as report_module
from skillmake.engine.plan import plan_spec
from skillmake.results import cellview, checkout
from skillmake.run import grade as grading
from skillmake.run.project import Project
from skillmake.store.objects import GRADE_SCHEMA, TRIAL_SCHEMA
from tests.unit.engine.test_plan import make


def _run(project: Project) -> Any:
    """Every cell's trial and grade run, then the spec's report (its views checked out and noted in views.json)."""
    plan = plan_spec(project, project.specs[0])
    for item in plan.items:
        assert not isinstance(actions.trial_step.__wrapped__(project, item)[0], Exception)
        assert not isinstance(actions.run_grade.__wrapped__(project, item, view=True), Exception)
    report_module.build_and_write(project, plan)
    return plan


@pytest.fixture
def ran(tmp_path: Path) -> tuple[Project, Any]:
    project = make(tmp_path)
    return project, _run(project)


def _rewrite(project: Project, key: str, change: dict[str, Any]) -> dict[str, Any]:
    """The stored result of `key` replaced by itself with `change` (a record is replaced whole, as the store does)."""
    path = project.store.action_path(key)
    record = orjson.loads(path.read_bytes())
    record.update(change)
    atomic.write_bytes(path, orjson.dumps(record, option=orjson.OPT_INDENT_2))
    return record


def test_a_cell_with_no_records_shows_none(tmp_path: Path) -> None:
    project = make(tmp_path)
    item = plan_spec(project, project.specs[0]).items[0]
    rec = checkout.records_of(project, report_module.cell_of(item))
    assert (rec.trial, rec.grade, rec.grade_key) == (None, None, None)


def test_a_cell_shows_its_result_and_the_cached_grade_of_it_labelled_for_the_cell(ran: tuple[Project, Any]) -> None:
    project, plan = ran
    item = plan.items[1]
    rec = checkout.records_of(project, report_module.cell_of(item))
    assert rec.trial is not None and rec.grade is not None
    assert rec.trial["key"] == item.tkey.key and rec.trial["labels"]["k"] == 1
    assert rec.grade_key == grading.key_for(item.spec, item.case, rec.trial)[0] == rec.grade["key"]
    assert rec.grade["trial_key"] == item.tkey.key and rec.grade["labels"] == rec.trial["labels"]


def test_a_result_that_took_longer_than_the_cells_timeout_is_not_shown_its_last_attempt_is(
        ran: tuple[Project, Any]) -> None:
    """Lowering a timeout below what a stored trial took makes it no result of the cell: the cell shows the last
    attempt of its key (here an error), and no grade, or none when there is no attempt either."""
    project, plan = ran
    item = plan.items[0]
    cell = report_module.cell_of(item)
    stored = _rewrite(project, item.tkey.key, {"timing": {"started": "2026-01-01T00:00:00+00:00",
                                                          "duration_ms": 9e9, "agent_ms": 9e9, "timeout_s": 1e7}})
    assert checkout.records_of(project, cell).trial is None
    project.store.put_attempt(dict(stored, outcome="error", error="the agent crashed"), schema=TRIAL_SCHEMA)
    rec = checkout.records_of(project, cell)
    assert rec.trial is not None and rec.trial["outcome"] == "error" and rec.trial["error"] == "the agent crashed"
    assert rec.trial["labels"]["k"] == item.k
    assert (rec.grade, rec.grade_key) == (None, None)


def test_a_trial_whose_grade_has_no_result_shows_the_grades_last_attempt_without_a_grade_key(
        ran: tuple[Project, Any]) -> None:
    project, plan = ran
    item = plan.items[0]
    cell = report_module.cell_of(item)
    before = checkout.records_of(project, cell)
    assert before.grade is not None and before.grade_key is not None
    path = project.store.action_path(before.grade_key)
    stored = orjson.loads(path.read_bytes())
    path.unlink()
    rec = checkout.records_of(project, cell)
    assert rec.trial == before.trial and (rec.grade, rec.grade_key) == (None, None)
    project.store.put_attempt(dict(stored, outcome="judge_error", error="the judge said nothing"), schema=GRADE_SCHEMA)
    rec = checkout.records_of(project, cell)
    assert rec.grade is not None and rec.grade["outcome"] == "judge_error" and rec.grade_key is None
    assert rec.trial is not None and rec.grade["labels"] == rec.trial["labels"]
    assert rec.grade["trial_key"] == item.tkey.key


def _cells(plan: Any, project: Project) -> list[tuple[str, str, str | None]]:
    return [(f"{i.case.id}/{i.arm.name}/trial-{i.k}", i.tkey.key,
             checkout.records_of(project, report_module.cell_of(i)).grade_key) for i in plan.items]


def test_views_are_current_after_their_report_and_not_for_other_keys(ran: tuple[Project, Any]) -> None:
    project, plan = ran
    cells = _cells(plan, project)
    assert checkout.views_current(project, "p", cells) is True
    assert checkout.views_current(project, "p", []) is True
    (rel, trial_key, grade_key) = cells[0]
    assert checkout.views_current(project, "p", [(rel, trial_key, "sha256:" + "0" * 64)]) is False
    assert checkout.views_current(project, "p", [(rel, "sha256:" + "0" * 64, grade_key)]) is False
    assert checkout.views_current(project, "p", [(rel, trial_key, None)]) is False
    assert checkout.views_current(project, "p", [("a/with_skill/trial-9", trial_key, grade_key)]) is False
    assert checkout.views_current(project, "q", cells) is False  # another spec: no views.json


@pytest.mark.parametrize("touch", ["edit", "add", "remove", "folder", "gone"])
def test_a_view_touched_after_its_checkout_is_not_current(ran: tuple[Project, Any], touch: str) -> None:
    """A file edited (same size: its mtime says), a file added or removed, a folder replaced, the view removed."""
    import shutil

    project, plan = ran
    cells = _cells(plan, project)
    view = project.runs_dir / "p" / cells[1][0]
    if touch == "edit":
        st = (view / "output.txt").stat()
        (view / "output.txt").write_bytes(b"y" * st.st_size)
        os.utime(view / "output.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    elif touch == "add":
        (view / "workspace" / "new.txt").write_text("x")
    elif touch == "remove":
        (view / "timing.json").unlink()
    elif touch == "folder":
        shutil.rmtree(view / "workspace")
        (view / "workspace").mkdir()
    else:
        shutil.rmtree(view)
    assert checkout.views_current(project, "p", cells) is False
    assert checkout.views_current(project, "p", cells[:1]) is True  # the other cell is untouched


@pytest.mark.parametrize("damage", [b"", b"not json", b'{"version": 2, "cells": {}}', b'{"version": 1, "cells": []}',
                                    b"[]"])
def test_a_lost_or_unreadable_views_file_makes_every_view_not_current(ran: tuple[Project, Any],
                                                                       damage: bytes) -> None:
    project, plan = ran
    path = project.state_dir / "index" / "p.views.json"
    path.write_bytes(damage)
    assert checkout.views_current(project, "p", _cells(plan, project)) is False
    path.unlink()
    assert checkout.views_current(project, "p", _cells(plan, project)) is False


def test_the_reports_checkout_writes_every_view_its_pool_writes_and_notes_each(tmp_path: Path) -> None:
    """Eight cells whose views are all gone (enough for the pool of threads): each is written again with the cell's
    own records, noted in views.json by what a listing of it finds, and its case gets eval_metadata.json."""
    import shutil

    project = make(tmp_path)
    spec_file = Path(project.root) / "p.eval.yaml"
    spec_file.write_text(spec_file.read_text().replace("trials: 2", "trials: 8"))
    project = Project.open(project.root)
    plan = _run(project)
    shutil.rmtree(project.runs_dir / "p")
    (project.state_dir / "index" / "p.views.json").unlink()
    cells = report_module.cells_of(project, plan)
    assert checkout.checkout(project, cells) == 8
    noted = orjson.loads((project.state_dir / "index" / "p.views.json").read_bytes())["cells"]
    for item in plan.items:
        rel = f"a/with_skill/trial-{item.k}"
        view = project.runs_dir / "p" / rel
        assert orjson.loads((view / "trial.json").read_bytes())["labels"]["k"] == item.k
        assert noted[rel]["stat"] == cellview.folder_stat(str(view))
        assert noted[rel]["keys"] == [item.tkey.key, cells[item.k].grade_key]
    metadata = project.runs_dir / "p" / "a" / checkout.METADATA
    assert orjson.loads(metadata.read_bytes()) == checkout.eval_metadata(plan.spec, plan.items[0].case)


def test_eval_metadata_is_written_again_only_when_it_changed(ran: tuple[Project, Any]) -> None:
    project, plan = ran
    metadata = project.runs_dir / "p" / "a" / checkout.METADATA
    inode = metadata.stat().st_ino
    cells = report_module.cells_of(project, plan)
    checkout.checkout(project, cells)
    assert metadata.stat().st_ino == inode  # the same content: left as it is
    metadata.write_text("{}")
    checkout.checkout(project, cells)
    assert orjson.loads(metadata.read_bytes()) == checkout.eval_metadata(plan.spec, plan.items[0].case)


def test_eval_metadata_names_each_assertion_as_benchmark_json_does(ran: tuple[Project, Any]) -> None:
    """Checks first, by their labels; then each expectation by the name its case gives it, else its entry id, with
    skill-creator's type where the case gives one."""
    import dataclasses

    from skillmake.run.judges import expectations as expectations_judge

    _, plan = ran
    case = dataclasses.replace(plan.items[0].case, expectations=("says hi", "says bye", "waves"),
                               expectation_names=("greets", None), expectation_types=("tone", None))
    assertions = checkout.eval_metadata(plan.spec, case)["assertions"]
    checks = [{"name": c.label, "description": c.name or c.label, "type": c.type} for c in case.checks]
    assert assertions == [*checks, {"name": "greets", "description": "says hi", "type": "tone"},
                          {"name": expectations_judge.entry_id(1), "description": "says bye"},
                          {"name": expectations_judge.entry_id(2), "description": "waves"}]


def test_a_later_early_checkout_without_results_drops_the_records_an_earlier_one_kept(
        ran: tuple[Project, Any]) -> None:
    """A cell checked out early twice in one process (its trial drawn again): when the second holds no results (an
    attempt), the report must not take the first one's records."""
    project, plan = ran
    rec = checkout.records_of(project, report_module.cell_of(plan.items[0]))
    checkout.check_out_early(project, rec)
    assert list(checkout.early_records(project, "p")) == ["a/with_skill/trial-0"]
    checkout.check_out_early(project, rec)
    checkout.check_out_early(project, checkout.CellRecords(cell=rec.cell, trial=rec.trial, grade=None,
                                                           grade_key=None))
    assert checkout.early_records(project, "p") == {}


def test_pruning_removes_what_is_no_cell_and_a_missing_spec_folder_is_nothing_to_prune(
        ran: tuple[Project, Any], tmp_path: Path) -> None:
    project, plan = ran
    spec_dir = project.runs_dir / "p"
    for extra in ("gone-case/with_skill/trial-0", "a/gone-arm/trial-0", "a/with_skill/trial-7",
                  "a/with_skill/.trial-0.new-99"):
        (spec_dir / extra).mkdir(parents=True)
    checkout._prune(spec_dir, plan.spec)
    assert sorted(p.name for p in spec_dir.iterdir()) == ["a"]
    assert sorted(p.name for p in (spec_dir / "a").iterdir()) == [checkout.METADATA, "with_skill"]
    assert sorted(p.name for p in (spec_dir / "a" / "with_skill").iterdir()) == ["trial-0", "trial-1"]
    checkout._prune(tmp_path / "missing", plan.spec)  # nothing there: nothing done, no error
