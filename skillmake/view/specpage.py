"""A spec's page: verdict, arms, the grid of cases × arms with every trial's outcome, the trigger table, the runs in
its history to compare, and its reviewers' notes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillmake.core.stats import delta as minus
from skillmake.results.adaptive import label as decision_label
from skillmake.results.adaptive import saved_line
from skillmake.results.report import paired_text
from skillmake.view import data
from skillmake.view.feedback import Feedback
from skillmake.view.html import (
    Links,
    Rendered,
    badge,
    crumbs,
    delta,
    duration,
    e,
    json_block,
    missing_word,
    money,
    not_selected,
    num,
    outcome,
    page,
    rate,
    row_rate,
    table,
    tokens,
)
from skillmake.view.indexpage import trigger_rates

Report = Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class SpecData:
    """Everything the spec page shows, read by the caller (data.py) so rendering does no I/O."""

    name: str
    report: Report
    previous: Report | None
    history: Sequence[data.HistoryRun]
    feedback: Feedback
    outcomes: Mapping[tuple[str, str], Sequence[str]]  # (case, arm) → outcome of trial k
    prompts: Mapping[str, str] = field(default_factory=dict)  # case → prompt
    tags: Mapping[str, Sequence[str]] = field(default_factory=dict)  # case → tags
    run_ids: Mapping[str, tuple[str, str, int]] = field(default_factory=dict)  # feedback run id → cell


def decided(block: Mapping[str, Any] | None) -> str:
    """An adaptive cell's decision, as a tag after its rate."""
    if not block:
        return ""
    return f' <span class="tag{"" if block["decision"] == "pass" else " bad"}">{e(decision_label(block))}</span>'


def _verdict(report: Report) -> str:
    verdict = report["verdict"]
    counts = report["counts"]
    state = "pass" if verdict["passed"] else "fail"
    out = [f'<section class="verdict {state}"><strong>{"passed" if verdict["passed"] else "FAILED"}</strong> '
           f'<span class="mute">{counts["graded"]}/{counts["expected"]} trials graded</span>']
    if verdict.get("inconclusive"):
        out.insert(1, f' <span class="tag">{verdict["inconclusive"]} inconclusive</span>')
    saved = saved_line(report)
    if saved:
        out.append(f'<p class="mute">{e(saved)}</p>')
    if verdict.get("reasons"):
        out.append("<ul>" + "".join(f"<li>{e(r)}</li>" for r in verdict["reasons"]) + "</ul>")
    if verdict.get("warnings"):
        out.append("<ul>" + "".join(f"<li>warning: {e(w)}</li>" for w in verdict["warnings"]) + "</ul>")
    met = [t for t in report.get("thresholds", ()) if t.get("passed")]
    if met:
        out.append(f"<details><summary>{len(met)} threshold(s) met</summary><ul>"
                   + "".join(f"<li>{e(t['message'])}</li>" for t in met) + "</ul></details>")
    return "".join(out) + "</section>"


