"""One cell's view folder (cellview.py): what checking a cell out costs in system calls, and that the shortcuts
which spare them keep the guarantees (never written through a link, a half-written folder never shown)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from skillmake.engine import actions
from skillmake.engine import report as report_module
from skillmake.engine.plan import plan_spec
from skillmake.results import cellview, checkout
from skillmake.results.cellview import CellRecords
from skillmake.run.project import Project
from tests.unit.engine.test_plan import make


@pytest.fixture(scope="module")
def cells(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, list[CellRecords]]:
    """A project of one case with four trials, run and graded, its cells' records read; no view checked out."""
    root = tmp_path_factory.mktemp("cellview")
    project = make(root)
    (root / "p.eval.yaml").write_text((root / "p.eval.yaml").read_text().replace("trials: 2", "trials: 4"))
    project = Project.open(str(root))
    plan = plan_spec(project, project.specs[0])
    for item in plan.items:
        trial, record = actions.trial_step.__wrapped__(project, item)
        assert record is not None, trial
        assert not isinstance(actions.run_grade.__wrapped__(project, item, trial=record), Exception)
    return project, report_module.cells_of(project, plan_spec(project, project.specs[0]))


@pytest.fixture
def fresh(cells: tuple[Project, list[CellRecords]]) -> tuple[Project, list[CellRecords]]:
    """The module's project with no views (and no note of any)."""
    project, recs = cells
    shutil.rmtree(project.runs_dir, ignore_errors=True)
    checkout._EARLY.clear()
    cellview._ARMS.clear()
    return project, recs


