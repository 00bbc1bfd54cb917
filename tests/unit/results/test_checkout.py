"""The cells' views: a plain run's cell task checks its folder out early, and the report's checkout then finds it
showing the records it reads (no folder written twice); a view that no longer shows them is written again."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from skillmake.engine import actions
from skillmake.engine import report as report_module
from skillmake.engine.plan import plan_spec
from skillmake.results import cellview, checkout
from skillmake.run.project import Project
from tests.unit.engine.test_plan import make


def _grade_all(project: Project) -> list[Any]:
    items = plan_spec(project, project.specs[0]).items
    for item in items:
        assert not isinstance(actions.trial_step.__wrapped__(project, item)[0], Exception)
        assert not isinstance(actions.run_grade.__wrapped__(project, item, view=True), Exception)
    return list(items)


def _report_writes(project: Project, monkeypatch: pytest.MonkeyPatch) -> int:
    written: list[int] = []
    real = report_module.checkout
    monkeypatch.setattr(report_module, "checkout", lambda p, cells: written.append(real(p, cells)) or written[-1])
    report_module.build_and_write(project, plan_spec(project, project.specs[0]))
    return written[0]


def test_each_cell_is_checked_out_by_its_grade_and_the_report_writes_none_again(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch
                                                                                ) -> None:
    project = make(tmp_path)
    items = _grade_all(project)
    views = [project.runs_dir / "p" / i.case.id / i.arm.name / f"trial-{i.k}" for i in items]
    inodes = [(v / "trial.json").stat().st_ino for v in views]  # written by the grade tasks
    assert _report_writes(project, monkeypatch) == 0
    assert [(v / "trial.json").stat().st_ino for v in views] == inodes
    # … and notes them all in index/<spec>.views.json, which the next run's no-op check reads
    noted = orjson.loads((project.state_dir / "index" / "p.views.json").read_bytes())["cells"]
    assert sorted(noted) == sorted(f"{i.case.id}/{i.arm.name}/trial-{i.k}" for i in items)
    for item, view in zip(items, views, strict=True):
        trial = orjson.loads((view / "trial.json").read_bytes())
        grade = orjson.loads((view / "grade.json").read_bytes())
        assert trial["key"] == item.tkey.key and trial["labels"]["k"] == item.k and grade["trial_key"] == trial["key"]
        assert (view / "output.txt").is_file() and (view / "workspace").is_dir()


def test_a_view_edited_after_its_early_checkout_is_written_again_by_the_report(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch
                                                                              ) -> None:
    project = make(tmp_path)
    items = _grade_all(project)
    view = project.runs_dir / "p" / items[0].case.id / items[0].arm.name / "trial-0"
    (view / "output.txt").write_text("edited by hand\n")
    assert _report_writes(project, monkeypatch) == 1
    assert (view / "output.txt").read_text() != "edited by hand\n"


def _run_cells(project: Project) -> Any:
    """A run's plan, and each of its cells' trial and grade tasks run (each checks its cell out early)."""
    plan = plan_spec(project, project.specs[0])
    for item in plan.items:
        assert not isinstance(actions.trial_step.__wrapped__(project, item)[0], Exception)
        assert not isinstance(actions.run_grade.__wrapped__(project, item, view=True), Exception)
    return plan


def test_the_records_a_cells_early_checkout_holds_are_what_the_store_gives_for_it(tmp_path: Path) -> None:
    """What the report takes from the early checkouts (early_records) is exactly what records_of reads for each
    cell, its stamp included."""
    project = make(tmp_path)
    plan = _run_cells(project)
    early = checkout.early_records(project, "p")
    assert sorted(early) == ["a/with_skill/trial-0", "a/with_skill/trial-1"]
    for item in plan.items:
        rec, signature = early[f"a/with_skill/trial-{item.k}"]
        fresh = checkout.records_of(project, report_module.cell_of(item))
        assert (rec.cell.key, rec.trial, rec.grade, rec.grade_key) == (item.tkey.key, fresh.trial, fresh.grade,
                                                                       fresh.grade_key)
        assert rec.known_stamp == fresh.stamp == cellview.digest_json({"trial": fresh.trial, "grade": fresh.grade})
        st = project.store.action_path(item.tkey.key).stat()
        assert signature == (st.st_ino, st.st_size, st.st_mtime_ns)
    assert checkout.early_records(project, "p") == {}  # taken once


def test_the_report_reads_no_record_its_cells_checked_out_early_and_indexes_them_as_held(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report of a run takes its cells' records from their early checkouts: it reads no trial record again, and
    the index takes them without reading the files, though they were written within RACY_NS of the report."""
    from skillmake.engine import index
    from skillmake.store.objects import TRIAL_SCHEMA

    project = make(tmp_path)
    plan = _run_cells(project)
    schemas: list[str] = []
    real_get = project.store.get_action
    monkeypatch.setattr(project.store, "get_action",
                        lambda key, **kw: schemas.append(kw["schema"]) or real_get(key, **kw))
    read: list[str] = []
    real_read = index.Index._read
    monkeypatch.setattr(index.Index, "_read", lambda self, key: read.append(key) or real_read(self, key))
    report_module.build_and_write(project, plan)
    assert TRIAL_SCHEMA not in schemas and read == []
    entries = orjson.loads(index.index_path(project, "p").read_bytes())["trials"]
    for item in plan.items:
        st = project.store.action_path(item.tkey.key).stat()
        assert entries[item.tkey.key][:3] == [st.st_ino, st.st_size, st.st_mtime_ns]


