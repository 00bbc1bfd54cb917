"""Grouping trial and grade records by case × arm, and summing their usage and timing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from skillmake.spec.model import Spec

Record = Mapping[str, Any]
USAGE_FIELDS = ("input_tokens", "output_tokens", "total_tokens", "cost_usd")


def cell_key(record: Record) -> tuple[str, str]:
    labels = record["labels"]
    return str(labels["case"]), str(labels["arm"])


def group_grades(spec: Spec, grades: Iterable[Record]) -> dict[tuple[str, str], list[Record]]:
    """Grades of this spec by (case, arm), ordered by trial index k; one grade per trial.

    Records of cases or arms the spec no longer has are left out. Two grades for the same
    trial mean the caller mixed old and new records: that is a bug, so it raises.
    """
    cases = {c.id for c in spec.cases}
    arms = {a.name for a in spec.arms}
    cells: dict[tuple[str, str], dict[int, Record]] = {}
    for grade in grades:
        case, arm = cell_key(grade)
        if case not in cases or arm not in arms:
            continue
        k = int(grade["labels"]["k"])
        by_k = cells.setdefault((case, arm), {})
        if k in by_k:
            raise ValueError(f"two grades for {spec.name}/{case}/{arm}/{k}: pass only the current grade of each trial")
        by_k[k] = grade
    return {key: [by_k[k] for k in sorted(by_k)] for key, by_k in cells.items()}


def trials_by_key(trials: Iterable[Record]) -> dict[str, Record]:
    return {str(t["key"]): t for t in trials}


def of_spec(spec: Spec, records: Iterable[Record]) -> list[Record]:
    """The records whose labels name a case and an arm the spec still has, ordered as the spec lists them."""
    cases = {c.id: i for i, c in enumerate(spec.cases)}
    arms = {a.name: i for i, a in enumerate(spec.arms)}
    mine = [r for r in records if cell_key(r)[0] in cases and cell_key(r)[1] in arms]
    return sorted(mine, key=lambda r: (cases[cell_key(r)[0]], arms[cell_key(r)[1]], int(r["labels"]["k"])))


def unique(records: Iterable[Record]) -> list[Record]:
    """One record per key: cells with identical inputs share a record, which ran (and cost) once."""
    seen: dict[str, Record] = {}
    for record in records:
        seen.setdefault(str(record["key"]), record)
    return list(seen.values())


def cell_name(record: Record) -> str:
    """"case/arm trial k", how a reason names the cell a record belongs to."""
    labels = record["labels"]
    return f"{labels['case']}/{labels['arm']} trial {labels['k']}"


def tokens_of(usage: Mapping[str, Any]) -> int | None:
    """Total tokens of one record: total_tokens, else input + output, else None."""
    if usage.get("total_tokens") is not None:
        return int(usage["total_tokens"])
    parts = [usage.get("input_tokens"), usage.get("output_tokens")]
    if all(p is None for p in parts):
        return None
    return sum(int(p) for p in parts if p is not None)


def sum_usage(records: Sequence[Record]) -> dict[str, Any]:
    """Summed usage of records; a field is None when no record reported it."""
    out: dict[str, Any] = {}
    for name in USAGE_FIELDS:
        values = [r.get("usage", {}).get(name) for r in records]
        if name == "total_tokens":
            values = [tokens_of(r.get("usage", {})) for r in records]
        known = [v for v in values if v is not None]
        out[name] = (round(sum(known), 6) if name == "cost_usd" else int(sum(known))) if known else None
    out["records"] = len(records)
    return out


def add_usage(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in USAGE_FIELDS:
        known = [v for v in (a.get(name), b.get(name)) if v is not None]
        out[name] = (round(sum(known), 6) if name == "cost_usd" else int(sum(known))) if known else None
    out["records"] = int(a.get("records", 0)) + int(b.get("records", 0))
    return out


def durations_ms(records: Sequence[Record]) -> list[float]:
    return [float(r["timing"]["duration_ms"]) for r in records if r.get("timing")]
