"""Writing one spec's report files into its reports folder, keeping the previous report to compare with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import Spec
from .benchmark import benchmark_json, with_history
from .files import BENCHMARK, append_history, read_json, read_report, write_benchmark, write_report
from .history import Comparison, compare, history_row
from .records import Record
from .report import build_report

REPORT_FILE = "report.json"
BENCHMARK_FILE = "benchmark.json"
HISTORY_FILE = "history.jsonl"


@dataclass(frozen=True, slots=True, kw_only=True)
class Published:
    report: dict[str, Any]
    previous: dict[str, Any] | None  # the report.json found before this run (None if none or unreadable)
    comparison: Comparison
    appended: bool  # a history row was added: the report's digest differs from the last row's


def publish(folder: str | Path, spec: Spec, trials: Sequence[Record], grades: Sequence[Record], *,
            now: str, run_id: str | None = None) -> Published:
    """Build the spec's report and write report.json, benchmark.json and a history.jsonl row into `folder`.

    `now` is the ISO timestamp of this run and `run_id` its id (it splits the cost into spent and
    reused). The previous report.json is read first (a corrupt one counts as missing) so the
    caller can show what regressed or improved. The history row is added only when the report's
    digest differs from the last row's: a run that changed nothing leaves the history as it was.
    """
    base = Path(folder)
    previous = read_report(base / REPORT_FILE)
    report = build_report(spec, trials, grades, generated=now, run_id=run_id)
    write_report(base / REPORT_FILE, report)
    # skill-creator's iteration history: a run that changed results adds an iteration, one that did not, nothing.
    earlier = read_json(base / BENCHMARK_FILE, schema=BENCHMARK)
    write_benchmark(base / BENCHMARK_FILE, with_history(earlier, benchmark_json(spec, trials, grades, timestamp=now)))
    appended = append_history(base / HISTORY_FILE, history_row(report, ts=now))
    return Published(report=report, previous=previous, comparison=compare(previous, report), appended=appended)
