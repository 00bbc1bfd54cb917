"""One cell's view folder: whether it shows the cell's records untouched, and writing it anew (checkout.py decides
which cells, and when).

A folder is written under a name of its own and renamed into place, so a reader sees the old folder or the whole new
one. What each write leaves (its size and mtime) is the folder's stat, noted in <spec>.views.json and, for the files,
in the folder's own stamp (.view.json), which also names the records' digest and keys it shows."""

from __future__ import annotations

import errno
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic, fstree
from skillmake.core.canonical import digest_json
from skillmake.core.paths import cut_links
from skillmake.core.pid import pid
from skillmake.core.redact import environment_secrets
from skillmake.results.files import GRADING, TIMING, json_bytes
from skillmake.results.grading import grading_json, timing_json
from skillmake.run.project import Project
from skillmake.run.workspace import kept_tree, materialize
from skillmake.spec.model import Arm, Case, Spec

STAMP = ".view.json"  # in each cell folder: the records' digest and keys it shows (and that skillmake made it)
_EMPTY_TREE = digest_json({})  # the kept tree of an empty workspace (most command agents'): what it holds is known
_LINKS = threading.Lock()
# Arm folders an early checkout found free of links on their whole path below runs/, as (st_dev, st_ino) then: the
# next cell of the arm lstats the arm folder (a link above it swaps what that path names) and its own folder, not
# every folder on its path again (held under _LINKS).
_ARMS: dict[str, tuple[int, int]] = {}
_ARMS_MAX = 4096


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
    known_stamp: str | None = field(default=None, compare=False)  # `stamp`, when an early checkout took it already

    @property
    def stamp(self) -> str:
        """The digest of the records the cell shows (its folder's stamp)."""
        if self.known_stamp is not None:
            return self.known_stamp
        return digest_json({"trial": self.trial, "grade": self.grade})


def cell_rel(case_id: str, arm: str, k: int) -> str:
    """A cell folder's path below runs/<spec>/ (workspace.trial_dir's layout)."""
    return f"{case_id}/{arm}/trial-{k}"


def shown_keys(folder: Path) -> tuple[str | None, str | None]:
    """The trial and grade keys the cell folder was last checked out from ((None, None) when unknown)."""
    keys = (read_stamp(folder) or {}).get("keys")
    if isinstance(keys, list) and len(keys) == 2 and all(k is None or isinstance(k, str) for k in keys):
        return keys[0], keys[1]
    return None, None


def read_stamp(folder: str | Path) -> dict[str, Any] | None:
    """The folder's own stamp (None: none, or unreadable)."""
    try:
        shown = orjson.loads(atomic.read_bytes(f"{folder}/{STAMP}"))
    except (OSError, orjson.JSONDecodeError):
        return None
    return shown if isinstance(shown, dict) else None


def folder_stat(folder: str, below: str = "") -> dict[str, list[int]]:
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


def stamped_files(folder: str) -> dict[str, list[int]] | None:
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


def unchanged(folder: str, stat: Any) -> bool:
    """Whether every entry of `stat` (from folder_stat) is as it was: one lstat each, nothing read."""
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


def write_view(project: Project, rec: CellRecords, shown: Any, *, secrets: tuple[str, ...] | None = None
               ) -> tuple[dict[str, Any], bool]:
    """Check the cell's folder out unless `shown` (its entry in <spec>.views.json) says it shows these records
    untouched (current); returns its entry now and whether it was rewritten."""
    folder, stamp, entry = current(project, rec, shown)
    if entry is not None:
        return entry, False
    return write(project, rec, folder, stamp, secrets=environment_secrets() if secrets is None else secrets), True


def current(project: Project, rec: CellRecords, shown: Any, *, safe: set[str] | None = None
            ) -> tuple[str, str, dict[str, Any] | None]:
    """The cell's folder, its records' stamp, and its entry for <spec>.views.json when it shows the cell's records
    untouched (None: it must be written): as `shown` (its entry there) says, else as the folder's own stamp says.
    Links on its path are cut first. `safe`: the arm folders this checkout found free of links (only the cell's own
    folder is looked at then)."""
    c = rec.cell
    runs = os.fspath(project.runs_dir)
    folder = f"{runs}/{c.spec.name}/{cell_rel(c.case.id, c.arm.name, c.k)}"  # workspace.trial_dir's
    with _LINKS:  # cells share their case and arm folders: one thread at a time removes a link there
        exists = _cut_links(runs, folder, safe)  # a linked runs/<spec> (or below) is never written through
    stamp = rec.stamp
    if not exists:  # a new cell (a first run's every one): no stamp of its own to read, nothing to compare
        return folder, stamp, None
    if isinstance(shown, dict):
        if shown.get("stamp") == stamp and unchanged(folder, shown.get("stat")):
            return folder, stamp, shown
    else:  # <spec>.views.json is lost: the folder's own stamp says whether it is intact (one listing, no rewrite)
        kept = read_stamp(folder)
        files = kept.get("files") if kept is not None and kept.get("stamp") == stamp else None
        if files is not None and files == stamped_files(folder):
            return folder, stamp, {"stamp": stamp, "keys": [c.key, rec.grade_key], "stat": folder_stat(folder)}
    return folder, stamp, None


