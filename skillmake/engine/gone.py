"""The views and reports of specs that no longer exist: a run and `skillmake report` remove them.

After `rm shout.eval.yaml`, `runs/shout/`, `reports/shout/` and `triggers/shout/` would otherwise stay, and the
viewer would show a spec the project no longer has. Only folders skillmake made are removed (each holds the
stamps skillmake writes there), never a link or what a link points at, and nothing while a spec is unreadable
under a name that cannot be told from its file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from skillmake.core import fstree
from skillmake.run.project import Project
from skillmake.spec.loader import spec_name_of


def live_specs(project: Project) -> frozenset[str]:
    """The names of the specs the project has now: those that loaded, and those that are broken (by file name)."""
    return frozenset({s.name for s in project.specs} | {spec_name_of(path) for path in project.broken}
                     | {spec_name_of(path) for path in project.spec_files})


def remove_gone(project: Project) -> list[str]:
    """Remove the folders of specs that no longer exist from runs/, reports/ and triggers/; their names."""
    live = live_specs(project)
    removed: set[str] = set()
    for base, made in ((project.runs_dir, _made_view), (project.reports_dir, _made_report),
                       (project.triggers_dir, _made_trigger_view)):
        if not _real_dir(base) or not fstree.inside(base, project.state_dir):
            continue  # a linked runs/ (or reports/) is never written through, nor removed from
        for entry in _entries(base):
            if entry.name in live or entry.name.startswith(".") or not _real_dir(entry) or not made(entry):
                continue
            fstree.remove_tree(entry)
            removed.add(entry.name)
    return sorted(removed)


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _entries(folder: Path) -> Iterable[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []


def _made_view(spec_dir: Path) -> bool:
    """runs/<spec>/: case folders holding skill-creator's eval_metadata.json or cell views with their stamp."""
    from skillmake.results.checkout import METADATA
    from skillmake.results.checkout import STAMP as VIEW_STAMP

    cases = [c for c in _entries(spec_dir) if _real_dir(c)]
    return bool(cases) and all((c / METADATA).is_file() or any(
        (t / VIEW_STAMP).is_file() for a in _entries(c) if _real_dir(a) for t in _entries(a) if _real_dir(t))
        for c in cases)


def _made_report(spec_dir: Path) -> bool:
    """reports/<spec>/: the report task's stamp or its report.json."""
    from skillmake.engine.report import STAMP

    return (spec_dir / STAMP).is_file() or (spec_dir / "report.json").is_file()


def _made_trigger_view(spec_dir: Path) -> bool:
    """triggers/<spec>/: query folders of trial-<k>/trial.json views."""
    queries = [q for q in _entries(spec_dir) if _real_dir(q)]
    return bool(queries) and all(any((t / "trial.json").is_file() for t in _entries(q) if _real_dir(t))
                                 for q in queries)
