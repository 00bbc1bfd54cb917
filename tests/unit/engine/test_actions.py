"""engine/actions.py: why a task runs is worked out only where a line says it, and never breaks the run."""

from __future__ import annotations

import pytest

from skillmake.core import console
from skillmake.engine import actions


def _reasons() -> list[str]:
    return ["new", "the prompt changed"]


def _broken() -> list[str]:
    raise KeyError("inputs")


@pytest.mark.parametrize(("quiet", "verbose"), [(False, False), (False, True)])
def test_a_run_that_prints_task_lines_says_why_each_task_runs(monkeypatch: pytest.MonkeyPatch, quiet: bool,
                                                             verbose: bool) -> None:
    monkeypatch.setattr(console, "_style", console.Style(quiet=quiet, verbose=verbose, configured=True))
    assert actions._why(_reasons) == "new; the prompt changed"
    assert actions._why(_broken) == "(reason unknown: KeyError)"  # a diagnostic never breaks a run


def test_a_quiet_run_prints_no_task_line_and_works_out_no_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "_style", console.Style(quiet=True, configured=True))
    asked: list[int] = []

    def reasons() -> list[str]:
        asked.append(1)  # the reasons read the cell's view from disk: a quiet run pays nothing for them
        return ["new"]

    assert actions._why(reasons) is None
    assert asked == []
