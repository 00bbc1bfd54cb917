"""A stored trial serves a cell only where it would give the same outcome: cacheable, and within the timeout."""

from __future__ import annotations

import pytest

from skillmake.run.trial import CACHEABLE, fits


def _record(outcome: str = "completed", **timing: float) -> dict:
    return {"outcome": outcome, "timing": {"started": "x", **timing}}


@pytest.mark.parametrize(("record", "timeout", "expected"), [
    (_record(duration_ms=5000, agent_ms=4000), 5, True),
    (_record(duration_ms=5000, agent_ms=5000), 5, True),  # exactly at the limit still fits
    (_record(duration_ms=9000, agent_ms=5001), 5, False),
    (_record(duration_ms=4000), 5, True),  # an older record without agent_ms: its whole duration counts
    (_record(duration_ms=6000), 5, False),
    (_record("cheat", duration_ms=10, agent_ms=10), 5, True),
    (_record("error", duration_ms=10, agent_ms=10), 5, False),
    (_record("timeout", duration_ms=10, agent_ms=10), 5, False),
])
def test_fits(record: dict, timeout: float, expected: bool) -> None:
    assert fits(record, timeout) is expected


def test_only_results_are_cacheable() -> None:
    assert frozenset({"completed", "cheat"}) == CACHEABLE


def test_records_from_before_kept_trees_stay_valid_results(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from skillmake.run.workspace import kept_tree
    from skillmake.store.objects import TRIAL_SCHEMA, Store
    from tests.unit.store.test_objects import trial_record

    store = Store(tmp_path)
    old = dict(trial_record(store), workspace=".skillmake/runs/s/c/with_skill/trial-0")  # wave 1's form
    store.put_action(old, schema=TRIAL_SCHEMA)
    assert store.get_action(old["key"], schema=TRIAL_SCHEMA) == old  # not quarantined: no re-run on upgrade
    assert kept_tree(old) is None
    assert kept_tree(dict(old, workspace="sha256:" + "a" * 64)) == "sha256:" + "a" * 64
