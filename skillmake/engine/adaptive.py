"""Adaptive trials in the engine (`trials: {min, max, decide}`): which of a cell's max trials the plan keeps, which
earlier grades a trial waits for, whether it is still needed when its turn comes, and which trials a report counts.

A cell (case × arm) looks at its outcomes after `min` trials and then every `batch` more (core/stats.stop_points).
Trial k waits for the grades of every trial before the last look at or below k, and runs only if no look so far
decided: the outcomes are read in trial-index order, so the decision never depends on which thread finished first.
Stored grades count: the plan drops the trials a cell's stored grades already made unnecessary, so a re-run after
an unrelated edit plans none of them, and raising max plans only what the sequence still needs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from skillmake.core.stats import stop_points, trial_needed
from skillmake.engine.plan import Item, SpecPlan, adaptive_settings, cell_groups, passed, stop_of
from skillmake.run.project import Project
from skillmake.spec.model import Spec

if TYPE_CHECKING:  # loaded where a look reads grades: a plain no-op (which imports this module) never does
    from skillmake.results.checkout import Cell, CellRecords

NOT_NEEDED = "not needed"  # the outcome a trial task reports when an earlier look decided its cell


def waits(plan: SpecPlan, item: Item, *, exists: Callable[[Item], bool]) -> list[str]:
    """The grade tasks trial `item` waits for: those of its cell's trials below the last look at or below k."""
    adaptive = plan.spec.adaptive
    if adaptive is None:
        return []
    before = [n for n in stop_points(adaptive.least, adaptive.most, adaptive.batch) if n <= item.k]
    if not before:
        return []
    held = _GROUPS.get(id(plan))
    if held is None or held[0] is not plan:  # once per plan: a cell's items, not a scan of the spec's per trial
        held = _GROUPS[id(plan)] = (plan, cell_groups(plan.items))
    group = held[1].get((item.case.id, item.arm.name), [])
    return [f"grade:{other.name}" for other in group if other.k < before[-1] and exists(other)]


_GROUPS: dict[int, tuple[SpecPlan, dict[tuple[str, str], list[Item]]]] = {}


def _cell(project: Project, spec: Spec, item: Any, k: int) -> Cell:
    from skillmake.results.checkout import Cell

    key = item.tkey.key if k == item.k else project.keys.trial_key(spec, item.case, item.arm, k).key
    return Cell(spec=spec, case=item.case, arm=item.arm, k=k, key=key)


def needed(project: Project, item: Item) -> bool:
    """Whether trial `item` must run now: no look of its cell before it decided, reading the stored grades of the
    trials before it (which its task waited for)."""
    adaptive = item.spec.adaptive
    if adaptive is None:
        return True
    before = [n for n in stop_points(adaptive.least, adaptive.most, adaptive.batch) if n <= item.k]
    if not before:
        return True
    from skillmake.results.checkout import records_of

    passes = [passed(records_of(project, _cell(project, item.spec, item, k)).grade) for k in range(before[-1])]
    if any(p is None for p in passes):
        return False  # an earlier trial gave no verdict (an error): the cell waits for it, retried next run
    return trial_needed(item.k, passes, **adaptive_settings(adaptive))


def counted(spec: Spec, cells: Sequence[CellRecords]) -> list[CellRecords]:
    """The cells a report counts: per case and arm, the trials up to the look that decided it (while undecided,
    those up to the next look and any stored past it); the trials after it were not needed, and are neither shown
    nor counted."""
    adaptive = spec.adaptive
    if adaptive is None:
        return list(cells)
    by_cell: dict[tuple[str, str], list[CellRecords]] = {}
    for rec in cells:
        by_cell.setdefault((rec.cell.case.id, rec.cell.arm.name), []).append(rec)
    used: dict[tuple[str, str], int] = {}
    for key, group in by_cell.items():
        group.sort(key=lambda r: r.cell.k)
        stop = stop_of(adaptive, [passed(r.grade) for r in group])
        # Undecided: the trials up to the next look (the row's `expected`) and any stored past it — not a view
        # folder for each of max's trials that no look has asked for yet.
        used[key] = stop.used if stop.used is not None else max(
            [stop.needed, *(r.cell.k + 1 for r in group if r.trial is not None)])
    return [rec for rec in cells if rec.cell.k < used[(rec.cell.case.id, rec.cell.arm.name)]]


def not_needed_values(item: Item) -> dict[str, Any]:
    """What a trial or grade task that an earlier look made unnecessary (or that waits for an earlier trial's
    verdict) tells the reporter: it made no call, and it is no trial."""
    return {"outcome": NOT_NEEDED, "ran": False, "unneeded": True,
            "why": f"adaptive: {item.case.id}/{item.arm.name} was decided, or waits for a verdict, before trial "
                   f"{item.k}"}
