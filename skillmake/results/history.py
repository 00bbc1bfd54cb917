"""history.jsonl rows (eva's .eval.jsonl, one per run that changed a result) and comparing two reports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from skillmake.results.report import report_digest
from skillmake.spec.model import WITH_SKILL

HISTORY_SCHEMA = "skillmake/history@1"


def _cell_name(row: Mapping[str, Any]) -> str:
    return row["case"] if row["arm"] == WITH_SKILL else f"{row['case']}@{row['arm']}"


def history_row(report: Mapping[str, Any], *, ts: str) -> dict[str, Any]:
    """One line of history: eva's {ts, all_passed, total, passed, failed_cases} plus the report digest.

    Counted over the cells (case × arm) of the arms that use the skill; a cell passes when every
    trial passed. `gates_passed` is the report's verdict, the one the header and exit code show.
    """
    skill_arms = {name for name, block in report["arms"].items() if block["skill"]}
    rows = [r for r in report["rows"] if r["arm"] in skill_arms]
    failed = [_cell_name(r) for r in rows if not (r["n"] > 0 and r["passed"] == r["n"])]
    return {"schema": HISTORY_SCHEMA, "ts": ts, "spec": report["spec"]["name"], "all_passed": not failed,
            "total": len(rows), "passed": len(rows) - len(failed), "failed_cases": failed,
            "gates_passed": bool(report["verdict"]["passed"]), "digest": report_digest(report)}


def history_line(row: Mapping[str, Any]) -> bytes:
    return orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n"


def read_history(data: bytes) -> list[dict[str, Any]]:
    """Rows of a history file; a line that does not parse (a torn write) is skipped, not fatal."""
    rows = []
    for line in data.splitlines():
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            rows.append(value)
    return rows


def last_row(data: bytes) -> dict[str, Any] | None:
    """The last row of (the tail of) a history file that parses; a torn last line is passed over."""
    for line in reversed(data.splitlines()):
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One case × arm compared with the previous report."""

    case: str
    arm: str
    status: str  # regressed | improved | unchanged | new | removed
    before: float | None  # pass rate
    after: float | None
    trials_changed: bool  # its trial keys differ: something the run depends on changed
    grades_changed: bool  # its grade keys differ: checks/judges or outputs changed

    @property
    def delta(self) -> float | None:
        return None if self.before is None or self.after is None else self.after - self.before


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    changes: tuple[Change, ...]

    def of(self, status: str) -> list[Change]:
        return [c for c in self.changes if c.status == status]

    @property
    def regressed(self) -> list[Change]:
        return self.of("regressed")

    @property
    def improved(self) -> list[Change]:
        return self.of("improved")

    @property
    def nothing_changed(self) -> bool:
        return all(c.status == "unchanged" and not c.trials_changed and not c.grades_changed for c in self.changes)


def _status(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return "unchanged" if before == after else ("improved" if before is None else "regressed")
    if after < before - 1e-9:
        return "regressed"
    if after > before + 1e-9:
        return "improved"
    return "unchanged"


def compare(previous: Mapping[str, Any] | None, report: Mapping[str, Any]) -> Comparison:
    """Which case × arm regressed or improved in pass rate, and whether their input keys differ."""
    before = {(r["case"], r["arm"]): r for r in (previous or {}).get("rows", ())}
    after = {(r["case"], r["arm"]): r for r in report["rows"]}
    changes = []
    for key, row in after.items():
        old = before.get(key)
        if old is None:
            changes.append(Change(case=key[0], arm=key[1], status="new", before=None, after=row["pass_rate"],
                                  trials_changed=True, grades_changed=True))
            continue
        changes.append(Change(case=key[0], arm=key[1], status=_status(old["pass_rate"], row["pass_rate"]),
                              before=old["pass_rate"], after=row["pass_rate"],
                              trials_changed=old["trial_keys"] != row["trial_keys"],
                              grades_changed=old["grade_keys"] != row["grade_keys"]))
    for key, old in before.items():
        if key not in after:
            changes.append(Change(case=key[0], arm=key[1], status="removed", before=old["pass_rate"], after=None,
                                  trials_changed=True, grades_changed=True))
    return Comparison(changes=tuple(changes))
