"""The comparison as people read it in a terminal: one row per case, then the win rate and the calls made."""

from __future__ import annotations

from typing import Any

REASON_WIDTH = 72


def render(document: dict[str, Any], *, written: str | None = None) -> list[str]:
    a, b = document["a"], document["b"]
    names = {"A": a["label"], "B": b["label"], "TIE": "tie", None: "-"}
    judge = document["judge"]
    lines = [f"{document['spec']}: A = {a['title']}, B = {b['title']}",
             f"judge {judge['provider']} {judge['model']}, blind, every pair in both orders"]
    rows = [("case", "winner", "A", "B", "ties", "reason")]
    for case in document["cases"]:
        reason = case["reasoning"] or ""
        if case["unjudged"]:
            reason = f"{case['unjudged']} unjudged: {_problem(case) or reason}"
        rows.append((case["id"], names[case["winner"]], str(case["a_wins"]), str(case["b_wins"]), str(case["ties"]),
                     _clip(reason)))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:5])) + "  " + row[5])
    lines.append(summary_line(document))
    agent, judged = document["calls"]["agent"], document["calls"]["judge"]
    cost = f", ${judged['cost_usd']:.4f}" if judged["cost_usd"] else ""
    lines.append(f"agent calls: {agent['ran']} made, {agent['reused']} reused; judge calls: {judged['made']} made "
                 f"({judged['requests']} request(s){cost}), {judged['reused']} reused")
    if written:
        lines.append(f"wrote {written}")
    return lines


def summary_line(document: dict[str, Any]) -> str:
    s = document["summary"]
    a, b = document["a"]["label"], document["b"]["label"]
    counts = f"{a} won {s['a_wins']}, {b} won {s['b_wins']}, {s['ties']} tied of {s['pairs']} pair(s)"
    if s["unjudged"]:
        counts += f" ({s['unjudged']} not judged)"
    if s["win_rate"] is None:
        return f"{counts}: no win rate"
    low, high = s["ci95"]
    verdict = {"A": f"{a} is better", "B": f"{b} is better", "TIE": "no clear winner"}[s["winner"]]
    return f"{counts}: {a}'s win rate {s['win_rate']:.2f} (95% CI {low:.2f}-{high:.2f}): {verdict}"


def _problem(case: dict[str, Any]) -> str | None:
    for pair in case["pairs"]:
        if pair["error"]:
            return str(pair["error"])
        for order in pair["orders"]:
            if order["error"]:
                return str(order["error"])
    return None


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= REASON_WIDTH else flat[:REASON_WIDTH - 1] + "…"
