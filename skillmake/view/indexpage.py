"""The index: one row per spec — verdict, pass rate per arm, Δ baseline, Δ previous run, trigger rates, cost spent
and saved, when it last ran, feedback — each linking to the spec's page or the report it comes from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skillmake.core.stats import delta as minus
from skillmake.view import data
from skillmake.view.feedback import Feedback
from skillmake.view.html import Links, Rendered, delta, e, money, page, rate, table

Report = Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """What the index shows of one spec."""

    name: str
    report: Report
    previous: Report | None
    feedback: Feedback


def lead_arm(report: Report) -> str | None:
    """The arm the headline numbers are of: with_skill, else the first arm that uses the skill, else the first."""
    arms = report["arms"]
    if "with_skill" in arms:
        return "with_skill"
    return next((n for n, a in arms.items() if a.get("skill")), next(iter(arms), None))


def trigger_rates(triggers: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """Mean trigger rate of the queries that should trigger the skill, and of those that should not."""
    should = [q.get("trigger_rate") for q in triggers.get("queries", ())
              if isinstance(q, dict) and q.get("should_trigger")]
    not_ = [q.get("trigger_rate") for q in triggers.get("queries", ())
            if isinstance(q, dict) and not q.get("should_trigger")]

    def mean(values: Sequence[Any]) -> float | None:
        known = [float(v) for v in values if isinstance(v, (int, float))]
        return sum(known) / len(known) if known else None

    return mean(should), mean(not_)


def _triggers_cell(links: Links, name: str, report: Report) -> str:
    triggers = data.triggers_of(report)
    if triggers is None:
        return '<td class="num zero">—</td>'
    summary = triggers.get("summary") or {}
    should, should_not = trigger_rates(triggers)
    href = links.spec(name) + "#triggers"
    shown = f"{summary.get('passed', '?')}/{summary.get('total', '?')}"
    title = (f"queries passed; trigger rate when it should {_rate(should)}, when it should not {_rate(should_not)}; "
             f"precision {_rate(summary.get('precision'))}, recall {_rate(summary.get('recall'))}")
    return (f'<td class="num"><a href="{e(href)}" title="{e(title)}">{e(shown)}</a>'
            f'<br><span class="mute">{_rate(should)} / {_rate(should_not)}</span></td>')


def _rate(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) else "—"


def last_trials(report: Mapping[str, Any]) -> str | None:
    """When the newest trial (or trigger trial) behind the report ran, from the run ids its rows name (each starts
    with the run's UTC start, `20261125T212924-…`): not when `skillmake report` last wrote it."""
    ids = [str(r) for row in report.get("rows") or () for r in row.get("trial_runs") or () if r]
    ids += [str(t["run_id"]) for q in ((report.get("triggers") or {}).get("queries") or ())
            for t in q.get("trials") or () if t.get("run_id")]
    stamps = sorted(i[:15] for i in ids if len(i) >= 15 and i[8] == "T" and (i[:8] + i[9:15]).isdigit())
    if not stamps:
        return None
    s = stamps[-1]
    return f"{s[:4]}-{s[4:6]}-{s[6:8]}T{s[9:11]}:{s[11:13]}:{s[13:15]}+00:00"


def _row(links: Links, row: Row) -> str:
    report, name = row.report, row.name
    verdict = report["verdict"]
    spec_href = links.spec(name)
    lead = lead_arm(report)
    arms = []
    for arm_name, arm in report["arms"].items():
        prev = ((row.previous or {}).get("arms") or {}).get(arm_name, {}).get("pass_rate")
        title = f"{arm_name}: {arm['passed']}/{arm['n']} trials passed" + (f"; previous run {prev:.2f}"
                                                                            if prev is not None else "")
        arms.append(f'<a href="{e(spec_href)}#arms" title="{e(title)}">{e(arm_name)} '
                    f'{rate(arm["passed"], arm["n"], arm["pass_rate"], arm.get("pass_rate_ci"))}</a>')
    base = (report.get("baseline") or {}).get("delta", {}).get("pass_rate")
    prev_delta = None
    if row.previous is not None and lead is not None:
        old = ((row.previous.get("arms") or {}).get(lead) or {}).get("pass_rate")
        prev_delta = minus(report["arms"][lead]["pass_rate"], old)
    usage = report.get("usage") or {}
    cost = (usage.get("total") or {}).get("cost_usd")
    spent, saved = (usage.get("spent") or {}).get("cost_usd"), (usage.get("reused") or {}).get("cost_usd")
    report_href = links.spec(name, "report.json")
    skill_arms = {n for n, a in report["arms"].items() if a.get("skill")}
    # An adaptive cell (trials: {min, max, decide}) fails by its decision, not by each trial that failed.
    failed_cells = sum(1 for r in report["rows"] if r["arm"] in skill_arms and (
        r["adaptive"]["decision"] != "pass" if r.get("adaptive") else r["passed"] < r["expected"]))
    notes = len(row.feedback.notes)
    state = "pass" if verdict["passed"] else "fail"
    reasons = "; ".join([*(verdict.get("reasons") or ()), *(verdict.get("warnings") or ())])
    text = " ".join([name, report["spec"]["skill"], report["spec"]["path"], reasons]).lower()
    cells = [
        f'<td><a data-open href="{e(spec_href)}"><b>{e(name)}</b></a><br>'
        f'<span class="mute">{e(report["spec"]["skill"])} · <code>{e(report["spec"]["path"])}</code></span></td>',
        f'<td><span class="badge {state}" title="{e(reasons)}">{"passed" if verdict["passed"] else "FAILED"}</span>'
        + (f'<br><span class="mute">{verdict["inconclusive"]} inconclusive</span>' if verdict.get("inconclusive")
           else "")
        + (f'<br><span class="mute">{failed_cells} cell(s) failing with the skill</span>' if failed_cells else "")
        + "</td>",
        f'<td class="num">{"<br>".join(arms)}</td>',
        f'<td class="num">{delta(base, href=spec_href + "#arms", title="pass rate with − without the skill")}</td>',
        f'<td class="num">{delta(prev_delta, href=links.spec(name, "compare.html"), title="vs the previous run")}</td>',
        _triggers_cell(links, name, report),
        f'<td class="num"><a href="{e(report_href)}" title="agent + judge cost of the records behind the report">'
        f'{money(cost)}</a><br><span class="mute" title="spent by the run that wrote the report / reused from '
        f'earlier runs">{money(spent)} spent · {money(saved)} saved</span></td>',
        f'<td class="num" title="when the newest trial behind these results ran (the report was written '
        f'{e(report.get("generated") or "—")})">{e(last_trials(report) or "—")}</td>',
        f'<td class="num"><a href="{e(spec_href)}#feedback">{notes}</a></td>',
    ]
    failed = "spec" if not verdict["passed"] else ""
    return (f'<tr data-row data-failed="{failed}" data-text="{e(text)}" data-href="{e(links.spec(name))}"'
            f' class="{state}">' + "".join(cells) + "</tr>")


def render(rows: Sequence[Row], *, served: bool, token: str | None = None, root: str = "") -> Rendered:
    links = Links(base="")
    head = ["spec", "verdict", "pass rate per arm", "Δ baseline", "Δ previous", "triggers (should / not)",
            "cost", "last run", "notes"]
    passed = sum(1 for r in rows if r.report["verdict"]["passed"])
    trials = sum(int(r.report["counts"]["expected"]) for r in rows)
    spent = sum(((r.report.get("usage") or {}).get("spent") or {}).get("cost_usd") or 0.0 for r in rows)
    saved = sum(((r.report.get("usage") or {}).get("reused") or {}).get("cost_usd") or 0.0 for r in rows)
    filters = ('<form class="filters" data-filters hidden><label><input type="checkbox" name="failures"> failing specs '
               'only</label><input type="search" name="q" placeholder="search specs (/)" aria-label="search">'
               '<span class="count" data-count></span></form>')
    body = (f'<h1>skillmake <small>{e(root)}</small></h1>'
            f'<p class="meta">{len(rows)} spec(s), {passed} passed · {trials:,} trials · last runs spent '
            f'{money(spent)}, reused {money(saved)} · keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>Enter</kbd> opens, '
            f'<kbd>/</kbd> searches</p>{filters}'
            + (table(head, [_row(links, r) for r in rows], cls="index") if rows else
               '<p class="panel">No reports yet: run <code>skillmake</code> first.</p>'))
    return Rendered(page(title="all specs", body=body, links=links, served=served, token=token,
                         meta={"skillmake-base": ""}), links)
