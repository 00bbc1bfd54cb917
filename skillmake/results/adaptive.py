"""Adaptive trials in a report: each cell's decision (pass, fail, inconclusive, or still undecided), the trials it
used against the fixed-count plan, and the gate each cell of an arm that uses the skill makes of it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from skillmake.core.stats import VERDICT_OUTCOMES, adaptive_stop
from skillmake.results.records import Record
from skillmake.spec.model import Adaptive, Spec

DECISIONS = {"above": "pass", "below": "fail"}


def row_block(adaptive: Adaptive, grades: Sequence[Record]) -> tuple[dict[str, Any], int]:
    """The row's `adaptive` block from its grades (by trial index; a missing index is not known yet), and the
    trials the row must have graded: the look it stopped at, or the next look it waits for."""
    # An error, timeout or judge_error is no verdict: it is retried, and the cell stays undecided until it is.
    by_k = {int(g["labels"]["k"]): g["outcome"] == "pass" if g["outcome"] in VERDICT_OUTCOMES else None
            for g in grades}
    passes = [by_k.get(k) for k in range(max(by_k, default=-1) + 1)]
    stop = adaptive_stop(passes, least=adaptive.least, most=adaptive.most, batch=adaptive.batch,
                         threshold=adaptive.decide, alpha=adaptive.alpha)
    decision = "undecided" if stop.used is None else DECISIONS.get(stop.decision or "", "inconclusive")
    return {"decision": decision, "used": stop.used, "max": adaptive.most, "decide": adaptive.decide,
            "saved": adaptive.most - stop.used if stop.used is not None else 0}, stop.needed


def label(block: Mapping[str, Any]) -> str:
    """An adaptive cell's decision in words: "pass after 9/20", "inconclusive after 20/20", "undecided"."""
    if block["used"] is None:
        return "undecided"
    return f"{block['decision']} after {block['used']}/{block['max']}"


def gates(spec: Spec, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One gate per case under each arm that uses the skill: passed when the sequence decided it above `decide`
    (or left it inconclusive under `inconclusive: warn`)."""
    adaptive = spec.adaptive
    if adaptive is None:
        return []
    skill_arms = {a.name for a in spec.arms if a.skill}
    out = []
    for row in rows:
        block = row.get("adaptive")
        if row["arm"] not in skill_arms or not block or (row.get("not_selected") and not row["n"]):
            continue  # a case this run's selection left out is not judged
        decision, used, most = block["decision"], block["used"], block["max"]
        head = f"{spec.name}: case {row['case']!r} under {row['arm']}:"
        counts = f"{row['passed']}/{row['n']} passed"
        if decision in ("pass", "fail"):
            side = "above" if decision == "pass" else "below"
            message = (f"{head} pass rate surely {side} {adaptive.decide:.2f} ({counts}; decided after {used} of "
                       f"{most} trials)")
        elif decision == "inconclusive":
            message = (f"{head} inconclusive: after {most} of {most} trials ({counts}) the pass rate may still be "
                       f"either side of {adaptive.decide:.2f}; raise trials.max, or move decide away from the "
                       f"case's rate")
        elif not row["n"]:
            message = (f"{head} undecided: none of the {row['expected']} trials before its first look has a grade yet; "
                       "run `skillmake`")
        else:
            message = f"{head} undecided: {counts} of the {row['n']} trials graded so far; run `skillmake` again"
        ok = decision == "pass" or (decision == "inconclusive" and adaptive.inconclusive == "warn")
        out.append({"spec": spec.name, "metric": "decide", "arm": row["arm"], "case": row["case"],
                    "value": row["pass_rate"], "threshold": adaptive.decide, "passed": ok, "message": message})
    return out


def warnings(spec: Spec, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Inconclusive cells of arms that use the skill, when they only warn."""
    adaptive = spec.adaptive
    if adaptive is None or adaptive.inconclusive != "warn":
        return []
    return [str(g["message"]) for g in gates(spec, rows) if g["passed"] and "inconclusive" in g["message"]]


def inconclusive(spec: Spec, rows: Sequence[Mapping[str, Any]]) -> int:
    skill_arms = {a.name for a in spec.arms if a.skill}
    return sum(1 for r in rows
               if r["arm"] in skill_arms and (r.get("adaptive") or {}).get("decision") == "inconclusive")


def saved_line(report: Mapping[str, Any]) -> str | None:
    """`adaptive: stopped at 6 of 30 trials` over the report's cells: the trials used against the fixed-count
    plan, and what that saved. While a cell is undecided (an interrupted run, an error it waits for, a raised max)
    it has stopped nowhere and saved nothing yet: the line says how far the cells got instead."""
    rows = [r for r in report.get("rows", ()) if r.get("adaptive")]
    if not rows:
        return None
    blocks = [r["adaptive"] for r in rows]
    most = sum(int(b["max"]) for b in blocks)
    undecided = sum(1 for b in blocks if b["used"] is None)
    decided = sum(1 for b in blocks if b["decision"] in ("pass", "fail"))
    saved = sum(int(b["max"]) - int(b["used"]) for b in blocks if b["used"] is not None)
    cells = (f"{len(blocks)} cells of up to {blocks[0]['max']}; {decided} decided, "
             f"{sum(1 for b in blocks if b['decision'] == 'inconclusive')} inconclusive")
    if not undecided:
        used = sum(int(b["used"]) for b in blocks)
        return f"adaptive: stopped at {used} of {most} trials ({cells}); {most - used} trials saved"
    ran = sum(int(b["used"]) if b["used"] is not None else int(r["n"]) for r, b in zip(rows, blocks, strict=True))
    return (f"adaptive: {ran} of up to {most} trials graded so far ({cells}, {undecided} undecided: `skillmake` "
            f"runs them on to a decision); {saved} trials saved by the decided ones")


def missing_reason(spec: Spec, missing: int, expected: int) -> str | None:
    """The verdict's reason for the trials an adaptive spec's cells need that have no grade: they are the trials
    up to an undecided case's next look, never run yet (the run stopped early, or max was raised) — not the trials
    after a decision, which no report counts. None for a spec with a fixed trial count."""
    if spec.adaptive is None:
        return None
    return (f"{spec.name}: {missing} of the {expected} trials its cases need by their next look have no grade yet "
            "(not run: the run stopped early, or max was raised); run `skillmake` to run them")
