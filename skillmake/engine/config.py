"""doit's configuration for a skillmake project: state db under .skillmake/, sqlite3, our reporter."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time
from typing import Any


def scan_entry_points_once() -> None:
    """doit looks for plugins by scanning every installed distribution's entry points, again at each lookup
    (~6 ms each with 140 distributions; checking a command line against doit's options makes 16 of them, a run
    4). What is installed does not change while this process runs, so scan once and answer every lookup from
    that, group by group."""
    from importlib.metadata import EntryPoints, entry_points

    from doit import plugin

    if getattr(plugin.entry_points_impl, "skillmake", False):
        return
    found = entry_points()
    # doit asks for one group at a time (`doit.COMMAND`, …), 20 times a run: `select` would test every installed
    # entry point at each (~0.15 ms each with 140 distributions), so the groups are sorted out once.
    everything = EntryPoints(ep for group in _groups(found) for ep in group)
    by_group: dict[str, list[Any]] = {}
    for ep in everything:
        by_group.setdefault(ep.group, []).append(ep)

    def select(**params: Any) -> EntryPoints:
        if params.keys() == {"group"}:
            return EntryPoints(by_group.get(params["group"], ()))
        return everything.select(**params)

    def once() -> Any:
        return select

    once.skillmake = True  # type: ignore[attr-defined]
    plugin.entry_points_impl = once


def _groups(found: Any) -> list[Any]:
    """The entry points `entry_points()` gave, as lists: Python 3.11 gives a mapping of group → entry points
    (SelectableGroups, whose own iteration is deprecated), 3.12 one sequence of them."""
    return list(dict.values(found)) if isinstance(found, dict) else [found]


def _recover(dep_file: str) -> None:
    """A doit.db that sqlite cannot read (garbage, truncated) would crash every run with a traceback. It only
    caches what the store knows, so move it aside, say so, and let doit start a new one."""
    if not os.path.exists(dep_file):
        return
    try:
        with contextlib.closing(sqlite3.connect(f"file:{dep_file}?mode=ro", uri=True)) as db:
            db.execute("PRAGMA schema_version").fetchone()
            db.execute("SELECT name FROM sqlite_master").fetchall()
        return
    except sqlite3.DatabaseError as exc:
        why = str(exc)
    aside = f"{dep_file}.broken-{int(time.time())}"
    with contextlib.suppress(OSError):
        os.replace(dep_file, aside)
    print(f"skillmake: {dep_file} could not be read ({why}); moved it to {os.path.basename(aside)} and started a "
          "new one — it only caches what the store knows, so nothing is lost (delete the old file at will)",
          file=sys.stderr)


def doit_config(root: str) -> dict[str, Any]:
    # Here, not at import: importing this module (`skillmake --help` does, through build.main) costs nothing;
    # a dodo.py calls this before doit's remaining plugin lookups, which are then answered from one scan.
    scan_entry_points_once()
    # the engine's tasks come with it: only a run needs them
    from skillmake.engine.reporter import SkillmakeReporter  # the engine's tasks come with it: only a run needs them
    from skillmake.engine.shard import SHARD_VAR

    state, jobs = _settings(root)
    if not os.path.isdir(state):
        _require_specs(root)  # a folder with no spec is left as it was: nothing to run, nothing created
        os.makedirs(state, exist_ok=True)  # doit opens the dep_file before it loads any task
    dep_file = os.path.join(state, "doit.db")
    _recover(dep_file)
    config: dict[str, Any] = {
        "dep_file": dep_file,
        "backend": "sqlite3",
        "reporter": SkillmakeReporter,
        "verbosity": 0,
        # Reports pull in their grades and those their trials, so a trial's grade (and its judge calls)
        # starts as soon as the trial ends, overlapping the trials still running. The two tasks that fail
        # a run (a broken spec, a failing gate) come last, so neither stops the other specs' reports.
        "default_tasks": ["report", "validate", "thresholds"],
    }
    from skillmake.engine import scope, tasks

    if scope.names_reports(tasks.COMMAND or sys.argv[1:]):  # each named report gates: a failed one stops no other
        config["continue"] = True
    if os.environ.get(SHARD_VAR, "").strip():  # one job of a CI matrix: its trials and grades, no report (shard.py)
        # "trial" too: a plain run's stale cell is one trial task that grades it as well (cell.py), no grade task.
        config["default_tasks"] = ["grade", "trial", "trigger", "validate"]
    else:  # a plain run selects each spec's report on its own: it runs once its cells are done (tasks.report_order)
        config["default_tasks"] = [*tasks.report_order(root), *config["default_tasks"]]
    if jobs > 1:
        # The project's `jobs` (or $SKILLMAKE_JOBS, or -j) is the default of both `skillmake` and plain `doit`;
        # `-n N` on the command line still wins. Threads: tasks share the reporter and sys.stdout (design.md).
        config.update(num_process=jobs, par_type="thread")
    return config


def _require_specs(root: str) -> None:
    """Exit 5 (no spec) or 2 (a broken configuration) with one message, before doit opens its db."""
    from skillmake.core.errors import EXIT_INVALID, SkillmakeError
    from skillmake.spec.discovery import require_specs

    try:
        require_specs(root)
    except SkillmakeError as exc:
        print(f"skillmake: {exc.render()}", file=sys.stderr, flush=True)
        raise SystemExit(getattr(exc, "exit_code", EXIT_INVALID)) from None


def _settings(root: str) -> tuple[str, int]:
    """(the state folder for doit's db, how many tasks at once) from the project configuration. A broken
    configuration is reported by the validate task with its file:line:col; here it means the defaults."""
    from skillmake.core.errors import SkillmakeError
    from skillmake.spec.config import load_config
    from skillmake.spec.overrides import jobs

    try:
        config = load_config(root)
        return config.state_dir, int(jobs(config).value or 1)
    except SkillmakeError:
        return os.path.join(root, ".skillmake"), 1