def _arms(links: Links, d: SpecData) -> str:
    report = d.report
    prev_arms = (d.previous or {}).get("arms", {})
    rows = []
    for name, arm in report["arms"].items():
        total = arm["usage"]["total"]
        tag = "" if arm["skill"] else '<span class="tag">baseline</span>'
        old = prev_arms.get(name, {}).get("pass_rate")
        rows.append(
            f"<tr><td>{e(name)}{tag}</td>"
            f"<td class='num'>{rate(arm['passed'], arm['n'], arm['pass_rate'], arm.get('pass_rate_ci'))}</td>"
            f"<td class='num'>{num(arm.get('mean_score'))}</td><td class='num'>{num(arm.get('pass_at_k'))}</td>"
            f"<td class='num'>{num(arm.get('pass_hat_k'))}</td><td class='num'>{num(arm.get('stability'))}</td>"
            f"<td class='num'>{arm['cases_passed']}/{arm['cases']}</td>"
            f"<td class='num'>{tokens(total.get('total_tokens'))}</td>"
            f"<td class='num'>{money(total.get('cost_usd'))}</td>"
            f"<td class='num'>{duration(arm['duration_ms'].get('mean'))}</td>"
            f"<td class='num'>{delta(minus(arm['pass_rate'], old), href=links.spec(d.name, 'compare.html'))}</td></tr>")
    head = ["arm", "pass rate", "mean score", "pass@k", "pass^k", "stability", "cases passed", "tokens", "cost",
            "mean time", "Δ previous"]
    out = table(head, rows)
    base = report.get("baseline")
    if base:
        shown = {m: base["delta"].get(m) for m in ("pass_rate", "mean_score", "pass_at_k")}
        bits = ", ".join(f"{label} <b>{'—' if shown[m] is None else format(shown[m], '+.2f')}</b>"
                         for m, label in (("pass_rate", "pass rate"), ("mean_score", "mean score"),
                                          ("pass_at_k", "pass@k")))
        paired = paired_text(base.get("paired"))
        bits += f"; pass-rate Δ 95% interval {e(paired)}" if paired else ""
        out += f'<p class="meta">Δ baseline ({e(base["arm"])} − {e(base["against"])}): {bits}</p>'
    return out


def _grid(links: Links, d: SpecData) -> str:
    report = d.report
    arms = list(report["spec"]["arms"])
    rows_by = {(r["case"], r["arm"]): r for r in report["rows"]}
    base = report.get("baseline")
    notes_by_case: dict[str, int] = {}
    for rid in d.feedback.notes:
        if rid in d.run_ids:
            notes_by_case[d.run_ids[rid][0]] = notes_by_case.get(d.run_ids[rid][0], 0) + 1
    out = []
    for case in report["spec"]["cases"]:
        href = links.case(d.name, case)
        tags = list(d.tags.get(case, ()))
        cells, failed = [], []
        for arm in arms:
            row = rows_by.get((case, arm))
            seen = list(d.outcomes.get((case, arm), ()))
            block = row.get("adaptive") if row else None
            if block and row:  # adaptive trials: the trials after the deciding look were never run, nor needed
                seen = seen[:int(row["expected"])]
            if not not_selected(row) and ((block["decision"] != "pass" if block else any(o != "pass" for o in seen))
                                           or (row is not None and row["n"] < row["expected"])):
                failed.append(arm)  # a cell the selection left out is not run, not failed (as the terminal says)
            marks = "".join(outcome(o, href=f"{href}#t-{arm}-{k}",
                                    title=f"{arm} trial {k}: {missing_word(row) if o == 'missing' else o}")
                            for k, o in enumerate(seen))
            shown = row_rate(row) if row else "—"
            shown += decided(block)
            cells.append(f'<td data-arm="{e(arm)}" class="cell">{shown}<br>{marks}</td>')
        required = '<span class="tag">required</span>' if rows_by.get((case, arms[0]), {}).get("required") else ""
        tag_html = "".join(f'<span class="tag">{e(t)}</span>' for t in tags)
        notes = notes_by_case.get(case, 0)
        note_html = f' <span class="tag" title="reviewer notes">✎ {notes}</span>' if notes else ""
        d_base = "—"
        if base:
            a, b = rows_by.get((case, base["arm"])), rows_by.get((case, base["against"]))
            d_base = delta(minus(a["pass_rate"], b["pass_rate"]) if a and b else None)
        text = " ".join([case, *tags, d.prompts.get(case, "")[:400]]).lower()
        out.append(f'<tr data-row data-failed="{e(" ".join(failed))}" data-tags="{e(" ".join(tags))}" '
                   f'data-text="{e(text)}" data-href="{e(href[len(links.base):])}">'
                   f'<td><a data-open href="{e(href)}"><b>{e(case)}</b></a>{required}{tag_html}{note_html}</td>'
                   + "".join(cells) + f'<td class="num">{d_base}</td></tr>')
    head = ["case", *(f'<span data-arm="{e(a)}">{e(a)}</span>' for a in arms), "Δ baseline"]
    all_tags = sorted({t for ts in d.tags.values() for t in ts})
    arm_opts = "".join(f'<option value="{e(a)}">{e(a)}</option>' for a in arms)
    tag_opts = "".join(f'<option value="{e(t)}">{e(t)}</option>' for t in all_tags)
    filters = ('<form class="filters" data-filters hidden>'
               '<label><input type="checkbox" name="failures"> failures only</label>'
               f'<label>arm <select name="arm"><option value="">all</option>{arm_opts}</select></label>'
               + (f'<label>tag <select name="tag"><option value="">all</option>{tag_opts}</select></label>'
                  if all_tags else "")
               + '<input type="search" name="q" placeholder="search cases and prompts (/)" aria-label="search">'
               '<span class="count" data-count></span></form>')
    return filters + table(head, out, cls="grid-table")


