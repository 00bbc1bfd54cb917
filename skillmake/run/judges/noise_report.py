"""The judge-noise report of one spec: per criterion, how often re-judging the same outputs changes the verdict —
built as `judge-noise.json` (schemas/judge-noise.schema.json) and rendered as a terminal table."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from skillmake.run.judges.agreement import Agreement, agreement, score_sd
from skillmake.spec.model import Case, Spec

SCHEMA = "judge-noise.schema.json"
SCHEMA_ID = "skillmake/judge-noise@1"
STABLE = "stable"
NOISY = "noisy: the judge, not the skill, decides"
NO_DATA = "no data"
_EXPECTATION = re.compile(r"expectation-\d+$")


@dataclass(frozen=True, slots=True, kw_only=True)
class CellVerdicts:
    """One cell's judge entries, repeat by repeat (the stored grade first); `errors` names the repeats that gave
    no verdict (the cell then takes no part in the statistics)."""

    name: str  # spec/case/arm/k
    case: Case
    arm: str
    k: int
    sets: tuple[tuple[dict[str, Any], ...], ...] = ()
    errors: tuple[tuple[int, str], ...] = ()

    @property
    def complete(self) -> bool:
        return not self.errors


@dataclass(slots=True)
class _Criterion:
    case: Case
    id: str
    text: str
    judge: str
    cells: list[dict[str, Any]] = field(default_factory=list)


def judge_kind(case: Case, entry_id: str) -> str:
    """Which judge gave an entry: rubric, criteria, expectations or sections (from its id, as the judges name it)."""
    if case.rubric and entry_id == "rubric":
        return "rubric"
    if any(c.id == entry_id for c in case.criteria):
        return "criteria"
    if case.expectations and _EXPECTATION.match(entry_id):
        return "expectations"
    return "sections"


def _scale(kind: str) -> str | None:
    """The scale a judge's score is read on for its spread: the rubric's 1–5 points, a criterion's 0–1; the other
    judges' scores only restate the verdict (expectations) or a deterministic share (sections)."""
    return {"rubric": "1-5", "criteria": "0-1"}.get(kind)


def _points(kind: str, score: Any) -> float | None:
    if not isinstance(score, (int, float)):
        return None
    return round(score * 4 + 1, 6) if kind == "rubric" else float(score)


def build(spec: Spec, cells: Sequence[CellVerdicts], *, repeats: int, skipped: Sequence[tuple[str, str]],
          calls: dict[str, int], judges: Sequence[dict[str, Any]], selection: str | None, max_flip_rate: float,
          generated: str, run_id: str) -> dict[str, Any]:
    """The judge-noise.json payload of `spec`."""
    criteria: dict[tuple[str, str], _Criterion] = {}
    for cell in cells:
        if not cell.complete or not cell.sets:
            continue
        for entry in cell.sets[0]:
            eid = str(entry.get("id") or entry["text"])
            found = [next((e for e in verdicts if str(e.get("id") or e["text"]) == eid), None)
                     for verdicts in cell.sets]
            if any(e is None for e in found):
                continue  # not judged in every repeat (cannot happen with today's judges): left out, not guessed
            kind = judge_kind(cell.case, eid)
            crit = criteria.setdefault((cell.case.id, eid), _Criterion(case=cell.case, id=eid, text=entry["text"],
                                                                      judge=kind))
            scores = [_points(kind, e.get("score")) for e in found if e is not None] if _scale(kind) else []
            crit.cells.append({"cell": cell.name, "arm": cell.arm, "k": cell.k,
                               "verdicts": [bool(e["passed"]) for e in found if e is not None], "scores": scores})
    rows = [_criterion(c, max_flip_rate) for c in criteria.values()]
    pooled = agreement([row["verdicts"] for c in criteria.values() for row in c.cells])
    incomplete = [{"cell": c.name, "repeat": r, "error": e} for c in cells for r, e in c.errors]
    return {
        "schema": SCHEMA_ID, "spec": {"name": spec.name, "path": spec.relpath}, "generated": generated,
        "run_id": run_id, "repeats": repeats, "verdicts_per_cell": repeats + 1, "selection": selection,
        "max_flip_rate": max_flip_rate, "judges": list(judges), "calls": dict(calls),
        "cells": sum(1 for c in cells if c.complete), "criteria": rows,
        "overall": {"subjects": pooled.cells, **_numbers(pooled)},
        "skipped": [{"cell": name, "why": why} for name, why in skipped], "incomplete": incomplete,
    }


