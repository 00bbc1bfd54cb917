"""Trigger views: `.skillmake/triggers/<spec>/<query id>/trial-<k>/trial.json`, a checkout of the record each
trigger cell maps to now (design.md, "Records and views"), rebuilt after every run and `skillmake report`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic, fstree
from skillmake.core.paths import cut_links
from skillmake.run import trial as trials
from skillmake.run.project import Project
from skillmake.run.workspace import TrialDir
from skillmake.spec.model import TRIGGER_ARM, Spec
from skillmake.store.objects import TRIAL_SCHEMA
from skillmake.triggers.run import timeout_of


def trigger_dir(project: Project, spec: str, query: str, k: int) -> TrialDir:
    return TrialDir(root=project.triggers_dir / spec / query / f"trial-{k}")


def record_of(project: Project, spec: Spec, key: str) -> dict[str, Any] | None:
    """The trigger cell's record now: the stored result that fits the trigger timeout, else its last attempt."""
    assert spec.trigger_tests is not None
    record = project.store.get_action(key, schema=TRIAL_SCHEMA)
    if record is None or not trials.fits(record, timeout_of(spec, spec.trigger_tests)):
        record = project.store.get_attempt(key, schema=TRIAL_SCHEMA)
    return record


def checkout_triggers(project: Project, spec: Spec, cells: Sequence[tuple[str, int, dict[str, Any] | None]],
                      *, skill: str) -> None:
    """Write each (query id, k, record) cell's view, labelled with the cell's own identity; remove the views of
    cells the spec no longer has (and every view of a spec without trigger tests)."""
    top = project.triggers_dir / spec.name
    cut_links(project.triggers_dir, top)  # never written nor pruned through a link out of the project
    wanted: set[Path] = set()
    for query, k, record in cells:
        folder = trigger_dir(project, spec.name, query, k).root
        cut_links(project.triggers_dir, folder)
        wanted.add(folder)
        path = folder / "trial.json"
        if record is None:
            fstree.remove_tree(folder)
            continue
        shown = dict(record, labels={"spec": spec.name, "skill": skill, "case": query, "arm": TRIGGER_ARM, "k": k})
        data = orjson.dumps(shown, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        try:
            if path.read_bytes() == data:
                continue
        except OSError:
            pass
        atomic.write_bytes(path, data, durable=False)
    if not top.is_dir():
        return
    for query_dir in list(top.iterdir()):
        cut_links(project.triggers_dir, query_dir)
        for trial_dir in list(query_dir.iterdir()) if query_dir.is_dir() else [query_dir]:
            if trial_dir not in wanted:
                fstree.remove_tree(trial_dir)
        if query_dir.is_dir() and not any(query_dir.iterdir()):
            query_dir.rmdir()
    if not any(top.iterdir()):
        top.rmdir()
