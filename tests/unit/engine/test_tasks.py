"""engine/tasks.py: which report tasks a run selects one by one (report_order), so each spec is reported once its own
cells are done (tests/functional/test_report_order.py runs it)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from skillmake.engine import tasks


@pytest.mark.parametrize(("argv", "ordered"), [
    (["run"], True), (["-q"], True), (["-n", "4", "-P", "thread"], True), (["run", "-c"], True),
    (["report:a"], False), (["trial:a/*"], False), (["run", "report:b"], False), (["list"], False),
    (["info", "report:a"], False), (["clean"], False), (["report"], False), (["validate"], False),
])
def test_only_a_run_of_every_task_selects_the_reports_one_by_one(monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                                                  ordered: bool) -> None:
    monkeypatch.setattr(tasks, "COMMAND", argv)  # the front end's words for doit (-j 4 is -n 4 there)
    plans = [SimpleNamespace(spec=SimpleNamespace(name=name)) for name in ("b", "a")]
    monkeypatch.setattr(tasks, "_touched", lambda root: plans)
    # In the specs' order (the trials' order): a spec's report is dispatched right after its own cells.
    assert tasks.report_order("/nowhere") == (["report:b", "report:a"] if ordered else [])


@pytest.mark.parametrize(("argv", "ordered"), [(["doit"], True), (["doit", "-n", "2"], True), (["doit", "list"], False),
                                               (["doit", "report:a"], False)])
def test_plain_doit_reads_its_own_command_line(monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                               ordered: bool) -> None:
    monkeypatch.setattr(tasks, "COMMAND", [])
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(tasks, "_touched", lambda root: [SimpleNamespace(spec=SimpleNamespace(name="a"))])
    assert tasks.report_order("/nowhere") == (["report:a"] if ordered else [])
