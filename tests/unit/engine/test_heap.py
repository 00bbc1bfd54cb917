"""A run's heap (engine/heap.py): full collections are rarer from the start of planning, what is alive when the
tasks start is frozen out of collections, and both end with the run."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillmake.engine import heap
from tests.unit.engine.test_plan import make


@pytest.fixture
def collector() -> Iterator[None]:
    """The collector's state as this test found it, whatever the test leaves."""
    heap.release()  # whatever an earlier test in this process left (the test below checks nothing does)
    thresholds = gc.get_threshold()
    yield
    heap.release()
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_start_hold_and_release(collector: None) -> None:
    gc.set_threshold(500, 7, 3)
    heap.start()
    assert gc.get_threshold() == (500, 7, heap.FULL_EVERY)
    heap.start()  # once: the thresholds it restores are the ones before the first
    assert gc.get_freeze_count() == 0
    heap.hold()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    heap.hold()
    assert gc.get_freeze_count() == frozen
    heap.release()
    assert gc.get_threshold() == (500, 7, 3) and gc.get_freeze_count() == 0
    heap.release()  # nothing held: nothing to do
    assert gc.get_threshold() == (500, 7, 3)


def test_hold_alone_also_makes_full_collections_rarer_and_release_undoes_both(collector: None) -> None:
    """A run that reaches its tasks without start() (a dodo.py of the user's own that plans before importing
    skillmake.dodo's creators) still gets both."""
    gc.set_threshold(700, 10, 10)
    heap.hold()
    assert gc.get_threshold() == (700, 10, heap.FULL_EVERY) and gc.get_freeze_count() > 0
    heap.release()
    assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == 0


PROBE = """
import gc, json, sys
from skillmake.engine import reporter
seen = {"before": gc.get_threshold()}
initialize, complete = reporter.SkillmakeReporter.initialize, reporter.SkillmakeReporter.complete_run
def init(self, *a):
    seen["planning"] = gc.get_threshold()
    initialize(self, *a)
    seen["tasks"] = [gc.get_threshold(), gc.get_freeze_count()]
def done(self):
    complete(self)
    seen["end"] = [gc.get_threshold(), gc.get_freeze_count()]
reporter.SkillmakeReporter.initialize, reporter.SkillmakeReporter.complete_run = init, done
from skillmake.commands import cli
code = cli.main(sys.argv[1:])
print(json.dumps(seen))
"""


def test_a_run_holds_its_heap_while_its_tasks_run_and_releases_it_after(tmp_path: Path) -> None:
    make(tmp_path / "p")
    env = dict(os.environ, SKILLMAKE_TMPDIR=str(tmp_path / "work"))
    out = subprocess.run([sys.executable, "-c", PROBE, "-q"], cwd=tmp_path / "p", env=env, capture_output=True,
                         text=True, timeout=120)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    before = seen["before"]
    assert before[2] != heap.FULL_EVERY
    assert seen["planning"] == [*before[:2], heap.FULL_EVERY]
    assert seen["tasks"][0] == [*before[:2], heap.FULL_EVERY] and seen["tasks"][1] > 1000
    assert seen["end"] == [before, 0]


@pytest.mark.parametrize("args", [["list"], ["run", "trial:nope"]])
def test_a_run_that_runs_no_task_in_process_releases_what_it_started(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector: None, args: list[str]) -> None:
    """A listing, or a run refused before its tasks, never reaches the reporter's complete_run: run_doit itself
    hands the collector back, or the caller's process would keep rarer full collections (and the next run's start()
    would find them taken)."""
    from skillmake.engine import main

    make(tmp_path / "p")
    monkeypatch.chdir(tmp_path / "p")
    monkeypatch.setenv("SKILLMAKE_TMPDIR", str(tmp_path / "work"))
    gc.set_threshold(600, 9, 11)
    try:
        main.run_doit(args)
    except SystemExit as refused:  # the mistyped task name: exit 3, as the front end prints it
        assert refused.code == 3
    assert gc.get_threshold() == (600, 9, 11) and gc.get_freeze_count() == 0 and not heap._saved
