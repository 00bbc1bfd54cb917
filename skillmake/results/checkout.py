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

import errno
import os
import stat
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic, fstree
from skillmake.core.canonical import digest_json
from skillmake.core.paths import cut_links
from skillmake.core.redact import environment_secrets
from skillmake.run import grade as grading
from skillmake.run import trial as trials
from skillmake.run.judges import expectations as expectations_judge
from skillmake.run.project import Project
from skillmake.run.workspace import kept_tree, materialize
from skillmake.spec.model import Arm, Case, Spec
from skillmake.store.objects import GRADE_SCHEMA, TRIAL_SCHEMA

THREADS = 4  # cells checked out at once
_LINKS = threading.Lock()
STAMP = ".view.json"  # in each cell folder: the records' digest and keys it shows (and that skillmake made it)
VIEWS = "{}.views.json"  # in .skillmake/index/: per cell of a spec, its stamp, keys and the stat of all it holds
METADATA = "eval_metadata.json"
METADATA_SCHEMA = "eval-metadata.schema.json"


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """One cell (spec, case, arm, k) and the trial key it maps to now."""

    spec: Spec
    case: Case
    arm: Arm
    k: int
    key: str

    @property
    def name(self) -> str:
        return f"{self.spec.name}/{self.case.id}/{self.arm.name}/{self.k}"

    @property
    def labels(self) -> dict[str, Any]:
        return {"spec": self.spec.name, "skill": self.spec.skill.name, "case": self.case.id,
                "arm": self.arm.name, "k": self.k}


@dataclass(frozen=True, slots=True, kw_only=True)
class CellRecords:
    """What a cell shows: its trial record and the grade of it, relabelled for the cell (None: none yet).

    `result` says whether they are results (cached, reused by later runs) or the last failed attempt.
    """

    cell: Cell
    trial: dict[str, Any] | None
    grade: dict[str, Any] | None
    grade_key: str | None  # set when the grade is a cached result

    @property
    def stamp(self) -> str:
        return digest_json({"trial": self.trial, "grade": self.grade})


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


def labels_digest(spec: Spec) -> str | None:
    """What a spec's views show that no key holds: integer eval ids, expectation names and types (a rename re-runs
    and re-grades nothing, but must reach the views). None when no case sets either, so a spec that does not use them
    keeps the report inputs it had."""
    labels = [[c.id, c.eval_id, list(c.expectation_names), *([list(c.expectation_types)] if c.expectation_types
                                                             else [])]
              for c in spec.cases if c.eval_id is not None or c.expectation_names or c.expectation_types]
    return digest_json(labels) if labels else None


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
        folder, stamp, entry = _current(project, rec, shown[name].get(rel), safe=safe)
        views[name][rel] = entry  # None until written: the cells keep their order in views.json
        if entry is None:
            stale.append((rec, rel, folder, stamp))
    secrets = environment_secrets()

    def one(job: tuple[CellRecords, str, str, str]) -> tuple[CellRecords, str, dict[str, Any]]:
        rec, rel, folder, stamp = job
        return rec, rel, _write(project, rec, folder, stamp, secrets=secrets)

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
        entry, _ = _write_view(project, rec, None)
    except (OSError, ValueError):
        return
    with _EARLY_LOCK:
        _EARLY.setdefault((str(project.state_dir), cell.spec.name), {})[
            cell_rel(cell.case.id, cell.arm.name, cell.k)] = entry


# (state folder, spec) → {cell_rel: its views.json entry} of the folders check_out_early wrote in this process, for
# the report's checkout to take (then dropped).
_EARLY: dict[tuple[str, str], dict[str, Any]] = {}
_EARLY_LOCK = threading.Lock()


def _take_early(project: Project, spec_name: str) -> dict[str, Any]:
    with _EARLY_LOCK:
        return _EARLY.pop((str(project.state_dir), spec_name), {})


def cell_rel(case_id: str, arm: str, k: int) -> str:
    """A cell folder's path below runs/<spec>/ (workspace.trial_dir's layout)."""
    return f"{case_id}/{arm}/trial-{k}"


def views_current(project: Project, spec_name: str, cells: Iterable[tuple[str, str, str | None]]) -> bool:
    """Whether every cell (its cell_rel, trial key, grade key) still shows the records of these keys, untouched
    since its checkout: one read per spec and one stat per entry of each folder (a no-op run's check)."""
    shown = _load_views(project, spec_name)
    base = f"{project.runs_dir}/{spec_name}/"
    for rel, trial_key, grade_key in cells:
        entry = shown.get(rel)
        if not isinstance(entry, dict) or entry.get("keys") != [trial_key, grade_key]:
            return False
        if not _unchanged(base + rel, entry.get("stat")):
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


