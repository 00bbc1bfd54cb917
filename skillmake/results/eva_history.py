"""eva's `.eval.jsonl`: one row per run that evaluated an eva eval, in the eval's own folder, with eva's fields.

eva appends `{ts, all_passed, total, passed, failed_cases}` to `.eval.jsonl` on every `eva eval` invocation, and
its `promote` reads the last row. skillmake writes the same row, beside the eval.yml, each time a run evaluates
the spec (its report task runs: something of it ran, or its last verdict was red and is checked again). A run
that finds nothing of the spec stale evaluates nothing and adds nothing: the last row still describes the
eval as it is (the report task is skipped only when its inputs are unchanged and it passed). `skillmake report`
re-renders and adds nothing either.

Unlike reports/<spec>/history.jsonl (derived, deduplicated by digest), this file lives in the user's tree, is
the only copy, and may already hold rows eva itself wrote: rows are never rewritten or deduplicated, and a
torn line (a crash, another writer) is kept as it is and skipped when read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic
from skillmake.core.errors import RecordError, SkillmakeError
from skillmake.results.history import history_row
from skillmake.spec.schema import validate_record

EVA_HISTORY_FILE = ".eval.jsonl"
EVA_HISTORY = "eva-history.schema.json"


def eva_history_path(spec_path: str) -> Path:
    """eva's history file for the eval.yml at `spec_path`: `.eval.jsonl` in the eval's folder."""
    return Path(os.path.dirname(spec_path)) / EVA_HISTORY_FILE


def eva_row(report: Mapping[str, Any], *, ts: str) -> dict[str, Any]:
    """eva's row for one report: its cases counted as history.jsonl counts them (a case passes when every
    trial of it passed), and `all_passed` the report's verdict, so the row agrees with the exit code."""
    row = history_row(report, ts=ts)
    return {"ts": ts, "all_passed": bool(report["verdict"]["passed"]), "total": row["total"],
            "passed": row["passed"], "failed_cases": row["failed_cases"]}


def append_eva_row(path: str | Path, row: Mapping[str, Any]) -> None:
    """Add `row` as the last line of `path`, checked against eva's row schema first.

    The whole file is written to a temporary file and renamed over the old one, so a reader (eva's own
    promote, a dashboard tailing it) sees every earlier row and either none or all of the new one.
    """
    validate_record(EVA_HISTORY, row, what=f".eval.jsonl row for {path}")
    target = Path(path)
    try:
        existing = target.read_bytes()
    except FileNotFoundError:
        existing = b""
    except OSError as exc:
        raise _unwritable(target, exc) from None
    if existing and not existing.endswith(b"\n"):
        existing += b"\n"  # a torn last line stays a line of its own, skipped by readers
    try:
        atomic.write_bytes(target, existing + orjson.dumps(row) + b"\n")
    except OSError as exc:
        raise _unwritable(target, exc) from None


def _unwritable(path: Path, exc: OSError) -> SkillmakeError:
    return SkillmakeError(f"cannot add a row to eva's history {path}: {exc.strerror}",
                          hint="make the eval's folder and its .eval.jsonl writable; the run's results are kept "
                               "and the row is written by the next run")


def read_eva_rows(data: bytes) -> list[dict[str, Any]]:
    """The rows of a `.eval.jsonl` that parse and match eva's row schema; torn or foreign lines are skipped."""
    rows = []
    for line in data.splitlines():
        try:
            value = orjson.loads(line)
            validate_record(EVA_HISTORY, value, what=".eval.jsonl row")
        except (orjson.JSONDecodeError, RecordError):
            continue
        rows.append(dict(value))
    return rows