def test_a_record_replaced_after_its_cells_early_checkout_is_read_again_by_the_report(tmp_path: Path) -> None:
    """A record replaced after the early checkout (another run sharing the store): that cell's records are read
    again, its view shows the new one, and the other cell's early records still count."""
    from skillmake.core import atomic

    project = make(tmp_path)
    plan = _run_cells(project)
    path = project.store.action_path(plan.items[0].tkey.key)
    record = orjson.loads(path.read_bytes())
    record["timing"]["agent_ms"] = 4321.5
    atomic.write_bytes(path, orjson.dumps(record, option=orjson.OPT_INDENT_2))
    report_module.build_and_write(project, plan)
    shown = orjson.loads((project.runs_dir / "p/a/with_skill/trial-0/trial.json").read_bytes())
    assert shown["timing"]["agent_ms"] == 4321.5
    project2 = make(tmp_path / "again")
    plan2 = _run_cells(project2)
    path2 = project2.store.action_path(plan2.items[0].tkey.key)
    atomic.write_bytes(path2, path2.read_bytes())  # the same bytes in a new file: read again all the same
    assert sorted(checkout.early_records(project2, "p")) == ["a/with_skill/trial-1"]


def test_a_cell_folder_that_became_a_link_is_cut_when_its_arm_folder_was_checked_once(tmp_path: Path) -> None:
    import shutil

    from skillmake.engine.report import cells_of
    from skillmake.results.checkout import checkout

    project = make(tmp_path / "p")
    items = _grade_all(project)
    outside = tmp_path / "outside"
    outside.mkdir()
    arm = project.runs_dir / "p" / items[0].case.id / items[0].arm.name
    shutil.rmtree(arm / "trial-1")
    os.symlink(outside, arm / "trial-1")  # the second cell of an arm whose folders the first cell checked
    cells = cells_of(project, plan_spec(project, project.specs[0]))
    assert [c.cell.k for c in cells] == [0, 1]
    assert checkout(project, cells) == 1
    assert list(outside.iterdir()) == [] and not (arm / "trial-1").is_symlink()
    assert orjson.loads((arm / "trial-1" / "trial.json").read_bytes())["labels"]["k"] == 1


