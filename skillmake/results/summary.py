"""The terminal summary: a compact table per spec, then what ran, time, tokens and cost (a pure str)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from skillmake.core.stats import delta
from skillmake.results.adaptive import saved_line
from skillmake.results.history import Change, compare
from skillmake.results.report import ci_text, headline_pass_at_k, paired_text
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL

Report = Mapping[str, Any]


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _change(change: Change | None) -> str:
    if change is None:
        return ""
    if change.status == "new":
        return "new"
    d = change.delta
    if d is None or abs(d) < 1e-9:
        return "="
    return f"{d:+.2f}"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def _spec_lines(report: Report, previous: Report | None) -> list[str]:
    spec = report["spec"]
    changes = {(c.case, c.arm): c for c in compare(previous, report).changes} if previous else {}
    k = max((r["k"] for r in report["rows"]), default=spec["trials"])
    base = {r["case"]: r["pass_rate"] for r in report["rows"] if r["arm"] == WITHOUT_SKILL}
    has_base = bool(base) and report.get("baseline") is not None
    shown = headline_pass_at_k(report)
    adaptive = any(r.get("adaptive") for r in report["rows"])
    header = ["case", "arm", "passed", "pass rate (95% CI)", *(_label(m, k, alone=len(shown) == 1) for m in shown)] + (
        ["Δ base"] if has_base else []) + (["Δ prev"] if previous else []) + (["decided"] if adaptive else [])
    rows = [header]
    for row in report["rows"]:
        cells = [row["case"], row["arm"], f"{row['passed']}/{row['n']}", _rate(row),
                 *(_num(row.get(m)) for m in shown)]
        if row.get("not_selected") and not row["n"]:  # this run's selection left it out: not run, not failed
            cells[2:4] = ["-", "not run (not selected)"]
        if has_base:
            d = delta(row["pass_rate"], base.get(row["case"])) if row["arm"] == WITH_SKILL else None
            cells.append("" if d is None else f"{d:+.2f}")
        if previous:
            cells.append(_change(changes.get((row["case"], row["arm"]))))
        if adaptive:
            cells.append(_decided(row.get("adaptive")))
        rows.append(cells)
    per = (f"{spec['adaptive']['min']}–{spec['adaptive']['max']} adaptive trials per case, decide "
           f"{spec['adaptive']['decide']:.2f}" if spec.get("adaptive") else f"{spec['trials']} trial(s) per case")
    lines = [f"{spec['name']} ({spec['skill']}, {per}): {_verdict(report)}"]
    lines += _table(rows)
    arm_bits = [f"{name} pass rate {_num(block['pass_rate'])}" for name, block in report["arms"].items()]
    baseline = report.get("baseline")
    if baseline and baseline["delta"]["pass_rate"] is not None:
        arm_bits.append(f"baseline Δ {baseline['delta']['pass_rate']:+.2f}")
    if shown[0] == "pass_at_k_caliper":  # caliper's own summary: each arm's pass@k and the delta between them
        label = _label(shown[0], k, alone=False)
        arm_bits += [f"{name} {label} {_num(block.get(shown[0]))}" for name, block in report["arms"].items()]
        caliper_delta = (baseline or {}).get("delta", {}).get(shown[0])
        if caliper_delta is not None:
            arm_bits.append(f"baseline Δ {label} {caliper_delta:+.2f}")
    lines.append("  " + "; ".join(arm_bits))
    lines += _interval_line(report)
    saved = saved_line(report)
    if saved:
        lines.append(f"  {saved}")
    lines += trigger_lines(report.get("triggers"))
    lines += [f"  ✗ {reason}" for reason in report["verdict"]["reasons"]]
    lines += [f"  ? {warning}" for warning in report["verdict"].get("warnings", ())]
    return lines


def _decided(block: Mapping[str, Any] | None) -> str:
    """An adaptive cell's decision: "pass @6/30", "fail @3/30", "INCONCLUSIVE @30/30", "undecided"."""
    if not block:
        return ""
    if block["used"] is None:
        return "undecided"
    label = "INCONCLUSIVE" if block["decision"] == "inconclusive" else block["decision"]
    return f"{label} @{block['used']}/{block['max']}"


