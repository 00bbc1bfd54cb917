"""Comparing two runs of a spec from its history: which cells' outcomes changed, and why — the same reasons
`skillmake explain` gives, read from the two runs' records and the snapshots taken beside their reports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillmake.engine import explain
from skillmake.results.history import compare
from skillmake.results.report import report_digest
from skillmake.results.snapshot import SNAPSHOTS
from skillmake.view import data

Report = Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class CellChange:
    case: str
    arm: str
    status: str  # regressed | improved | unchanged | new | removed
    before: float | None
    after: float | None
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunComparison:
    before: Report
    after: Report
    run_reasons: tuple[str, ...]  # what changed for the whole spec: skill files, fixtures, git commit
    cells: tuple[CellChange, ...]

    @property
    def changed(self) -> list[CellChange]:
        return [c for c in self.cells if c.status != "unchanged" or c.reasons]


def _record(source: data.Source, key: str) -> dict[str, Any] | None:
    raw = data.record_bytes(source, key)
    record = data.read_json_bytes(raw) if raw is not None else None
    return record if isinstance(record, dict) else None


def _load(source: data.Source, digest: Any) -> Any:
    return source.store.get_json(digest) if data.is_digest(digest) else None


def trial_reasons(source: data.Source, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Why two trial records differ, input by input, in explain's words."""
    old, new = before.get("inputs", {}), after.get("inputs", {})
    reasons: list[str] = []
    if old.get("key_version") != new.get("key_version"):
        reasons.append(f"key_version {old.get('key_version')} → {new.get('key_version')}")
    if old.get("skill") != new.get("skill"):
        reasons.extend(explain.skill_diff(_load(source, old.get("skill")), _load(source, new.get("skill"))))
    if old.get("run") != new.get("run"):
        reasons.extend(explain.run_diff(_load(source, old.get("run")), _load(source, new.get("run"))))
    if old.get("agent") != new.get("agent"):
        reasons.extend(explain.fields_diff(_load(source, old.get("agent")), _load(source, new.get("agent")),
                                            "agent setting"))
    if not reasons and before.get("key") != after.get("key"):
        reasons.append("resampled" if old == new else "inputs changed")
    return reasons


def grade_reasons(source: data.Source, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    old, new = before.get("inputs", {}), after.get("inputs", {})
    reasons: list[str] = []
    if old.get("outputs") != new.get("outputs"):
        reasons.append("the trial's outputs changed")
    if old.get("grade") != new.get("grade"):
        reasons.extend(explain.fields_diff(_load(source, old.get("grade")), _load(source, new.get("grade")),
                                            "grading field"))
    if old.get("judge") != new.get("judge"):
        reasons.extend(explain.fields_diff(_load(source, old.get("judge")), _load(source, new.get("judge")),
                                            "judge setting"))
    return reasons


def _pairs(before: list[str], after: list[str]) -> list[tuple[str, str]]:
    return [(a, b) for a, b in zip(before, after, strict=False) if a != b]


def cell_reasons(source: data.Source, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Why a report row's records differ between two runs (its trials first, then its grades)."""
    reasons: list[str] = []
    for a, b in _pairs(list(old.get("trial_keys", ())), list(new.get("trial_keys", ()))):
        ra, rb = _record(source, a), _record(source, b)
        reasons.extend(trial_reasons(source, ra, rb) if ra and rb else ["a trial record is no longer in the store"])
    for a, b in _pairs(list(old.get("grade_keys", ())), list(new.get("grade_keys", ()))):
        ra, rb = _record(source, a), _record(source, b)
        if ra and rb:
            reasons.extend(r for r in grade_reasons(source, ra, rb) if r != "the trial's outputs changed"
                           or not reasons)
    if len(old.get("trial_keys", ())) != len(new.get("trial_keys", ())):
        reasons.append(f"{len(old.get('trial_keys', ()))} → {len(new.get('trial_keys', ()))} graded trials")
    return list(dict.fromkeys(reasons))


def snapshot_of(source: data.Source, name: str, digest: str) -> dict[str, Any] | None:
    """The snapshot saved with the report of that digest (results/snapshot.py), if there is one."""
    folder = source.reports_dir / name / SNAPSHOTS
    try:
        paths = sorted(folder.glob("*.json"), reverse=True)
    except OSError:
        return None
    for path in paths:
        snap = data.read_json(path)
        if isinstance(snap, dict) and (snap.get("report") or {}).get("digest") == digest:
            return snap
    return None


def _files_diff(before: Mapping[str, Any], after: Mapping[str, Any], label: str) -> list[str]:
    out = [f"{label} {f} changed" for f in sorted(set(before) & set(after)) if before[f] != after[f]]
    out += [f"{label} {f} added" for f in sorted(set(after) - set(before))]
    out += [f"{label} {f} removed" for f in sorted(set(before) - set(after))]
    return out


def run_reasons(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[str]:
    if before is None or after is None:
        return ["no snapshot of one of the runs: compare the cells below"]
    out = _files_diff((before.get("skill") or {}).get("files") or {}, (after.get("skill") or {}).get("files") or {},
                      "skill file")
    out += _files_diff(before.get("referenced") or {}, after.get("referenced") or {}, "file")
    sha_a, sha_b = (before.get("git") or {}).get("sha"), (after.get("git") or {}).get("sha")
    if sha_a != sha_b:
        out.append(f"git commit {str(sha_a)[:10]} → {str(sha_b)[:10]}")
    return out


def runs(source: data.Source, name: str, before: Report, after: Report) -> RunComparison:
    """Compare two reports of the spec `name` (older first)."""
    old_rows = {(r["case"], r["arm"]): r for r in before.get("rows", ())}
    new_rows = {(r["case"], r["arm"]): r for r in after.get("rows", ())}
    cells = []
    for change in compare(before, after).changes:
        old, new = old_rows.get((change.case, change.arm)), new_rows.get((change.case, change.arm))
        reasons = cell_reasons(source, old, new) if old is not None and new is not None else []
        cells.append(CellChange(case=change.case, arm=change.arm, status=change.status, before=change.before,
                                after=change.after, reasons=tuple(reasons)))
    snaps = (snapshot_of(source, name, report_digest(before)), snapshot_of(source, name,
                                                                               report_digest(after)))
    return RunComparison(before=before, after=after, run_reasons=tuple(run_reasons(*snaps)), cells=tuple(cells))
