"""The plan's index (.skillmake/index/<spec>.json): what the plan needs of each stored trial record, and the
objects it names, valid while their files are unchanged on disk — so a no-op run opens no record.

An entry is trusted while the record file's (inode, size, mtime) are what they were when it was read, and every
object the record names (its outputs, its workspace tree and the tree's files) still has the (inode, size, mtime)
it had when it was checked: one stat each, cheapest first, as doit checks a file_dep. An object whose stat changed
is hashed again; one that is missing or corrupt makes the record stale: it is set aside (quarantined), so the
trial runs again and `explain` says which object was lost. The report task writes the entries of the records its
run made (`refresh`), so the run after a first run opens no record; a lost index costs one pass that rebuilds it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic
from skillmake.core.canonical import digest_json
from skillmake.run.project import Project
from skillmake.run.trial import CACHEABLE
from skillmake.run.workspace import kept_tree
from skillmake.store.objects import Store, named_objects

VERSION = 2
Facts = tuple[str, float, str | None]  # digest of the outputs, how long the agent took (ms), workspace tree
Stat = list[int]  # inode, size, mtime_ns


def index_path(project: Project, spec_name: str) -> Path:
    return project.state_dir / "index" / f"{spec_name}.json"


class Index:
    """trial key → [*stat of its record file, outputs digest, agent ms, workspace tree, [object hex, …]] and
    object hex → stat of its file when last checked."""

    def __init__(self, path: Path, store: Store) -> None:
        self.path = path
        self.store = store
        self.actions_dir = str(store.actions)
        self.objects_dir = str(store.objects)
        try:
            data = orjson.loads(path.read_bytes())
            if not isinstance(data, dict) or data.get("version") != VERSION:
                raise ValueError("another version")
            self.trials: dict[str, list[Any]] = dict(data["trials"])
            self.objects: dict[str, list[int]] = dict(data["objects"])
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            self.trials, self.objects = {}, {}
        self.used: dict[str, list[Any]] = {}
        self.damaged: dict[str, str] = {}  # key → why its record was set aside (a lost or corrupt object)
        self._checked: dict[str, str | None] = {}  # object hex → None (fine), "missing" or "corrupt"
        self._trees: dict[str, list[str]] = {}  # workspace tree digest → the objects it names (as read once)
        self.changed = False

    # --- the plan -------------------------------------------------------------------------------------------

    def stored(self, key: str) -> Facts | None:
        """The facts of `key`'s stored result, or None: no result, or one naming an object that is missing or
        corrupt (then set aside, and `damaged[key]` says why)."""
        if key in self.damaged:
            return None
        entry = self._current(key)
        if entry is None:
            entry = self._read(key)
            if entry is None:
                return None
            self.changed = True
        bad = self._first_bad(entry[6], trusted=False)
        if bad is not None:
            self.damaged[key] = _describe(self.store, key, *bad)
            self.store.quarantine_action(key)
            self.changed = True
            return None
        self.used[key] = entry
        return str(entry[3]), float(entry[4]), entry[5]

    def save(self, *, prune: bool = True) -> None:
        """Write the index when it changed. `prune`: keep only the entries this plan used (its keys now)."""
        trials = self.used if prune else {**self.trials, **self.used}
        if not self.changed and len(trials) == len(self.trials):
            return
        hexes = {h for entry in trials.values() for h in entry[6]}
        objects = {h: self.objects[h] for h in hexes if h in self.objects}
        atomic.write_bytes(self.path, orjson.dumps({"version": VERSION, "trials": trials, "objects": objects}))

    # --- the report task: the records its run made ----------------------------------------------------------

    def add(self, key: str, record: dict[str, Any] | None = None, *, before_ns: int = 0,
            written: tuple[int, int, int] | None = None) -> None:
        """Index the stored result of `key` if the index does not hold it yet (a record this run made: its
        objects were just written, and the checkout verified those it shows, so their stat is taken as it is).

        `record`: the result as the caller read it from the store, used instead of reading the file again when the
        file was last changed before `before_ns` (a time before the caller read it: the file holds what it read),
        or is still the file `written` (Store.written_as) names, the one `record` came from."""
        if key in self.used or self._current(key) is not None:
            return
        entry = self._from(key, record, before_ns, written) if record is not None else None
        if entry is None:
            entry = self._read(key)
        if entry is not None and self._first_bad(entry[6], trusted=True) is None:
            self.used[key] = entry
            self.changed = True

    # --- inside ---------------------------------------------------------------------------------------------

    def _action(self, key: str) -> str:
        h = key[7:]
        return f"{self.actions_dir}/{h[:2]}/{h}.json"

    def _current(self, key: str) -> list[Any] | None:
        entry = self.trials.get(key)
        if entry is None or len(entry) != 7:
            return None
        try:
            st = os.stat(self._action(key))
        except OSError:
            return None
        return entry if [st.st_ino, st.st_size, st.st_mtime_ns] == entry[:3] else None

    def _from(self, key: str, record: dict[str, Any], before_ns: int, written: tuple[int, int, int] | None
              ) -> list[Any] | None:
        """The entry of `key` from `record` (read by the caller) and one stat of its file; None when the file
        changed since `before_ns` and is not the file `written` names (then it is read again)."""
        try:
            st = os.stat(self._action(key))
        except OSError:
            return None
        if st.st_mtime_ns >= before_ns and (st.st_ino, st.st_size, st.st_mtime_ns) != written:
            return None
        return self._entry(key, record, st)

    def _read(self, key: str) -> list[Any] | None:
        """The entry of `key` from its record file: a fast look (parse only; the record is schema-checked when
        it is used). None when there is no result."""
        try:
            with open(self._action(key), "rb") as f:
                st = os.fstat(f.fileno())
                record = orjson.loads(f.read())
        except (OSError, orjson.JSONDecodeError):
            return None
        return self._entry(key, record, st)

    def _entry(self, key: str, record: Any, st: os.stat_result) -> list[Any] | None:
        if not isinstance(record, dict) or record.get("key") != key or record.get("outcome") not in CACHEABLE:
            return None
        try:
            timing = record.get("timing") or {}
            took = float(timing.get("agent_ms", timing.get("duration_ms", 0.0)))
            outputs = digest_json(record["outputs"])
            tree = kept_tree(record)
            digests = named_objects(record)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        if tree is not None:
            if tree not in self._trees:  # many trials keep the same tree (an empty workspace): read it once
                files = self.store.get_json(tree)  # hashed here: a corrupt tree is quarantined, then found missing
                self._trees[tree] = ([n["file"] for n in files.values()
                                      if isinstance(n, dict) and isinstance(n.get("file"), str)]
                                     if isinstance(files, dict) else [])
            digests += self._trees[tree]
        hexes = list(dict.fromkeys(d[7:] for d in digests if isinstance(d, str) and d.startswith("sha256:")))
        return [st.st_ino, st.st_size, st.st_mtime_ns, outputs, took, tree, hexes]

    def _first_bad(self, hexes: list[str], *, trusted: bool) -> tuple[str, str] | None:
        """The first object of `hexes` that is missing or corrupt, as (hex, "missing" | "corrupt")."""
        for h in hexes:
            state = self._checked.get(h, "")
            if state == "":
                state = self._check(h, trusted=trusted)
                self._checked[h] = state
            if state is not None:
                return h, state
        return None

    def _check(self, h: str, *, trusted: bool) -> str | None:
        path = f"{self.objects_dir}/{h[:2]}/{h[2:]}"
        try:
            st = os.stat(path)
        except OSError:
            return "missing"
        stat = [st.st_ino, st.st_size, st.st_mtime_ns]
        if self.objects.get(h) == stat:
            return None
        if not trusted and not self.store.verify(f"sha256:{h}"):  # changed since it was checked: hash it
            return "corrupt"
        self.objects[h] = stat
        self.changed = True
        return None


def _describe(store: Store, key: str, h: str, state: str) -> str:
    """`output object sha256:… is missing` — which of the record's objects, by the name the record gives it."""
    digest = f"sha256:{h}"
    names: list[str] = []
    try:
        record = orjson.loads(store.action_path(key).read_bytes())
        outputs = record.get("outputs") or {}
        names += [n for n, d in outputs.items() if d == digest]
        names += [f"output file {n}" for n, d in (outputs.get("files") or {}).items() if d == digest]
        if record.get("workspace") == digest:
            names.append("workspace tree")
        tree = store.get_json(record["workspace"]) if not names and kept_tree(record) else None
        if isinstance(tree, dict):
            names += [f"workspace file {rel}" for rel, node in tree.items()
                      if isinstance(node, dict) and node.get("file") == digest]
    except (OSError, orjson.JSONDecodeError, AttributeError, TypeError, KeyError):
        pass
    why = "lost from the store" if state == "missing" else "its content does not match its name"
    return (f"{names[0] if names else 'an'} object {digest[:19]}… is {state} ({why}): its record is set aside and "
            "the trial runs again")


def refresh(project: Project, spec_name: str, keys: list[str], records: dict[str, dict[str, Any]] | None = None,
            *, before_ns: int = 0, written: dict[str, tuple[int, int, int]] | None = None) -> None:
    """Index the stored results of `keys` that the index does not hold yet (the report task, after its run).
    `records`: key → the result the caller read from the store after `before_ns`, or from the file `written` names
    (Index.add)."""
    index = Index(index_path(project, spec_name), project.store)
    records = records or {}
    written = written or {}
    for key in keys:
        index.add(key, records.get(key), before_ns=before_ns, written=written.get(key))
    index.save(prune=False)


RACY_NS = 2_000_000_000  # a file's mtime within this of a clock reading may be older than the write (coarse clock)