WRITER = ("mkdir -p sub/deep && printf x > sub/deep/f && printf yy > top && ln -s top sub/link && "
          "chmod +x top && echo done")


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, list[Any], dict[str, Any]]:
    """A project whose trials leave files, folders and a link in their workspace, each cell checked out early."""
    root = tmp_path_factory.mktemp("written")
    (root / "skills/s").mkdir(parents=True)
    (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (root / "p.eval.yaml").write_text(
        f"skill: skills/s\nagent: {{kind: command, command: {WRITER!r}}}\n"
        "trials: 4\ncases: [{id: a, prompt: hi, checks: [{type: contains, needle: done}]},\n"
        "        {id: b, prompt: ho, checks: [{type: contains, needle: done}]}]\n")
    project = Project.open(str(root))
    items = _grade_all(project)
    early = dict(checkout._EARLY.get((str(project.state_dir), "p"), {}))  # before the report's checkout takes them
    return project, items, early




def test_the_stat_a_checkout_notes_from_its_writes_is_what_a_listing_of_the_folder_finds(
        written: tuple[Project, list[Any], dict[str, Any]]) -> None:
    """The early checkout notes each folder's stat from its own writes (no listing of what it just wrote): exactly
    what a listing finds, for files, links, folders at any depth and the workspace folder, in views.json's entry
    and in the folder's own stamp — else the report and the next no-op would find every view changed."""
    project, _, noted = written
    assert sorted(noted) == [f"{c}/with_skill/trial-{k}" for c in "ab" for k in range(4)]
    for rel, entry in noted.items():
        folder = f"{project.runs_dir}/p/{rel}"
        assert entry["stat"] == cellview.folder_stat(folder)
        assert {"workspace/sub/", "workspace/sub/deep/", "workspace/sub/deep/f", "workspace/sub/link",
                "workspace/top", ".view.json", "."} <= set(entry["stat"])
        assert orjson.loads(Path(folder, ".view.json").read_bytes())["files"] == cellview.stamped_files(folder)
        assert os.access(f"{folder}/workspace/top", os.X_OK) and os.path.islink(f"{folder}/workspace/sub/link")


def test_the_report_finds_the_early_checkouts_current_without_a_pool_of_threads(
        written: tuple[Project, list[Any], dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Which folders are current is decided before any is written: a report whose cells were all checked out early
    (eight here, enough for the pool) writes none and starts no thread (and imports nothing for them)."""
    import concurrent.futures

    project, items, _ = written
    assert len(items) >= 2 * checkout.THREADS

    def refused(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a pool was started for folders that are current")

    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", refused)
    assert _report_writes(project, monkeypatch) == 0


def test_a_cell_whose_workspace_tree_is_lost_notes_its_note_file_too(
        written: tuple[Project, list[Any], dict[str, Any]]) -> None:
    import dataclasses

    project, _, _ = written
    rec = report_module.cells_of(project, plan_spec(project, project.specs[0]))[0]
    assert rec.trial is not None
    cell = dataclasses.replace(rec.cell, k=99)  # a folder of its own: the module's other cells stay as they are
    lost = checkout.labelled(cell, dict(rec.trial, workspace="sha256:" + "0" * 64), rec.grade, rec.grade_key)
    entry, rewritten = cellview.write_view(project, lost, None)
    folder = f"{project.runs_dir}/p/a/with_skill/trial-99"
    assert rewritten and entry["stat"] == cellview.folder_stat(folder) and "workspace.txt" in entry["stat"]
    assert "missing or corrupt" in Path(folder, "workspace.txt").read_text()
    assert orjson.loads(Path(folder, ".view.json").read_bytes())["files"] == cellview.stamped_files(folder)


def test_the_checkout_prunes_what_is_no_cell_and_never_follows_a_link(
        written: tuple[Project, list[Any], dict[str, Any]], tmp_path: Path) -> None:
    project, _, _ = written
    spec_dir = project.runs_dir / "p"
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    strays = [spec_dir / "gone-case" / "with_skill" / "trial-0", spec_dir / "a" / "gone-arm" / "trial-0",
              spec_dir / "a" / "with_skill" / "trial-7", spec_dir / "a" / "with_skill" / ".trial-0.new-12345"]
    for stray in strays:
        stray.mkdir(parents=True)
        (stray / "f").write_text("x")
    os.symlink(outside, spec_dir / "b" / "with_skill" / "trial-8")
    os.symlink(outside, spec_dir / "gone-link")
    checkout.checkout(project, report_module.cells_of(project, plan_spec(project, project.specs[0])))
    assert not any(s.exists() for s in strays) and not (spec_dir / "gone-case").exists()
    assert not (spec_dir / "a" / "gone-arm").exists()
    assert (outside / "keep").is_dir()  # links are left as they are, never followed
    assert sorted(p.name for p in spec_dir.iterdir()) == ["a", "b", "gone-link"]
    assert [sorted(p.name for p in (spec_dir / c / "with_skill").iterdir()) for c in "ab"] == [
        [f"trial-{k}" for k in range(4)], [*(f"trial-{k}" for k in range(4)), "trial-8"]]


def test_a_folder_left_half_written_by_a_run_that_died_is_not_shown(
        written: tuple[Project, list[Any], dict[str, Any]]) -> None:
    """A run killed while filling a cell's new folder leaves it under its temporary name (never the cell's): the next
    checkout of the cell by a process of the same pid starts it afresh, and an existing view is replaced whole."""
    import dataclasses

    project, _, _ = written
    rec = report_module.cells_of(project, plan_spec(project, project.specs[0]))[1]
    cell = dataclasses.replace(rec.cell, k=98)
    rec = checkout.labelled(cell, dict(rec.trial or {}), rec.grade, rec.grade_key)
    arm = project.runs_dir / "p" / cell.case.id / cell.arm.name
    left = arm / f".trial-98.new-{os.getpid()}"
    left.mkdir(parents=True)
    (left / "half-written.json").write_text("{")
    entry, rewritten = cellview.write_view(project, rec, None)
    assert rewritten and not left.exists() and not (arm / "trial-98" / "half-written.json").exists()
    (arm / "trial-98" / "by-hand.txt").write_text("x")  # an existing folder is moved aside, then replaced
    entry, rewritten = cellview.write_view(project, rec, {"stamp": "other"})
    assert rewritten and not (arm / "trial-98" / "by-hand.txt").exists()
    assert entry["stat"] == cellview.folder_stat(str(arm / "trial-98"))
    assert [p.name for p in arm.iterdir() if p.name.startswith(".")] == []


def test_a_view_checked_out_by_another_process_is_found_intact_by_its_own_stamp(
        written: tuple[Project, list[Any], dict[str, Any]]) -> None:
    """`-P process`: the cells' early checkouts ran in worker processes, so the report's process holds no note of
    them, and views.json may be lost too: each folder's own stamp (its files' stat, from the writes) says it is
    intact, and the report writes none again."""
    project, items, _ = written
    (project.state_dir / "index" / "p.views.json").unlink()
    checkout._EARLY.clear()
    views = [project.runs_dir / "p" / i.case.id / i.arm.name / f"trial-{i.k}" for i in items]
    inodes = [(v / "trial.json").stat().st_ino for v in views]
    assert checkout.checkout(project, report_module.cells_of(project, plan_spec(project, project.specs[0]))) == 0
    assert [(v / "trial.json").stat().st_ino for v in views] == inodes
    noted = orjson.loads((project.state_dir / "index" / "p.views.json").read_bytes())["cells"]
    assert all(noted[f"{i.case.id}/{i.arm.name}/trial-{i.k}"]["stat"] == cellview.folder_stat(str(v))
               for i, v in zip(items, views, strict=True))


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_an_early_checkout_never_writes_through_a_link_on_its_cells_path(
        written: tuple[Project, list[Any], dict[str, Any]], tmp_path: Path, level: int) -> None:
    """runs/p, its case folder, its arm folder or the cell folder itself made a link out of the project: the link
    (only) is removed and the view is written where it belongs."""
    import dataclasses
    import shutil

    project, _, _ = written
    rec = report_module.cells_of(project, plan_spec(project, project.specs[0]))[0]
    cell = dataclasses.replace(rec.cell, case=dataclasses.replace(rec.cell.case, id=f"linked{level}"))
    rec = checkout.labelled(cell, dict(rec.trial or {}), rec.grade, rec.grade_key)
    outside = tmp_path / "outside"
    outside.mkdir()
    parts = ["p", cell.case.id, cell.arm.name, "trial-0"]
    path = project.runs_dir.joinpath(*parts[:level])
    moved = project.runs_dir.parent / "moved-aside"
    if level == 1:  # runs/p itself: set the spec's real folder aside for the test's length
        shutil.move(path, moved)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, path)
    try:
        checkout.check_out_early(project, rec)
        assert list(outside.iterdir()) == []
        view = project.runs_dir.joinpath(*parts)
        assert not path.is_symlink() and (view / "trial.json").is_file()
        assert not any(p.is_symlink() for p in [view, *view.parents][:4])
    finally:
        shutil.rmtree(project.runs_dir / "p" / cell.case.id, ignore_errors=True)
        checkout._EARLY.clear()
        if level == 1:
            shutil.rmtree(path)
            shutil.move(moved, path)