def _rate(block: Mapping[str, Any]) -> str:
    """"0.75 [0.30, 0.95]": a pass rate and its 95% Wilson interval (report.json's pass_rate_ci)."""
    interval = ci_text(block.get("pass_rate_ci"))
    return f"{_num(block.get('pass_rate'))} {interval}".rstrip()


def _interval_line(report: Report) -> list[str]:
    """Each arm's 95% Wilson interval and the paired baseline delta's, as report.json has them (absent from a
    report written before intervals were added)."""
    bits = [f"{name} {ci_text(block['pass_rate_ci'])}" for name, block in report["arms"].items()
            if block.get("pass_rate_ci")]
    baseline = report.get("baseline") or {}
    paired = paired_text(baseline.get("paired"))
    if paired and baseline["delta"]["pass_rate"] is not None:
        bits.append(f"baseline Δ {baseline['delta']['pass_rate']:+.2f} {paired}")
    return [f"  95% intervals: {'; '.join(bits)}"] if bits else []


def trigger_lines(section: Mapping[str, Any] | None) -> list[str]:
    """The trigger table: each query, whether it should fire, how often it did, and a mark for a failure."""
    if not section:
        return []
    head = f"  triggers ({section['agent']}, {section['runs']} run(s) per query, threshold {section['threshold']:.2f})"
    if section.get("skipped"):
        return [f"{head}: not run — {section['skipped']}"]
    summary = section["summary"]
    scores = (f"precision {_num(summary['precision'])}{_sp(ci_text(summary.get('precision_ci')))}, "
              f"recall {_num(summary['recall'])}{_sp(ci_text(summary.get('recall_ci')))}, F1 {_num(summary['f1'])}"
              if summary["precision"] is not None or summary["recall"] is not None
              else "no result (no run finished)")
    lines = [f"{head}: {summary['passed']}/{summary['total']} queries pass; {scores}"]
    rows = [["query", "should", "fired", "rate (95% CI)", ""]]
    for q in section["queries"]:
        mark = "" if q["pass"] else ("✗ false positive" if not q["should_trigger"] else "✗ missed")
        erred = sum(1 for t in q["trials"] if t["outcome"] not in (None, "completed"))  # not "not run yet"
        if not q["runs"]:  # no run produced a result: neither a miss nor a false positive
            mark = (f"✗ no result ({erred} erred)" if erred else
                    "not run (not selected)" if section.get("not_selected") else "✗ not run yet")
        elif q["errors"]:
            mark = (mark + f" ({q['errors']} without a result)").strip()
        rows.append([q["id"], "yes" if q["should_trigger"] else "no", f"{q['triggers']}/{q['runs']}",
                     f"{_num(q['trigger_rate'])}{_sp(ci_text(q.get('trigger_rate_ci')))}", mark])
    return lines + ["  " + line for line in _table(rows)]


def _sp(text: str) -> str:
    return f" {text}" if text else ""


def _same_triggers(a: Report, b: Report) -> bool:
    def outcome(report: Report) -> Any:
        section = report.get("triggers") or {}
        return [(q["id"], q["triggers"], q["runs"], q["pass"]) for q in section.get("queries", ())]

    return outcome(a) == outcome(b)


def _label(metric: str, k: int, *, alone: bool) -> str:
    """pass@k's column name; when both estimators are shown each is named (caliper's, and the unbiased one)."""
    if alone:
        return f"pass@{k}"
    return f"pass@{k} (caliper)" if metric == "pass_at_k_caliper" else f"pass@{k} (unbiased)"


