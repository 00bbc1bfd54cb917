"""Cell views: each runs/<spec>/<case>/<arm>/trial-<k>/ is a checkout of the records that cell maps to now.

Records are shared by content (two cells with the same inputs share one trial record), so a cell's folder
is never written by the code path that happened to execute. After every run and every `skillmake report`,
each cell's folder is rebuilt from the store, labelled with the cell's own identity, as DVC's checkout makes
a workspace a view of its cache. A folder is left as it is only while it shows the records the cell maps to now
and nothing in it was touched: index/<spec>.views.json holds, per cell, the keys and records' digest it shows
and the stat of everything in it (a file's size and mtime, a folder's mtime), so a removed folder or a hand-edited
grade.json is rebuilt by the next run (`views_current`, the no-op's check: one stat per entry, no read); folders
of cells that no longer exist are removed. Each case's folder also gets skill-creator's eval_metadata.json.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic, fstree
from skillmake.core.paths import cut_links
from skillmake.core.redact import environment_secrets

# re-exported: the names the engine knows them by
from skillmake.results.cellview import STAMP as STAMP
from skillmake.results.cellview import Cell as Cell
from skillmake.results.cellview import CellRecords as CellRecords
from skillmake.results.cellview import cell_rel, current, forget_arms, unchanged, write, write_view
from skillmake.results.cellview import shown_keys as shown_keys
from skillmake.run import grade as grading
from skillmake.run import trial as trials
from skillmake.run.judges import expectations as expectations_judge
from skillmake.run.project import Project
from skillmake.spec.model import Case, Spec
from skillmake.store.objects import GRADE_SCHEMA, TRIAL_SCHEMA

THREADS = 4  # cell folders written at once
VIEWS = "{}.views.json"  # in .skillmake/index/: per cell of a spec, its stamp, keys and the stat of all it holds
METADATA = "eval_metadata.json"
METADATA_SCHEMA = "eval-metadata.schema.json"


def records_of(project: Project, cell: Cell) -> CellRecords:
    """The cell's records now: the cached trial result that fits the cell's timeout, else the last attempt of
    its key (error, timeout); the cached grade of that trial under the case's grading, else its last attempt."""
    store = project.store
    trial = store.get_action(cell.key, schema=TRIAL_SCHEMA)
    if trial is None or not trials.fits(trial, trials.timeout_of(cell.spec, cell.case)):
        trial = store.get_attempt(cell.key, schema=TRIAL_SCHEMA)
    if trial is None:
        return CellRecords(cell=cell, trial=None, grade=None, grade_key=None)
    key = grading.key_for(cell.spec, cell.case, trial)[0]
    grade = grading.cached(project, cell.spec, cell.case, trial, key=key)
    grade_key = key if grade is not None else None
    if grade is None:
        grade = store.get_attempt(key, schema=GRADE_SCHEMA)
    return labelled(cell, trial, grade, grade_key)


def labelled(cell: Cell, trial: dict[str, Any], grade: dict[str, Any] | None, grade_key: str | None) -> CellRecords:
    """The cell's records as it shows them (records_of, from records the caller read as it does)."""
    # A grade is shared by every trial with the same outputs: in this cell it grades this cell's trial, and its
    # expectations carry the names this cell's case gives them.
    labels = cell.labels
    if grade is not None:
        grade = dict(grade, labels=labels, trial_key=trial["key"],
                     expectations=expectations_judge.named(cell.case, grade.get("expectations", ())))
    return CellRecords(cell=cell, trial=dict(trial, labels=labels), grade=grade, grade_key=grade_key)