def _numbers(result: Agreement) -> dict[str, Any]:
    return {"flip_rate": _round(result.flip_rate), "minority_share": _round(result.minority_share),
            "kappa": _round(result.kappa.value), "kappa_note": result.kappa.note,
            "observed_agreement": _round(result.kappa.observed), "expected_agreement": _round(result.kappa.expected)}


def _criterion(crit: _Criterion, max_flip_rate: float) -> dict[str, Any]:
    scale = _scale(crit.judge)
    result = agreement([c["verdicts"] for c in crit.cells], [c["scores"] for c in crit.cells] if scale else None)
    per_cell = []
    for row in crit.cells:
        sd = score_sd(row["scores"]) if scale else None
        per_cell.append({**row, "sd": _round(sd)})
    verdict = NO_DATA if not result.cells else NOISY if result.noisy(max_flip_rate) else STABLE
    spread = ({"scale": scale, "mean": _round(result.sd_mean), "max": _round(result.sd_max)}
              if scale and result.sd_mean is not None else None)
    return {"case": crit.case.id, "id": crit.id, "judge": crit.judge, "text": crit.text, "cells": result.cells,
            **_numbers(result), "score_sd": spread, "verdict": verdict, "per_cell": per_cell}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


# --- the terminal table -----------------------------------------------------------------------------------------

def render(payload: dict[str, Any], *, shown_path: str | None) -> list[str]:
    """The lines `skillmake rejudge` prints for one spec."""
    name, n = payload["spec"]["name"], payload["repeats"]
    lines = [f"{name}: {payload['cells']} cell(s) judged {n + 1} times each (the stored grade and {n} repeat"
             f"{'s' if n != 1 else ''}); {_judges(payload['judges'])}"]
    header = ("criterion", "cells", "flip rate", "minority", "kappa", "score sd", "verdict")
    table = [header]
    undefined = False
    for row in payload["criteria"]:
        undefined = undefined or (row["kappa"] is None and row["kappa_note"] is not None and row["cells"] > 0)
        table.append((_label(row), str(row["cells"]), _pct(row["flip_rate"]), _pct(row["minority_share"]),
                      _kappa(row), _sd(row["score_sd"]), row["verdict"]))
    if len(payload["criteria"]) > 1:
        overall = payload["overall"]
        table.append(("all criteria", str(overall["subjects"]), _pct(overall["flip_rate"]),
                      _pct(overall["minority_share"]), _kappa(overall), "", ""))
    if len(table) > 1:
        widths = [max(len(r[i]) for r in table) for i in range(len(header))]
        right = {1, 2, 3, 4, 5}
        for r in table:
            cells = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)]
            lines.append("  " + "  ".join(cells).rstrip())
    if undefined:
        lines.append("  kappa n/a: perfect agreement, no variance (every verdict the same: kappa is 0/0)")
    for item in payload["incomplete"]:
        lines.append(f"  incomplete {item['cell']} (repeat {item['repeat']}): {item['error']}")
    for item in payload["skipped"]:
        lines.append(f"  skipped {item['cell']}: {item['why']}")
    if shown_path:
        lines.append(f"  wrote {shown_path}")
    return lines


def _judges(judges: Sequence[dict[str, Any]]) -> str:
    out = []
    for j in judges:
        temp = j["temperature"]
        if temp is None:
            setting = "temperature: the provider's default"
        elif j["temperature_sent"]:
            setting = f"temperature {temp:g}"
        else:
            setting = f"temperature {temp:g} not sent (the {j['provider']} CLI cannot set one)"
        out.append(f"{j['provider']} {j['model']}, {setting}")
    return "judge " + "; ".join(out) if out else "no judge"


def _label(row: dict[str, Any]) -> str:
    text = " ".join(str(row["text"]).split())
    text = text if len(text) <= 40 else text[:39] + "…"
    return f"{row['case']} {row['id']} \"{text}\""


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _kappa(row: dict[str, Any]) -> str:
    if row["kappa"] is not None:
        return f"{row['kappa']:.2f}"
    return "n/a" if row.get("kappa_note") and (row.get("cells") or row.get("subjects")) else "—"


def _sd(spread: dict[str, Any] | None) -> str:
    if not spread:
        return "—"
    return f"{spread['mean']:.2f} ({spread['scale']})"
