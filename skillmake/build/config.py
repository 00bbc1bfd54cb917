"""doit's configuration for a skillmake project: state db under .skillmake/, sqlite3, our reporter."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time
from typing import Any

from .reporter import SkillmakeReporter


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
    state = os.path.join(root, ".skillmake")
    os.makedirs(state, exist_ok=True)  # doit opens the dep_file before any task runs
    dep_file = os.path.join(state, "doit.db")
    _recover(dep_file)
    return {
        "dep_file": dep_file,
        "backend": "sqlite3",
        "reporter": SkillmakeReporter,
        "verbosity": 0,
        # Reports pull in their grades and those their trials, so a trial's grade (and its judge calls)
        # starts as soon as the trial ends, overlapping the trials still running. The two tasks that fail
        # a run (a broken spec, a failing gate) come last, so neither stops the other specs' reports.
        "default_tasks": ["report", "validate", "thresholds"],
    }
