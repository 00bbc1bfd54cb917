"""Layer 5, results: what is built from records — report.json, grading/timing/benchmark.json, history, JUnit,
the summary, and the cells' views (checkout). Imports run and below; never doit."""

from __future__ import annotations

from skillmake.results.benchmark import benchmark_json
from skillmake.results.files import (
    append_history,
    last_history_row,
    read_json,
    read_report,
    write_benchmark,
    write_grading,
    write_json,
    write_junit,
    write_report,
    write_timing,
)
from skillmake.results.grading import grading_json, run_expectations, run_summary, timing_json
from skillmake.results.history import Change, Comparison, compare, history_row, read_history
from skillmake.results.junit import junit_xml
from skillmake.results.publish import Published, publish
from skillmake.results.report import REPORT_SCHEMA, build_report, report_digest
from skillmake.results.summary import render_summary
from skillmake.results.thresholds import Verdict, evaluate_thresholds
from skillmake.results.verdict import spec_verdict

__all__ = [
    "REPORT_SCHEMA", "Change", "Comparison", "Published", "Verdict",
    "append_history", "benchmark_json", "build_report", "compare", "evaluate_thresholds", "grading_json",
    "history_row", "junit_xml", "last_history_row", "publish", "read_history", "read_json", "read_report",
    "render_summary", "report_digest", "run_expectations", "run_summary", "spec_verdict", "timing_json",
    "write_benchmark", "write_grading", "write_json", "write_junit", "write_report", "write_timing",
]