def shown_keys(folder: Path) -> tuple[str | None, str | None]:
    """The trial and grade keys the cell folder was last checked out from ((None, None) when unknown)."""
    keys = (_read_stamp(folder) or {}).get("keys")
    if isinstance(keys, list) and len(keys) == 2 and all(k is None or isinstance(k, str) for k in keys):
        return keys[0], keys[1]
    return None, None


def _read_stamp(folder: str | Path) -> dict[str, Any] | None:
    try:
        shown = orjson.loads(Path(folder, STAMP).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return shown if isinstance(shown, dict) else None


def _stat(folder: str, below: str = "") -> dict[str, list[int]]:
    """Everything in a checked-out folder: "." and each folder below as [mtime_ns] (an entry added, removed or
    renamed in it changes it), each file or link as [size, mtime_ns] (an edit in place changes it). `below`: the
    folder is that sub-folder of the cell's (its entries named with that prefix; "." left out)."""
    try:
        out: dict[str, list[int]] = {} if below else {".": [os.lstat(folder).st_mtime_ns]}
        pending = [(below, folder)]
        while pending:
            rel, path = pending.pop()
            for entry in list(os.scandir(path)):
                name = rel + entry.name
                st = entry.stat(follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    out[name + "/"] = [st.st_mtime_ns]
                    pending.append((name + "/", entry.path))
                else:
                    out[name] = [st.st_size, st.st_mtime_ns]
    except OSError:  # gone or unreadable: checked out again next time
        return {}
    return out


def _files(folder: str) -> dict[str, list[int]] | None:
    """What the folder's own stamp notes: every file or link below it as [size, mtime_ns], each folder as [] (the
    stamp cannot note the mtimes its own writing changes). None when the folder cannot be read."""
    out: dict[str, list[int]] = {}
    pending = [("", str(folder))]
    try:
        while pending:
            rel, path = pending.pop()
            for entry in list(os.scandir(path)):
                name = rel + entry.name
                if name == STAMP:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    out[name + "/"] = []
                    pending.append((name + "/", entry.path))
                else:
                    st = entry.stat(follow_symlinks=False)
                    out[name] = [st.st_size, st.st_mtime_ns]
    except OSError:
        return None
    return out


def _unchanged(folder: str, stat: Any) -> bool:
    """Whether every entry of `stat` (from _stat) is as it was: one lstat each, nothing read."""
    if not isinstance(stat, dict) or "." not in stat:
        return False
    for rel, was in stat.items():
        try:
            st = os.lstat(folder if rel == "." else f"{folder}/{rel}")
        except OSError:
            return False
        now = [st.st_mtime_ns] if rel == "." or rel.endswith("/") else [st.st_size, st.st_mtime_ns]
        if now != was:
            return False
    return True


def _write_view(project: Project, rec: CellRecords, shown: Any, *, secrets: tuple[str, ...] | None = None
                ) -> tuple[dict[str, Any], bool]:
    """Check the cell's folder out unless `shown` (its entry in <spec>.views.json) says it shows these records
    untouched (_current); returns its entry now and whether it was rewritten."""
    folder, stamp, entry = _current(project, rec, shown)
    if entry is not None:
        return entry, False
    return _write(project, rec, folder, stamp, secrets=environment_secrets() if secrets is None else secrets), True


def _current(project: Project, rec: CellRecords, shown: Any, *, safe: set[str] | None = None
             ) -> tuple[str, str, dict[str, Any] | None]:
    """The cell's folder, its records' stamp, and its entry for <spec>.views.json when it shows the cell's records
    untouched (None: it must be written): as `shown` (its entry there) says, else as the folder's own stamp says.
    Links on its path are cut first. `safe`: the arm folders this checkout found free of links (only the cell's own
    folder is looked at then)."""
    c = rec.cell
    folder = f"{project.runs_dir}/{c.spec.name}/{cell_rel(c.case.id, c.arm.name, c.k)}"  # workspace.trial_dir's
    with _LINKS:  # cells share their case and arm folders: one thread at a time removes a link there
        _cut_links(project.runs_dir, folder, safe)  # a linked runs/<spec> (or below) is never written through
    stamp = rec.stamp
    if isinstance(shown, dict):
        if shown.get("stamp") == stamp and _unchanged(folder, shown.get("stat")):
            return folder, stamp, shown
    else:  # <spec>.views.json is lost: the folder's own stamp says whether it is intact (one listing, no rewrite)
        kept = _read_stamp(folder)
        files = kept.get("files") if kept is not None and kept.get("stamp") == stamp else None
        if files is not None and files == _files(folder):
            return folder, stamp, {"stamp": stamp, "keys": [c.key, rec.grade_key], "stat": _stat(folder)}
    return folder, stamp, None


def _write(project: Project, rec: CellRecords, folder: str, stamp: str, *, secrets: tuple[str, ...]
           ) -> dict[str, Any]:
    """Write the cell's folder anew (`stamp`: rec.stamp); returns its entry for <spec>.views.json. `secrets`:
    environment_secrets(), asked once."""
    c = rec.cell
    keys = [c.key, rec.grade_key]
    # Filled under a name of its own, then renamed into place: a reader sees the old folder or the whole new one,
    # so the files in it are written as new files (no temp file and rename of their own). What each write leaves
    # (its size and mtime, from the write itself) is the folder's stat: no listing of what was just written.
    parent, name = os.path.split(folder)
    fresh = f"{parent}/.{name}.new-{os.getpid()}"
    try:
        os.mkdir(fresh)
    except FileExistsError:  # left by a run that died here
        fstree.remove_tree(fresh)
        os.mkdir(fresh)
    except FileNotFoundError:  # the cell's arm folder is new
        os.makedirs(fresh)
    written = _fill(project, rec, fresh, secrets=secrets)
    listed = {rel: [] if rel.endswith("/") else was for rel, was in written.items()}
    written[STAMP] = _new_file(f"{fresh}/{STAMP}", orjson.dumps({"stamp": stamp, "cell": c.name, "keys": keys,
                                                                  "files": listed}))
    try:
        os.rename(fresh, folder)  # a new cell (the first run's every cell): nothing to move aside
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
            raise
        old = f"{parent}/.{name}.old-{os.getpid()}"
        fstree.remove_tree(old)  # left by a run that died here
        os.replace(folder, old)
        os.replace(fresh, folder)
        fstree.remove_tree(old)
    written["."] = [os.lstat(folder).st_mtime_ns]  # its last entry (the stamp) made, then renamed: taken after
    return {"stamp": stamp, "keys": keys, "stat": written}


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


def _cut_links(base: Path, folder: str, safe: set[str] | None) -> None:
    """cut_links(base, folder), looking only at `folder` itself when its parent is in `safe` (then added)."""
    parent = os.path.dirname(folder)
    if safe is None or parent not in safe:
        cut_links(base, folder)
        if safe is not None:
            safe.add(parent)
        return
    try:
        link = stat.S_ISLNK(os.lstat(folder).st_mode)
    except OSError:
        return
    if link:
        os.unlink(folder)


def _fill(project: Project, rec: CellRecords, folder: str, *, secrets: tuple[str, ...]) -> dict[str, list[int]]:
    """Write the cell's files into `folder`, a new folder of its own (_write_view); returns what _stat would note
    of them (each file's [size, mtime_ns], each folder's [mtime_ns]), taken from the writes themselves."""
    from skillmake.results import grading_json, timing_json
    from skillmake.results.files import GRADING, TIMING, json_bytes

    store = project.store
    trial, grade = rec.trial, rec.grade
    written: dict[str, list[int]] = {}
    if trial is None:
        return written
    written["trial.json"] = _dump(f"{folder}/trial.json", trial)
    output = store.get(trial["outputs"]["output"])
    if output is not None:
        written["output.txt"] = _new_file(f"{folder}/output.txt", output)
    written["timing.json"] = _new_file(f"{folder}/timing.json", json_bytes(
        timing_json(trial), schema=TIMING, what=f"timing {folder}", secrets=secrets))
    if grade is not None:
        written["grade.json"] = _dump(f"{folder}/grade.json", grade)
        names = {n for n in rec.cell.case.expectation_names if n}
        written["grading.json"] = _new_file(f"{folder}/grading.json", json_bytes(
            grading_json(grade, trial, names=names), schema=GRADING, what=f"grading {folder}/grading.json",
            secrets=secrets))
    digest = kept_tree(trial)
    tree = store.get_json(digest) if digest else None
    workspace = f"{folder}/workspace"
    if isinstance(tree, dict):
        if tree:
            materialize(tree, Path(workspace), store.get)
            written.update(_stat(workspace, "workspace/"))
        else:  # an empty workspace (most command agents'): its folder is all there is
            os.mkdir(workspace)
    else:
        os.mkdir(workspace)
        note = trial.get("workspace_note") or "this trial's workspace was not kept"
        if digest:  # kept, but its tree is lost or corrupt now (quarantined): the next run draws the trial again
            note = (f"this trial's workspace tree {digest[:19]}… is missing or corrupt in the store; the next run "
                    "runs the trial again")
        written["workspace.txt"] = _new_file(f"{folder}/workspace.txt", (note + "\n").encode())
    written["workspace/"] = [os.lstat(workspace).st_mtime_ns]  # after all that was written in it
    return written


def _dump(path: str, record: dict[str, Any]) -> list[int]:
    return _new_file(path, orjson.dumps(record, option=orjson.OPT_INDENT_2))


def _new_file(path: str, data: bytes) -> list[int]:
    """A file that does not exist yet, in a folder no one else reads yet: written as it is (0666 less the umask,
    as open() makes it). Returns its [size, mtime_ns] as the write left them."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        return [len(data), os.fstat(fd).st_mtime_ns]
    finally:
        os.close(fd)


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
