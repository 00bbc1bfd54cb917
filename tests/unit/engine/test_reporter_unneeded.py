"""The progress counter with adaptive trials: a trial (or grade) an earlier look made unnecessary is no trial, so
it is not counted — N shrinks — and the counter never jumps over it."""

from __future__ import annotations

import io
import re
from types import SimpleNamespace
from typing import Any

import pytest

from skillmake.core import console
from skillmake.engine.reporter import SkillmakeReporter


def task(name: str, **values: Any) -> SimpleNamespace:
    return SimpleNamespace(name=name, task_dep=[], setup_tasks=[], uptodate=[], file_dep=set(),
                           values={"outcome": "pass", "ran": True, **values})


UNNEEDED = {"outcome": "not needed", "ran": False, "unneeded": True, "why": "the cell was decided at look 1"}


@pytest.mark.parametrize("verbose", [False, True])
def test_unneeded_trials_shrink_the_total_and_the_counter_never_jumps(monkeypatch: pytest.MonkeyPatch,
                                                                      verbose: bool) -> None:
    monkeypatch.setattr(console, "_style", console.Style(configured=True, verbose=verbose))
    tasks = [task(f"trial:s/c/with_skill/{k}") for k in range(3)]
    tasks += [task(f"trial:s/c/with_skill/{k}", **UNNEEDED) for k in range(3, 6)]
    tasks += [task(f"grade:s/c/with_skill/{k}") for k in range(3)]
    out = io.StringIO()
    rep = SkillmakeReporter(out, {})
    rep.initialize({t.name: t for t in tasks}, [t.name for t in tasks])
    try:
        order = [tasks[0], tasks[1], tasks[3], tasks[2], tasks[4], tasks[5], *tasks[6:]]
        for t in order:
            rep.execute_task(t)
            rep.add_success(t)
    finally:
        rep.complete_run()
    counters = [(int(m.group(1)), int(m.group(2))) for m in re.finditer(r"\[\s*(\d+)/(\d+)", out.getvalue())]
    assert [n for n, _ in counters] == [1, 2, 3, 4, 5, 6]  # one step per trial or grade made, none skipped
    assert counters[-1] == (6, 6)  # the three not needed are no part of the total once known
    assert all(total >= n for n, total in counters)
    lines = out.getvalue().splitlines()
    not_needed = [line for line in lines if "not needed" in line]
    assert len(not_needed) == (3 if verbose else 0)
    assert all(not line.startswith("[") for line in not_needed)  # said, not counted


@pytest.mark.parametrize("quiet", [False, True])
def test_a_run_whose_last_tasks_are_not_needed_ends_with_the_total_and_the_count_agreeing(
        monkeypatch: pytest.MonkeyPatch, quiet: bool) -> None:
    """A cell decided at its look: its later trials (and their grades) report "not needed" after every line was
    printed, so the run's last line said [6/12]. One closing counter line says they were not needed, [6/6]."""
    monkeypatch.setattr(console, "_style", console.Style(configured=True, quiet=quiet))
    made = [task(f"{kind}:s/c/with_skill/{k}") for k in range(3) for kind in ("trial", "grade")]
    skipped = [task(f"{kind}:s/c/with_skill/{k}", **UNNEEDED) for k in range(3, 6) for kind in ("trial", "grade")]
    out = io.StringIO()
    rep = SkillmakeReporter(out, {})
    rep.initialize({t.name: t for t in made + skipped}, [t.name for t in made + skipped])
    try:
        for t in made + skipped:
            rep.execute_task(t)
            rep.add_success(t)
    finally:
        rep.complete_run()
    counters = [(int(m.group(1)), int(m.group(2))) for m in re.finditer(r"\[\s*(\d+)/(\d+)", out.getvalue())]
    if quiet:
        assert counters == []
        return
    assert counters[-1] == (6, 6), out.getvalue()
    last = next(line for line in reversed(out.getvalue().splitlines()) if line.startswith("["))
    assert "adaptive: 3 trials not needed, nor their grades" in last, last
