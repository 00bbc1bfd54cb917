"""Layer 5, results: what is built from records — report.json, grading/timing/benchmark.json, history, JUnit,
the summary, and the cells' views (checkout). Imports run and below; never doit.

The names below load with their module on first use (PEP 562): importing one module of the layer (a plain no-op's
planner asks results.checkout for a constant) does not load all of them (~10 ms of a no-op's start). `publish` is
imported from its module (results.publish): the package's attribute of that name is the module once it is loaded."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from skillmake.results.publish import Published
    from skillmake.results.report import REPORT_SCHEMA, build_report, report_digest
    from skillmake.results.summary import render_summary
    from skillmake.results.thresholds import Verdict, evaluate_thresholds
    from skillmake.results.verdict import spec_verdict

_WHERE = {
    "Change": "skillmake.results.history",
    "Comparison": "skillmake.results.history",
    "Published": "skillmake.results.publish",
    "REPORT_SCHEMA": "skillmake.results.report",
    "Verdict": "skillmake.results.thresholds",
    "append_history": "skillmake.results.files",
    "benchmark_json": "skillmake.results.benchmark",
    "build_report": "skillmake.results.report",
    "compare": "skillmake.results.history",
    "evaluate_thresholds": "skillmake.results.thresholds",
    "grading_json": "skillmake.results.grading",
    "history_row": "skillmake.results.history",
    "junit_xml": "skillmake.results.junit",
    "last_history_row": "skillmake.results.files",
    "read_history": "skillmake.results.history",
    "read_json": "skillmake.results.files",
    "read_report": "skillmake.results.files",
    "render_summary": "skillmake.results.summary",
    "report_digest": "skillmake.results.report",
    "run_expectations": "skillmake.results.grading",
    "run_summary": "skillmake.results.grading",
    "spec_verdict": "skillmake.results.verdict",
    "timing_json": "skillmake.results.grading",
    "write_benchmark": "skillmake.results.files",
    "write_grading": "skillmake.results.files",
    "write_json": "skillmake.results.files",
    "write_junit": "skillmake.results.files",
    "write_report": "skillmake.results.files",
    "write_timing": "skillmake.results.files",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup finds it without this function
    return value


__all__ = [
    "REPORT_SCHEMA", "Change", "Comparison", "Published", "Verdict",
    "append_history", "benchmark_json", "build_report", "compare", "evaluate_thresholds", "grading_json",
    "history_row", "junit_xml", "last_history_row", "read_history", "read_json", "read_report",
    "render_summary", "report_digest", "run_expectations", "run_summary", "spec_verdict", "timing_json",
    "write_benchmark", "write_grading", "write_json", "write_junit", "write_report", "write_timing",
]