def _verdict(report: Report) -> str:
    """"ok", or "FAILED — <first reason>" (+ how many more): the verdict, never recomputed here."""
    reasons: list[str] = report["verdict"]["reasons"]
    if report["verdict"]["passed"]:
        undecided = report["verdict"].get("inconclusive")
        return f"ok ({undecided} inconclusive: warn)" if undecided else "ok"
    if not reasons:
        return "FAILED"
    # Reasons start with the spec's name for the exit message; the header already names the spec.
    first = reasons[0].removeprefix(f"{report['spec']['name']}: ")
    if len(first) > _HEADER_REASON:  # a long reason (a credentials hint) is printed once, whole, below
        return f"FAILED — {len(reasons)} reason{'s' if len(reasons) != 1 else ''} below"
    more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
    return f"FAILED — {first}{more}"


_HEADER_REASON = 120  # the longest first reason the header repeats


def _cost(usages: Sequence[Mapping[str, Any]]) -> str:
    """"2,222 tokens $0.0085" over usage blocks, leaving out a part that is zero or unknown."""
    tokens = sum(u["total_tokens"] for u in usages if u.get("total_tokens"))
    cost = sum(u["cost_usd"] for u in usages if u.get("cost_usd"))
    return " ".join(([f"{tokens:,} tokens"] if tokens else []) + ([f"${cost:.4f}"] if cost else []))


def _footer(reports: Sequence[Report], *, ran: int | None, reused: int | None, seconds: float | None,
            run_id: str | None) -> str:
    bits = []
    if ran is not None or reused is not None:
        bits.append(f"ran {ran or 0}, reused {reused or 0}")
    if seconds is not None:
        bits.append(f"{seconds:.1f}s")
    # Spent vs reused only when every report split its records by this very run.
    split = run_id is not None and all(r.get("run_id") == run_id and r["usage"].get("spent") is not None
                                       for r in reports)
    if split:
        spent = _cost([r["usage"]["spent"] for r in reports])
        saved = _cost([r["usage"]["reused"] for r in reports])
        bits += [f"spent this run: {spent}"] if spent else []
        bits += [f"reused: {saved} saved"] if saved else []
    else:
        total = _cost([r["usage"]["total"] for r in reports])
        bits += [f"results cost: {total}"] if total else []
    return " · ".join(bits)


def render_summary(reports: Sequence[Report], *, previous: Mapping[str, Report] | None = None,
                   ran: int | None = None, reused: int | None = None, seconds: float | None = None,
                   run_id: str | None = None) -> str:
    """The text the terminal shows after a run (no trailing newline).

    `previous` maps spec name to its last report; with it, each row shows the pass-rate change.
    Each spec's header states its verdict with the first reason; every reason follows the table.
    With `run_id` (the run that built the reports), the footer tells what this run spent from
    what reusing earlier records saved; without it, what the results cost in all.
    When nothing ran and no cell's result or inputs changed since then, it is a single line.
    """
    previous = previous or {}
    # A changed gate (a threshold edited) changes no cell but may turn the verdict: then the reasons are shown.
    unchanged = bool(reports) and not ran and all(
        r["spec"]["name"] in previous and compare(previous[r["spec"]["name"]], r).nothing_changed
        and _same_triggers(previous[r["spec"]["name"]], r)
        and previous[r["spec"]["name"]].get("verdict") == r["verdict"] for r in reports)
    cells = sum(len(r["rows"]) for r in reports)
    if unchanged:
        failing = [r["spec"]["name"] for r in reports if not r["verdict"]["passed"]]
        state = f"{len(failing)} failing: {', '.join(failing)}" if failing else "all gates pass"
        return f"nothing changed: {len(reports)} spec(s), {cells} cell(s) up to date; {state}"
    lines: list[str] = []
    for report in reports:
        lines += _spec_lines(report, previous.get(report["spec"]["name"]))
    footer = _footer(reports, ran=ran, reused=reused, seconds=seconds, run_id=run_id)
    if footer:
        lines.append(footer)
    return "\n".join(lines)