def _calls(monkeypatch: pytest.MonkeyPatch, under: Path) -> list[tuple[str, str]]:
    """(system call, path below `under`) of every lstat, stat, open and mkdir made from now on."""
    seen: list[tuple[str, str]] = []
    base = f"{under}/"

    def counted(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(path: Any, *args: Any, **kwargs: Any) -> Any:
            text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else ""
            if isinstance(text, str) and text.startswith(base):
                seen.append((name, text[len(base):]))
            return real(path, *args, **kwargs)
        return call

    for name in ("lstat", "stat", "open", "mkdir"):
        monkeypatch.setattr(os, name, counted(name, getattr(os, name)))
    return seen


def test_a_new_cell_reads_no_stamp_and_the_next_cell_of_its_arm_looks_at_two_folders(
        fresh: tuple[Project, list[CellRecords]], monkeypatch: pytest.MonkeyPatch) -> None:
    """A brand-new cell's folder does not exist (its path's lstat says so): there is no stamp of its own to read.
    Its arm folder, found free of links, is noted: the next cell of the arm lstats that folder and its own, not
    every folder from runs/ down again."""
    project, recs = fresh
    seen = _calls(monkeypatch, project.runs_dir)
    looked: list[list[tuple[str, str]]] = []
    for rec in recs[:3]:  # the first one's arm folder is new too: made, not noted
        seen.clear()
        checkout.check_out_early(project, rec)
        assert [c for c in seen if c[0] == "open" and "/.trial-" not in c[1]] == []  # no stamp read
        looked.append([c for c in seen if c[0] == "lstat" and "/.trial-" not in c[1]])
    assert looked[1] == [("lstat", "p"), ("lstat", "p/a"), ("lstat", "p/a/with_skill"),
                         ("lstat", "p/a/with_skill/trial-1"), ("lstat", "p/a/with_skill/trial-1")]  # and its "."
    assert looked[2] == [("lstat", "p/a/with_skill"), ("lstat", "p/a/with_skill/trial-2"),
                         ("lstat", "p/a/with_skill/trial-2")]
    for rec in recs[:3]:
        entry = checkout._EARLY[(str(project.state_dir), "p")][f"a/with_skill/trial-{rec.cell.k}"]
        folder = f"{project.runs_dir}/p/a/with_skill/trial-{rec.cell.k}"
        assert entry["stat"] == cellview.folder_stat(folder)
        assert orjson.loads(Path(folder, "trial.json").read_bytes())["labels"]["k"] == rec.cell.k


def test_an_existing_cell_still_reads_its_own_stamp(fresh: tuple[Project, list[CellRecords]]) -> None:
    """A folder that is there (views.json lost, `-P process`) is still found intact by its own stamp."""
    project, recs = fresh
    entry, written = cellview.write_view(project, recs[0], None)
    assert written
    again, written = cellview.write_view(project, recs[0], None)
    assert not written and again["stat"] == entry["stat"]


@pytest.mark.parametrize("linked", ["p", "p/a", "p/a/with_skill"])
def test_a_link_put_on_a_noted_arm_folders_path_is_still_cut(fresh: tuple[Project, list[CellRecords]],
                                                             tmp_path: Path, linked: str) -> None:
    """After the arm's first cell noted its folder, runs/p, the case or the arm folder is made a link out of the
    project (its real folder set aside): the next cell finds the path names another folder (or a link), cuts the
    link and writes its view where it belongs, nothing outside."""
    project, recs = fresh
    checkout.check_out_early(project, recs[0])
    outside = tmp_path / "outside"
    (outside / "a" / "with_skill").mkdir(parents=True)  # the same names there: only an identity tells them apart
    path = project.runs_dir / linked
    path.rename(tmp_path / "aside")
    os.symlink(outside / "a" / "with_skill" if linked.endswith("with_skill") else
               outside / "a" if linked == "p/a" else outside, path)
    checkout.check_out_early(project, recs[1])
    assert [p for p in outside.rglob("*") if p.name.startswith(("trial-", ".trial-"))] == []
    assert not path.is_symlink()
    view = project.runs_dir / "p" / "a" / "with_skill" / "trial-1"
    assert (view / "trial.json").is_file() and not any(p.is_symlink() for p in [view, *view.parents][:4])


def test_the_reports_checkout_forgets_the_arm_folders_of_its_spec(fresh: tuple[Project, list[CellRecords]]) -> None:
    """What an early checkout noted lives for the run: the report's checkout of the spec drops it, so a later run
    in the same process looks at every folder on its cells' paths again."""
    project, recs = fresh
    for rec in recs[:2]:
        checkout.check_out_early(project, rec)
    arm = f"{project.runs_dir}/p/a/with_skill"
    cellview._ARMS["/elsewhere/a/with_skill"] = (0, 0)  # another spec's (or project's): kept
    assert arm in cellview._ARMS
    checkout.checkout(project, recs)
    assert arm not in cellview._ARMS and "/elsewhere/a/with_skill" in cellview._ARMS


def test_a_checked_out_cell_shows_every_file_and_its_stamp_names_the_keys_it_shows(
        fresh: tuple[Project, list[CellRecords]]) -> None:
    project, recs = fresh
    rec = recs[0]
    entry, written = cellview.write_view(project, rec, None)
    folder = Path(project.runs_dir, rec.cell.spec.name, cellview.cell_rel(rec.cell.case.id, rec.cell.arm.name, 0))
    assert written and sorted(os.listdir(folder)) == [".view.json", "grade.json", "grading.json", "output.txt",
                                                     "timing.json", "trial.json", "workspace"]
    assert cellview.shown_keys(folder) == (rec.cell.key, rec.grade_key) == tuple(entry["keys"])
    assert cellview.unchanged(str(folder), entry["stat"])
    again, rewritten = cellview.write_view(project, rec, entry)  # current: left as it is
    assert not rewritten and again is entry
    assert rec.cell.name == f"{rec.cell.spec.name}/{rec.cell.case.id}/{rec.cell.arm.name}/0"


@pytest.mark.parametrize("keys", [None, "k", ["a"], ["a", "b", "c"], ["a", 2]])
def test_a_stamp_that_does_not_name_two_keys_shows_none(tmp_path: Path, keys: Any) -> None:
    (tmp_path / cellview.STAMP).write_bytes(orjson.dumps({"keys": keys}))
    assert cellview.shown_keys(tmp_path) == (None, None)
    assert cellview.shown_keys(tmp_path / "missing") == (None, None)


def test_a_view_is_not_unchanged_when_its_stat_note_is_bad_or_a_file_moved(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    stat = cellview.folder_stat(str(tmp_path))
    assert cellview.unchanged(str(tmp_path), stat)
    assert not cellview.unchanged(str(tmp_path), {k: v for k, v in stat.items() if k != "."})
    assert not cellview.unchanged(str(tmp_path), [stat])
    (tmp_path / "a.txt").write_text("bb")  # edited in place: its size changed
    assert not cellview.unchanged(str(tmp_path), stat)
    (tmp_path / "a.txt").unlink()
    assert not cellview.unchanged(str(tmp_path), stat)
    assert cellview.folder_stat(str(tmp_path / "missing")) == {}