def checkout(project: Project, cells: Sequence[CellRecords]) -> int:
    """Make every cell's folder show its records; remove the folders of cells the specs no longer have.

    The folders to write are written THREADS at a time: a folder is mostly new files, whose creation waits on the
    disk (~0.4 ms each here) with the GIL released. Returns how many folders were (re)written."""
    specs = {rec.cell.spec.name for rec in cells}
    on_disk = {name: _load_views(project, name) for name in specs}
    shown = {name: {**on_disk[name], **_take_early(project, name)} for name in specs}  # early: check_out_early
    views: dict[str, dict[str, Any]] = {name: {} for name in specs}
    safe: set[str] = set()  # arm folders whose path below runs/ has no link (cut_links once each, not per cell)
    # Which folders are current is a few lstats each, here (most are, after the cells' early checkouts); only the
    # rest are written, by the pool when they are many.
    stale: list[tuple[CellRecords, str, str, str]] = []
    for rec in cells:
        name, rel = rec.cell.spec.name, cell_rel(rec.cell.case.id, rec.cell.arm.name, rec.cell.k)
        folder, stamp, entry = current(project, rec, shown[name].get(rel), safe=safe)
        views[name][rel] = entry  # None until written: the cells keep their order in views.json
        if entry is None:
            stale.append((rec, rel, folder, stamp))
    secrets = environment_secrets()

    def one(job: tuple[CellRecords, str, str, str]) -> tuple[CellRecords, str, dict[str, Any]]:
        rec, rel, folder, stamp = job
        return rec, rel, write(project, rec, folder, stamp, secrets=secrets)

    if len(stale) < 2 * THREADS:
        done: Iterable[tuple[CellRecords, str, dict[str, Any]]] = [one(job) for job in stale]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="checkout") as pool:
            done = list(pool.map(one, stale))
    for rec, rel, entry in done:
        views[rec.cell.spec.name][rel] = entry
    for name in specs:
        if views[name] != on_disk[name]:
            atomic.write_bytes(_views_path(project, name), orjson.dumps({"version": 1, "cells": views[name]}),
                               durable=False)
    for spec in {id(rec.cell.spec): rec.cell.spec for rec in cells}.values():
        cut_links(project.runs_dir, project.runs_dir / spec.name)  # never prune through a link out
        _prune(project.runs_dir / spec.name, spec)
    cases = {(id(rec.cell.spec), rec.cell.case.id): (rec.cell.spec, rec.cell.case) for rec in cells}
    for spec, case in cases.values():
        cut_links(project.runs_dir, project.runs_dir / spec.name / case.id)
        _write_metadata(project.runs_dir / spec.name / case.id, spec, case)
    for name in specs:  # its run's cells are done: a later run looks at their paths afresh
        forget_arms(f"{project.runs_dir}/{name}")
    return len(stale)


def check_out_early(project: Project, rec: CellRecords) -> None:
    """Check the cell's folder out now, in the task that just graded it (`rec`: its records as records_of gives
    them, from the records that task holds), instead of in its report's checkout: that task's worker otherwise waits
    on processes and the disk, while the report's checkout runs alone after every trial. The report still checks
    the folder out (`checkout`): it finds it showing the records it reads then, untouched (its stamp and stat, noted
    here for this process), and leaves it; a folder of another process's run (`-P process`) is found intact by its
    own stamp file. Never fails the task: the report does it again."""
    cell = rec.cell
    try:
        entry, _ = write_view(project, rec, None)
    except (OSError, ValueError):
        return
    rel = cell_rel(cell.case.id, cell.arm.name, cell.k)
    # The records too, for the report (early_records), when both are results whose files this process wrote or
    # read just now: the report takes them while those files are still the same (one stat each) instead of reading,
    # checking and relabelling them again, and their stamp is the one just taken.
    signatures = (project.store.written_as(cell.key),
                  project.store.written_as(rec.grade_key) if rec.grade_key is not None else None)
    kept = ((CellRecords(cell=cell, trial=rec.trial, grade=rec.grade, grade_key=rec.grade_key,
                         known_stamp=entry["stamp"]), signatures) if None not in signatures else None)
    with _EARLY_LOCK:
        where = (str(project.state_dir), cell.spec.name)
        _EARLY.setdefault(where, {})[rel] = entry
        if kept is not None:
            _EARLY_RECORDS.setdefault(where, {})[rel] = kept
        else:
            _EARLY_RECORDS.get(where, {}).pop(rel, None)


# (state folder, spec) → {cell_rel: its views.json entry} of the folders check_out_early wrote in this process, for
# the report's checkout to take (then dropped); and {cell_rel: (its records, the signatures of their two files)}.
_EARLY: dict[tuple[str, str], dict[str, Any]] = {}
_EARLY_RECORDS: dict[tuple[str, str], dict[str, tuple[CellRecords, tuple[Any, Any]]]] = {}
_EARLY_LOCK = threading.Lock()


def _take_early(project: Project, spec_name: str) -> dict[str, Any]:
    with _EARLY_LOCK:
        return _EARLY.pop((str(project.state_dir), spec_name), {})


