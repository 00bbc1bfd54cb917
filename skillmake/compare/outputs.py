"""Each side's trial outputs: the stored record each cell maps to, and the cells with no stored result run now
through the engine's own trial execution, so they are stored by key like every other trial."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from skillmake.compare.sides import Side
from skillmake.compare.versions import VersionError
from skillmake.run import trial
from skillmake.run.keys import TrialKey
from skillmake.run.project import Project
from skillmake.spec.model import Case
from skillmake.store.objects import Store

USABLE = frozenset({"completed"})  # outcomes with an output to compare; a "cheat" read files it must not


@dataclass(slots=True, kw_only=True)
class Cell:
    """Trial k of one case on one side ("A" or "B") and its record, once known."""

    side: str
    case: Case
    k: int
    tkey: TrialKey
    record: dict[str, Any] | None = None
    ran: bool = False  # the trial ran in this command (False: the record came from the store)


@dataclass(slots=True, kw_only=True)
class Cells:
    by_key: dict[tuple[str, str, int], Cell]  # (side, case id, k) → cell

    def get(self, side: str, case: Case, k: int) -> Cell:
        return self.by_key[(side, case.id, k)]

    @property
    def missing(self) -> list[Cell]:
        return [c for c in self.by_key.values() if c.record is None]

    @property
    def ran(self) -> int:
        return sum(1 for c in self.by_key.values() if c.ran)

    @property
    def reused(self) -> int:
        return sum(1 for c in self.by_key.values() if c.record is not None and not c.ran)


def plan(project: Project, sides: Mapping[str, Side], cases: Iterable[Case], trials: int) -> Cells:
    """Every cell of both sides, with the stored result that serves it (one that fits the case's timeout)."""
    cells: dict[tuple[str, str, int], Cell] = {}
    for case in cases:
        for name, side in sides.items():
            for k in range(trials):
                tkey = side.trial_key(case, k)
                record = trial.cached(project, tkey, trial.timeout_of(side.spec, case))
                cells[(name, case.id, k)] = Cell(side=name, case=case, k=k, tkey=tkey, record=record)
    return Cells(by_key=cells)


def run_missing(project: Project, sides: Mapping[str, Side], cells: Cells, *,
                say: Callable[[str], None] = lambda _: None, gate: Any = None) -> None:
    """Run the cells that have no stored result (trial.execute: one execution per key, then stored). `gate`: a
    budget.Gate; a trial it does not admit (the spending cap) stays missing."""
    blocked = [c for c in cells.missing if not sides[c.side].runnable]
    if blocked:
        side = sides[blocked[0].side]
        assert side.version is not None
        names = ", ".join(side.version.missing[:5]) + (" …" if len(side.version.missing) > 5 else "")
        raise VersionError(f"{len(blocked)} trial(s) of {side.title} are not in the store, and the files of that "
                           f"version could not be recovered from the store or git: {names}",
                           hint="compare with --against REV (the commit that has it) or --against DIR (a folder "
                                "holding it); its stored trials serve only the cases and trials it ran")
    for cell in cells.missing:
        side = sides[cell.side]
        name = f"{cell.case.id}/{side.label}/{cell.k}"
        item = SimpleNamespace(spec=side.spec, case=cell.case, arm=side.arm, tkey=cell.tkey)
        if gate is not None and not gate.admit_trial(name, item):
            continue
        say(f"running trial {name}")
        run = trial.execute(project, side.spec, cell.case, side.arm, cell.k, cell.tkey)
        cell.record, cell.ran = run.record, run.ran
        if gate is not None:
            gate.settle_trial(name, item, run.record if run.ran else None)


def problem(cell: Cell) -> str | None:
    """Why the cell has no output to compare, or None."""
    record = cell.record
    if record is None:
        return "no trial record"
    if record["outcome"] not in USABLE:
        return f"its trial ended in {record['outcome']}" + (f": {record['error']}" if record.get("error") else "")
    return None


def load(store: Store, record: dict[str, Any]) -> tuple[str, dict[str, bytes]] | None:
    """The trial's output text and captured files from the store; None when an object is gone."""
    outputs = record["outputs"]
    text = store.get(outputs["output"])
    files = {name: store.get(digest) for name, digest in outputs["files"].items()}
    if text is None or any(data is None for data in files.values()):
        return None
    return text.decode("utf-8", "replace"), {name: data for name, data in files.items() if data is not None}
