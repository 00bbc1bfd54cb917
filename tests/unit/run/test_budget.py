"""budget.Ledger: one total for every thread, a refusal that stops every later start, and in-run learning."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from skillmake.run.budget import Ledger, usd


def test_concurrent_admissions_never_overspend(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path, run_id="r1", cap=1.0)
    admitted: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(32)

    def trial(n: int) -> None:
        start.wait()
        if ledger.admit(f"c{n}", 0.1).admitted:
            with lock:
                admitted.append(f"c{n}")
            ledger.settle(f"c{n}", 0.1)

    threads = [threading.Thread(target=trial, args=(n,)) for n in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    state = ledger.summary()
    assert len(admitted) == 10 and state["spent"] == pytest.approx(1.0) and state["held"] == {}
    assert sorted(state["capped"] + admitted) == sorted(f"c{n}" for n in range(32))


def test_a_refusal_stops_every_later_start_even_a_cheaper_one(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path, run_id="r1", cap=1.0)
    assert ledger.admit("a", 0.9).admitted
    assert not ledger.admit("b", 0.5).admitted
    assert not ledger.admit("c", 0.0).admitted
    assert ledger.summary()["capped"] == ["b", "c"]


def test_running_trials_count_at_what_this_run_has_learned(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path, run_id="r1", cap=1.0)
    for cell in ("a", "b", "c"):
        assert ledger.admit(cell, 0.03, agent="x").admitted  # history says $0.03
    ledger.settle("a", 0.30, agent="x")  # today it costs $0.30: b and c now count at that
    assert not ledger.admit("d", 0.03, agent="x").admitted  # 0.30 + 2 × 0.30 + 0.30 > 1


def test_an_earlier_runs_ledger_is_not_this_runs(tmp_path: Path) -> None:
    old = Ledger(tmp_path, run_id="r1", cap=1.0)
    assert not old.admit("a", 2.0).admitted
    new = Ledger(tmp_path, run_id="r2", cap=1.0)
    assert new.admit("a", 0.5).admitted and new.summary()["capped"] == []


def test_caps_are_shown_as_written() -> None:
    assert (usd(1), usd(0.35), usd(0.009), usd(12.5)) == ("$1.00", "$0.35", "$0.009", "$12.50")