def early_records(project: Project, spec_name: str) -> dict[str, tuple[CellRecords, tuple[int, int, int]]]:
    """The records of the cells of `spec_name` this process checked out early (check_out_early), by cell_rel,
    whose files are still the ones they came from (a stat each; a record is replaced whole, never edited in place),
    taken once: what records_of would read for them now, without reading it; each with its trial record file's
    signature (Store.written_as)."""
    with _EARLY_LOCK:
        kept = _EARLY_RECORDS.pop((str(project.state_dir), spec_name), {})
    store = project.store
    return {rel: (rec, trial) for rel, (rec, (trial, grade)) in kept.items()
            if rec.grade_key is not None and store.same_record(rec.cell.key, trial)
            and store.same_record(rec.grade_key, grade)}


def views_current(project: Project, spec_name: str, cells: Iterable[tuple[str, str, str | None]]) -> bool:
    """Whether every cell (its cell_rel, trial key, grade key) still shows the records of these keys, untouched
    since its checkout: one read per spec and one stat per entry of each folder (a no-op run's check)."""
    shown = _load_views(project, spec_name)
    base = f"{project.runs_dir}/{spec_name}/"
    for rel, trial_key, grade_key in cells:
        entry = shown.get(rel)
        if not isinstance(entry, dict) or entry.get("keys") != [trial_key, grade_key]:
            return False
        if not unchanged(base + rel, entry.get("stat")):
            return False
    return True


def _views_path(project: Project, spec_name: str) -> Path:
    return project.state_dir / "index" / VIEWS.format(spec_name)


def _load_views(project: Project, spec_name: str) -> dict[str, Any]:
    try:
        data = orjson.loads(_views_path(project, spec_name).read_bytes())
        cells = data["cells"] if data.get("version") == 1 else {}
    except (OSError, orjson.JSONDecodeError, AttributeError, KeyError, TypeError):
        return {}
    return cells if isinstance(cells, dict) else {}


def eval_metadata(spec: Spec, case: Case) -> dict[str, Any]:
    """skill-creator's eval_metadata.json of a case: its eval_id, name, prompt, and what its grading.json marks
    (checks and expectations, by the names benchmark.json's assertions use)."""
    assertions: list[dict[str, Any]] = [{"name": c.label, "description": c.name or c.label, "type": c.type}
                                        for c in case.checks]
    assertions += [{"name": case.expectation_name(i) or expectations_judge.entry_id(i), "description": text,
                    **({"type": case.expectation_types[i]} if i < len(case.expectation_types)
                       and case.expectation_types[i] else {})}
                   for i, text in enumerate(case.expectations)]
    return {"eval_id": case.result_id, "eval_name": case.id, "prompt": trials.prompt_text(case, spec.skill),
            "assertions": assertions}


def _write_metadata(folder: Path, spec: Spec, case: Case) -> None:
    """eval_metadata.json beside the case's arm folders, where skill-creator keeps it (eval-<id>/), rewritten
    only when it changed."""
    from skillmake.results import write_json

    path = folder / METADATA
    data = eval_metadata(spec, case)
    try:
        if orjson.loads(path.read_bytes()) == data:
            return
    except (OSError, orjson.JSONDecodeError):
        pass
    folder.mkdir(parents=True, exist_ok=True)
    write_json(path, data, schema=METADATA_SCHEMA, what=f"eval metadata {path}")


def _prune(spec_dir: Path, spec: Spec) -> None:
    """Remove what is not a cell of `spec` now: other cases, arms, trial indexes, and half-written folders."""
    arms = {a.name for a in spec.arms}
    cases = {c.id for c in spec.cases}
    wanted = {f"trial-{k}" for k in range(spec.trials)}
    for case, case_dir in _subdirs(os.fspath(spec_dir)):
        if case not in cases:
            fstree.remove_tree(case_dir)
            continue
        for arm, arm_dir in _subdirs(case_dir):
            if arm not in arms:
                fstree.remove_tree(arm_dir)
                continue
            for trial_folder, path in _subdirs(arm_dir):
                if trial_folder not in wanted:
                    fstree.remove_tree(path)


def _subdirs(folder: str) -> list[tuple[str, str]]:
    """The folders directly in `folder`, links left out, as (name, path): one listing, no stat (the entries' types)."""
    try:
        with os.scandir(folder) as entries:
            return [(e.name, e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
