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


def test_the_task_actions_carry_their_signature_so_doit_does_not_work_it_out_per_task() -> None:
    import inspect

    from skillmake.engine import cell

    for action in (cell.run_cell, actions.run_grade, actions.trial_step, actions.run_trigger):
        sig = inspect.signature(action)
        assert sig is action.__signature__  # doit's _prepare_kwargs asks it once a task: now a lookup
        assert "project" in sig.parameters and "item" in sig.parameters  # the action's own, not the wrapper's
    assert "resample" in inspect.signature(actions.run_grade).parameters
