"""Writing one spec's report files into its reports folder, keeping the previous report to compare with."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillmake.results.benchmark import benchmark_json, with_history
from skillmake.results.files import (
    BENCHMARK,
    append_history,
    read_json,
    read_report,
    write_benchmark,
    write_report,
    write_snapshot,
)
from skillmake.results.history import Comparison, compare, history_row
from skillmake.results.records import Record
from skillmake.results.report import build_report, settled
from skillmake.results.snapshot import SNAPSHOTS, build_snapshot, keep_contents, snapshot_name
from skillmake.spec.model import Spec

REPORT_FILE = "report.json"
BENCHMARK_FILE = "benchmark.json"
HISTORY_FILE = "history.jsonl"
ARCHIVE = "archive"  # archive/<digest hex>.json: the report each history row names, so any two runs compare
ARCHIVE_KEEP = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class Published:
    report: dict[str, Any]
    previous: dict[str, Any] | None  # the report.json found before this run (None if none or unreadable)
    comparison: Comparison
    appended: bool  # a history row was added: the report's digest differs from the last row's
    snapshot: Path | None = None  # the snapshot written for this report (only when it changed)


def publish(folder: str | Path, spec: Spec, trials: Sequence[Record], grades: Sequence[Record], *,
            now: str, run_id: str | None = None, triggers: dict[str, Any] | None = None,
            keep: Callable[[bytes], str] | None = None,
            unselected: Collection[tuple[str, str, int]] = ()) -> Published:
    """Build the spec's report and write report.json, benchmark.json and a history.jsonl row into `folder`.

    `now` is the ISO timestamp of this run and `run_id` its id (it splits the cost into spent and
    reused). The previous report.json is read first (a corrupt one counts as missing) so the
    caller can show what regressed or improved. The history row is added only when the report's
    digest differs from the last row's: a run that changed nothing leaves the history as it was; that row
    comes with a snapshot in `snapshots/` (results/snapshot.py): the skill's and referenced files' digests and
    the project's git commit.
    """
    base = Path(folder)
    previous = read_report(base / REPORT_FILE)
    # The results of the report it replaces: that report, when and by which run included (report.settled).
    report = settled(build_report(spec, trials, grades, generated=now, run_id=run_id, triggers=triggers,
                                  unselected=unselected), previous)
    write_report(base / REPORT_FILE, report)
    # skill-creator's iteration history: a run that changed results adds an iteration, one that did not, nothing.
    earlier = read_json(base / BENCHMARK_FILE, schema=BENCHMARK)
    write_benchmark(base / BENCHMARK_FILE, with_history(earlier, benchmark_json(spec, trials, grades, timestamp=now,
                                                                                    report=report)))
    row = history_row(report, ts=now)
    appended = append_history(base / HISTORY_FILE, row)
    snapshot = None
    if appended:
        _archive(base / ARCHIVE, row["digest"], report)
        # caliper's per-run result snapshot, on history's rule: a run that changed nothing adds nothing. After the
        # history row, so a row never names a report whose inputs are not also snapshotted by a later run.
        try:
            data = build_snapshot(spec, report, ts=now, run_id=run_id)
        except OSError:
            data = None  # a skill file removed while the run ended: the report stands, without its snapshot
        if data is not None:
            if keep is not None:  # the contents first: a snapshot on disk always names stored bytes
                keep_contents(spec, data, keep)
            snapshot = base / SNAPSHOTS / snapshot_name(now, run_id)
            write_snapshot(snapshot, data)
    return Published(report=report, previous=previous, comparison=compare(previous, report), appended=appended,
                     snapshot=snapshot)


def _archive(folder: Path, digest: str, report: dict[str, Any]) -> None:
    """Keep the report a history row names (history.jsonl holds only its digest), the newest ARCHIVE_KEEP of them:
    the viewer compares any two runs from them."""
    import orjson

    from skillmake.core import atomic

    path = folder / f"{digest.removeprefix('sha256:')}.json"
    if path.exists():
        return
    atomic.write_bytes(path, orjson.dumps(report), durable=False)
    copies = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for old in copies[:-ARCHIVE_KEEP]:
        old.unlink(missing_ok=True)
