"""Writing and reading result files: validated against their schema, written atomically."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic
from skillmake.core.errors import RecordError
from skillmake.core.redact import environment_secrets, redact_bytes
from skillmake.results.grading import grading_json, timing_json
from skillmake.results.history import history_line, last_row
from skillmake.spec.schema import validate_record

REPORT = "report.schema.json"
BENCHMARK = "benchmark.schema.json"
GRADING = "grading.schema.json"
TIMING = "timing.schema.json"
HISTORY = "history.schema.json"
SNAPSHOT = "snapshot.schema.json"
RUN_OUTPUT = "run-output.schema.json"
_TAIL = 64 * 1024  # far more than one history row: the last complete row is always inside it


def write_json(path: str | Path, data: Mapping[str, Any], *, schema: str, what: str) -> None:
    """Validate `data` against `schema` (RecordError if it does not match), then write it atomically."""
    validate_record(schema, data, what=what)
    # Result files are regenerated from the store's records, so atomic is enough: no fsync per file.
    write_changed(path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n", durable=False)


def json_bytes(data: Mapping[str, Any], *, schema: str, what: str, secrets: tuple[str, ...] | None = None) -> bytes:
    """What write_json writes (validated, redacted), for a writer that puts it in a new folder of its own.
    `secrets`: environment_secrets(), when the writer asked once for many files."""
    validate_record(schema, data, what=what)
    return redact_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n",
                        environment_secrets() if secrets is None else secrets)


def write_changed(path: str | Path, data: bytes, *, durable: bool = False) -> bool:
    """Write `data` atomically unless the file holds exactly it already; True if written. A re-render that changed
    nothing then writes nothing (a reader with the file open, a sync or a CI cache keyed by mtime sees no change).
    Every result file passes here, and is redacted of this process's credentials on the way (redact.py)."""
    data = redact_bytes(data, environment_secrets())
    try:
        with open(path, "rb") as f:
            if f.read(len(data) + 1) == data:
                return False
    except OSError:
        pass
    atomic.write_bytes(path, data, durable=durable)
    return True


def write_report(path: str | Path, report: Mapping[str, Any]) -> None:
    write_json(path, report, schema=REPORT, what=f"report {path}")


def write_benchmark(path: str | Path, benchmark: Mapping[str, Any]) -> None:
    write_json(path, benchmark, schema=BENCHMARK, what=f"benchmark {path}")


def write_grading(path: str | Path, grade: Mapping[str, Any], trial: Mapping[str, Any] | None = None) -> None:
    """skill-creator's grading.json for one grade record (and the trial it grades, for timing)."""
    write_json(path, grading_json(grade, trial), schema=GRADING, what=f"grading {path}")


def write_timing(path: str | Path, trial: Mapping[str, Any]) -> None:
    """skill-creator's timing.json for one trial record."""
    write_json(path, timing_json(trial), schema=TIMING, what=f"timing {path}")


def write_snapshot(path: str | Path, snapshot: Mapping[str, Any]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_json(path, snapshot, schema=SNAPSHOT, what=f"snapshot {path}")


def write_junit(path: str | Path, xml: str) -> None:
    write_changed(path, xml.encode(), durable=False)


def last_history_row(path: str | Path) -> dict[str, Any] | None:
    """The last readable row of a history.jsonl, reading only its tail; None if there is none."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - _TAIL))
            tail = f.read()
    except OSError:
        return None
    if size > _TAIL:
        tail = tail.partition(b"\n")[2]  # the first line read is cut: not a row
    return last_row(tail)


def append_history(path: str | Path, row: Mapping[str, Any]) -> bool:
    """Add one row to a history.jsonl unless it repeats the last row's digest; True if it was added.

    A row records a run that changed a result: a run (or `report`) whose report has the digest
    the last row already has adds nothing. The file is rewritten atomically (it stays small).
    """
    validate_record(HISTORY, row, what=f"history row for {path}")
    last = last_history_row(path)
    if last is not None and last.get("digest") == row["digest"]:
        return False
    try:
        existing = Path(path).read_bytes()
    except FileNotFoundError:
        existing = b""
    if existing and not existing.endswith(b"\n"):
        existing += b"\n"  # a torn last line stays its own (skipped) line
    atomic.write_bytes(path, existing + history_line(row))
    return True


def read_json(path: str | Path, *, schema: str) -> dict[str, Any] | None:
    """A result file read back and validated; missing, unreadable or invalid means None (a miss)."""
    try:
        with open(path, "rb") as f:
            data = orjson.loads(f.read())
        validate_record(schema, data, what=os.fspath(path))
    except (OSError, orjson.JSONDecodeError, RecordError):
        return None
    return dict(data)


def read_report(path: str | Path) -> dict[str, Any] | None:
    return read_json(path, schema=REPORT)