def _triggers(links: Links, report: Report) -> str:
    triggers = data.triggers_of(report)
    if triggers is None:
        return ""
    s = triggers.get("summary") or {}
    should, should_not = trigger_rates(triggers)
    rows = []
    for q in triggers.get("queries", ()):
        if not isinstance(q, dict):
            continue
        marks = []
        for t in q.get("trials") or ():
            if not isinstance(t, dict):
                continue
            key = t.get("record")
            raw = str(t.get("outcome") or "")
            right = bool(t.get("triggered")) == bool(q.get("should_trigger"))
            state = raw if raw in ("error", "timeout", "cheat") else ("pass" if right else "fail") if raw else "missing"
            title = f"trial {t.get('k')}: {'triggered' if t.get('triggered') else 'did not trigger'} ({state})"
            marks.append(outcome(state, href=links.record(key) if data.is_digest(key) else None, title=title))
        ok = q.get("pass")
        no_result = '<span class="mute" title="no run of this query produced a result">no result</span>'
        rows.append(f"<tr><td><code>{e(q.get('id', ''))}</code></td><td>{e(q.get('query', ''))}</td>"
                    f"<td>{'yes' if q.get('should_trigger') else 'no'}</td>"
                    f"<td class='num'>{e(q.get('triggers', '—'))}/{e(q.get('runs', '—'))}"
                    f"<br>{''.join(marks)}</td><td class='num'>{num(q.get('trigger_rate'))}</td>"
                    f"<td class='num'>{e(q.get('errors', 0))}</td>"
                    f"<td>{badge('pass' if ok else 'fail') if ok is not None and q.get('runs') != 0 else no_result}"
                    "</td></tr>")
    fp = ", ".join(str(x) for x in triggers.get("false_positives") or ()) or "none"
    summary = (f'<p class="meta">{e(s.get("passed", "?"))}/{e(s.get("total", "?"))} queries passed · agent '
               f'{e(triggers.get("agent", "?"))}, {e(triggers.get("runs", "?"))} run(s) each, threshold '
               f'{num(triggers.get("threshold"))} · trigger rate when it should {num(should)}, when it should not '
               f'{num(should_not)} · precision {num(s.get("precision"))}, recall {num(s.get("recall"))}, '
               f'F1 {num(s.get("f1"))}, accuracy {num(s.get("accuracy"))} · TP {e(s.get("tp", "?"))} FP '
               f'{e(s.get("fp", "?"))} TN {e(s.get("tn", "?"))} FN {e(s.get("fn", "?"))} · '
               f"false positives: {e(fp)}</p>")
    head = ["query", "text", "should trigger", "triggered", "rate", "errors", "result"]
    return f'<h2 id="triggers">Triggers</h2>{summary}{table(head, rows)}'