def write(project: Project, rec: CellRecords, folder: str, stamp: str, *, secrets: tuple[str, ...]
          ) -> dict[str, Any]:
    """Write the cell's folder anew (`stamp`: rec.stamp); returns its entry for <spec>.views.json. `secrets`:
    environment_secrets(), asked once."""
    c = rec.cell
    keys = [c.key, rec.grade_key]
    # Filled under a name of its own, then renamed into place: a reader sees the old folder or the whole new one,
    # so the files in it are written as new files (no temp file and rename of their own). What each write leaves
    # (its size and mtime, from the write itself) is the folder's stat: no listing of what was just written.
    parent, name = os.path.split(folder)
    fresh = f"{parent}/.{name}.new-{pid()}"
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
        old = f"{parent}/.{name}.old-{pid()}"
        fstree.remove_tree(old)  # left by a run that died here
        os.replace(folder, old)
        os.replace(fresh, folder)
        fstree.remove_tree(old)
    written["."] = [os.lstat(folder).st_mtime_ns]  # its last entry (the stamp) made, then renamed: taken after
    return {"stamp": stamp, "keys": keys, "stat": written}


def _cut_links(base: str, folder: str, safe: set[str] | None) -> bool:
    """cut_links(base, folder), looking only at `folder` itself when its parent is in `safe` (then added), or is an
    arm folder found free of links before and still the same folder (_ARMS); whether `folder` exists (as a folder)."""
    parent = os.path.dirname(folder)
    if not (parent in safe if safe is not None else _same_arm(parent)):
        exists = _cut_cell_links(base, folder)
        if safe is not None:
            safe.add(parent)
        return exists
    try:
        mode = os.lstat(folder).st_mode
    except OSError:
        return False
    if stat.S_ISLNK(mode):
        os.unlink(folder)
        return False
    return stat.S_ISDIR(mode)


def forget_arms(spec_dir: str) -> None:
    """Drop what _ARMS notes below runs/<spec>/ (the report's checkout, once a run's cells of the spec are done): a
    later run looks at every folder on its cells' paths again, whatever was removed and made since."""
    prefix = spec_dir + "/"
    with _LINKS:
        for arm in [a for a in _ARMS if a.startswith(prefix)]:
            del _ARMS[arm]


def _same_arm(arm: str) -> bool:
    """Whether `arm` is a folder _cut_cell_links found free of links on its path, and its path still names it: one
    lstat (a link put in place of a folder above it makes the path name another folder; one put in place of the arm
    folder itself is no folder)."""
    known = _ARMS.get(arm)
    if known is None:
        return False
    try:
        st = os.lstat(arm)
    except OSError:
        del _ARMS[arm]
        return False
    if stat.S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) == known:
        return True
    del _ARMS[arm]
    return False


def _cut_cell_links(base: str, folder: str) -> bool:
    """cut_links(base, folder) for a cell's folder, `base` followed by plain names (spec, case, arm, trial-k): a link
    among them is removed, the link only; whether `folder` exists (as a folder). It spares cut_links' normalising of
    any path, a sixth of an early checkout's time; any other path goes to cut_links. An arm folder found free of
    links is noted (_ARMS)."""
    parts = folder[len(base) + 1:].split("/") if folder.startswith(base + "/") else []
    if not parts or any(p in ("", ".", "..") for p in parts):
        cut_links(base, folder)
        return os.path.isdir(folder)
    current = base
    for i, part in enumerate(parts):
        current = f"{current}/{part}"
        try:
            st = os.lstat(current)
        except OSError:
            return False  # nothing further exists: what gets made there is real
        if stat.S_ISLNK(st.st_mode):
            os.unlink(current)
            return False  # nothing below it exists any more
        if i == len(parts) - 2 and stat.S_ISDIR(st.st_mode):  # the arm folder, real, and every folder above it
            if len(_ARMS) >= _ARMS_MAX:
                _ARMS.clear()
            _ARMS[current] = (st.st_dev, st.st_ino)
    return stat.S_ISDIR(st.st_mode)


def _fill(project: Project, rec: CellRecords, folder: str, *, secrets: tuple[str, ...]) -> dict[str, list[int]]:
    """Write the cell's files into `folder`, a new folder of its own (write_view); returns their stat as folder_stat
    notes it (each file's [size, mtime_ns], each folder's [mtime_ns]), taken from the writes themselves."""
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
    tree = {} if digest == _EMPTY_TREE else store.get_json(digest) if digest else None
    workspace = f"{folder}/workspace"
    if isinstance(tree, dict):
        if tree:
            materialize(tree, Path(workspace), store.get)
            written.update(folder_stat(workspace, "workspace/"))
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
    as open() makes it). Returns its [size, mtime_ns] once closed (a network file system may set the mtime only when
    the data reaches the server, at the latest on close)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    st = os.lstat(path)
    return [st.st_size, st.st_mtime_ns]
