"""The run's reporter driven alone: its counter, running count and eta, the slow-task line, and that a finished
task leaves nothing behind in it (a progress line costs the same at the 30,000th task as at the first)."""

from __future__ import annotations

import io
import re
from types import SimpleNamespace
from typing import Any

import pytest

from skillmake.core import console
from skillmake.engine import reporter as reporter_module
from skillmake.engine.reporter import SkillmakeReporter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(reporter_module.time, "monotonic", fake)
    monkeypatch.setattr(console, "_style", console.Style(configured=True))
    return fake


def task(name: str, **values: Any) -> SimpleNamespace:
    return SimpleNamespace(name=name, task_dep=[], setup_tasks=[], uptodate=[], file_dep=set(),
                           values={"outcome": "pass", "ran": True, **values})


def reporter(tasks: list[SimpleNamespace]) -> tuple[SkillmakeReporter, io.StringIO]:
    out = io.StringIO()
    rep = SkillmakeReporter(out, {})
    rep.initialize({t.name: t for t in tasks}, [t.name for t in tasks])
    return rep, out


def test_the_counter_the_running_count_and_the_eta_follow_each_event(clock: Clock) -> None:
    tasks = [task(f"trial:s/c{i}/with_skill/0") for i in range(6)]
    rep, out = reporter(tasks)
    try:
        for t in tasks[:3]:
            rep.execute_task(t)
        clock.now += 4.0
        rep.add_success(tasks[0])  # 4 s; 5 to go, 2 still running: 5 × 4 / 2
        clock.now += 2.0
        rep.add_success(tasks[1])  # 6 s; mean 5 s, 4 to go, 1 running: 4 × 5 / 1
        rep.execute_task(tasks[3])
        rep.execute_task(tasks[4])
        rep.add_failure(tasks[3], Exception("boom"))
    finally:
        rep.complete_run()
    lines = [line for line in out.getvalue().splitlines() if line.startswith("[")]
    assert lines[0].startswith("[1/6 2 running eta 10s] trial:s/c0/with_skill/0  pass  4.0s"), lines
    assert lines[1].startswith("[2/6 eta 20s] trial:s/c1/with_skill/0  pass  6.0s"), lines
    assert rep.running_counted == 2  # c2 and c4: a failed task stops running too
    assert set(rep.running) == {"trial:s/c2/with_skill/0", "trial:s/c4/with_skill/0"}


def test_a_finished_task_leaves_nothing_behind(clock: Clock) -> None:
    tasks = [task(f"{kind}:s/c{i}/with_skill/0") for i in range(50) for kind in ("trial", "grade")]
    rep, _ = reporter(tasks)
    try:
        for t in tasks:
            rep.execute_task(t)
            clock.now += 0.5
            rep.add_success(t)
    finally:
        rep.complete_run()
    assert rep.running == {} and rep.unannounced == {} and rep.running_counted == 0
    assert rep.done == 100 and rep.duration_count == 50 and rep.duration_sum == pytest.approx(25.0)


def test_a_slow_task_is_announced_once_and_a_finished_one_never(clock: Clock) -> None:
    slow, quick = task("trial:s/slow/with_skill/0"), task("grade:s/quick/with_skill/0")
    rep, out = reporter([slow, quick])
    try:
        rep.execute_task(slow)
        rep.execute_task(quick)
        rep.add_success(quick)
        clock.now += reporter_module.SLOW_AFTER
        rep._announce_slow(clock.now)
        rep._announce_slow(clock.now + 10)
    finally:
        rep.complete_run()
    announced = re.findall(r"… running (\S+) \(started \d\d:\d\d:\d\d\)", out.getvalue())
    assert announced == ["trial:s/slow/with_skill/0"], out.getvalue()


def test_an_interrupted_run_does_not_wait_for_the_reporters_ticker() -> None:
    """The ticker only prints: an interrupt that cut doit's finish short (complete_run never ran) left it running,
    and the interrupted run's wait for its busy threads then took its whole grace (5 s) for it."""
    import time

    from skillmake.run import process

    reporter = SkillmakeReporter(io.StringIO(), {})
    reporter.initialize({}, [])
    try:
        assert reporter.ticker is not None and reporter.ticker.is_alive()
        t0 = time.monotonic()
        assert process.wait_for_all(timeout=4.0)
        assert time.monotonic() - t0 < 2.0  # not its grace: the ticker is not a thread it waits for
    finally:
        reporter.complete_run()