def _history(links: Links, d: SpecData, served: bool) -> str:
    runs = list(d.history)
    if not runs:
        return '<h2 id="history">History</h2><p class="mute">No history yet.</p>'
    items = []
    for i, run in enumerate(runs[:50]):
        state = "passed" if run.passed else "FAILED"
        link = ""
        if i + 1 < len(runs) and run.archived and runs[i + 1].archived:
            link = (f' · <a href="{e(links.spec(d.name, "compare.html"))}?a={run_short(runs[i + 1])}&amp;b='
                    f'{run_short(run)}">compare with the run before</a>') if served else (
                f' · <a href="{e(links.spec(d.name, "compare.html"))}">compare with the run before</a>' if i == 0
                else "")
        items.append(f"<li><code>{e(run.short)}</code> {e(run.ts)} {badge('pass' if run.passed else 'fail')} "
                     f"{state}{link}</li>")
    form = ""
    kept = [r for r in runs if r.archived]
    if served and len(kept) >= 2:
        form = (f'<form method="get" action="{e(links.spec(d.name, "compare.html"))}" class="pair">compare '
                f'<select name="a" aria-label="older run">{options(kept, 1)}</select> with '
                f'<select name="b" aria-label="newer run">{options(kept, 0)}</select>'
                f'<button type="submit">compare</button></form>')
    return f'<h2 id="history">History</h2>{form}<ul>{"".join(items)}</ul>'


def options(runs: Sequence[data.HistoryRun], chosen: int) -> str:
    """<option>s of the runs (newest first), the one at index `chosen` selected."""
    return "".join(f'<option value="{run_short(r)}"{" selected" if i == chosen else ""}>{e(r.ts)} {e(r.short)}'
                   "</option>" for i, r in enumerate(runs))


def run_short(run: data.HistoryRun) -> str:
    return run.digest.removeprefix("sha256:")[:16]


def _feedback(links: Links, d: SpecData) -> str:
    fb = d.feedback
    items = []
    for rid, note in sorted(fb.notes.items()):
        cell = d.run_ids.get(rid)
        where = (f'<a href="{e(links.case(d.name, cell[0]))}#t-{e(cell[1])}-{cell[2]}">{e(rid)}</a>' if cell
                 else f"{e(rid)} <span class='mute'>(no such trial now)</span>")
        items.append(f'<li>{where} <span class="mute">{e(note["timestamp"])}</span>'
                     f'<div class="note">{e(note["feedback"])}</div></li>')
    problem = f'<p class="note">{e(fb.problem)}</p>' if fb.problem else ""
    return (f'<h2 id="feedback">Feedback</h2>{problem}<p class="meta">{len(fb.notes)} note(s), status '
            f'{e(fb.status)} · <a href="{e(links.spec(d.name, "feedback.json"))}">feedback.json</a> '
            f'<button type="button" data-feedback-download hidden>download feedback.json (with this browser\'s '
            f'notes)</button> <button type="button" data-feedback-done hidden>mark review complete</button></p>'
            f'<ul>{"".join(items)}</ul>{json_block("feedback-data", fb.document())}')


def render(d: SpecData, *, served: bool, token: str | None = None) -> Rendered:
    links = Links(base="../../")
    report = d.report
    spec = report["spec"]
    usage = report["usage"]
    meta = [f"<code>{e(spec['path'])}</code>", f"{spec['trials']} trial(s) per case",
            f"{len(spec['cases'])} case(s) × {len(spec['arms'])} arm(s)",
            f"tokens {tokens(usage['total'].get('total_tokens'))}", f"cost {money(usage['total'].get('cost_usd'))}",
            f"generated {e(report.get('generated') or '—')}",
            f'<a href="{e(links.spec(d.name, "report.json"))}">report.json</a>']
    body = (crumbs(links, [(d.name, None)])
            + f"<h1>{e(d.name)} <small>skill {e(spec['skill'])}</small></h1>"
            + f'<p class="meta">{" · ".join(meta)} · keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>Enter</kbd> opens, '
              f"<kbd>/</kbd> searches</p>"
            + _verdict(report) + f'<h2 id="arms">Arms</h2>{_arms(links, d)}'
            + f'<h2 id="cases">Cases × arms</h2>{_grid(links, d)}' + _triggers(links, report)
            + _history(links, d, served) + _feedback(links, d))
    return Rendered(page(title=d.name, body=body, links=links, served=served, token=token,
                         meta={"skillmake-spec": d.name, "skillmake-base": links.base}), links)
