"""Two runs of a spec compared: what changed in the inputs (explain's reasons) and in the outcomes, cell by cell."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from skillmake.results.report import ci_text, report_digest
from skillmake.view import data
from skillmake.view.compare import RunComparison
from skillmake.view.html import Links, Rendered, badge, crumbs, delta, e, num, page, table
from skillmake.view.specpage import options

_STATUS = {"improved": "pass", "regressed": "fail"}


def _label(report: Any) -> str:
    return f"{report.get('generated') or '?'} ({report_digest(report).removeprefix('sha256:')[:12]})"


def render(name: str, comparison: RunComparison | None, *, served: bool, token: str | None = None,
           history: Sequence[data.HistoryRun] = (), note: str = "") -> Rendered:
    links = Links(base="../../")
    parts = [crumbs(links, [(name, "index.html"), ("compare runs", None)]), f"<h1>{e(name)} <small>two runs compared"
             "</small></h1>"]
    kept = [r for r in history if r.archived]
    if served and len(kept) >= 2:
        parts.append(f'<form method="get" class="pair" action="compare.html">older <select name="a" aria-label="older '
                     f'run">{options(kept, 1)}</select> newer <select name="b" aria-label="newer run">'
                     f'{options(kept, 0)}</select><button type="submit">compare</button></form>')
    if note:
        parts.append(f'<p class="note">{e(note)}</p>')
    if comparison is None:
        parts.append('<p class="panel">There is no earlier run to compare with yet: the history keeps a run whenever '
                     "its results change, and this viewer keeps each one's report from then on.</p>")
        return Rendered(page(title=f"{name}: compare", body="".join(parts), links=links, served=served, token=token,
                             meta={"skillmake-spec": name, "skillmake-base": links.base}), links)
    before, after = comparison.before, comparison.after
    state = {id(r): "pass" if r["verdict"]["passed"] else "fail" for r in (before, after)}
    parts.append(f'<p class="meta">older: {e(_label(before))} {badge(state[id(before)])}'
                 f" → newer: {e(_label(after))} {badge(state[id(after)])}</p>")
    reasons = comparison.run_reasons
    parts.append("<h2>What changed in the inputs</h2>"
                 + (f'<ul>{"".join(f"<li>{e(r)}</li>" for r in reasons)}</ul>' if reasons
                    else '<p class="mute">No skill file, fixture or commit changed between the two runs\' snapshots.'
                         "</p>"))
    arms_rows = []
    for arm, block in after["arms"].items():
        old_block = (before.get("arms") or {}).get(arm, {})
        old = old_block.get("pass_rate")
        # Each side's 95% Wilson interval beside its rate: two runs whose intervals overlap may not differ at all.
        arms_rows.append(f"<tr><td>{e(arm)}</td><td class='num'>{num(old)}{_ci(old_block)}</td><td class='num'>"
                         f"{num(block['pass_rate'])}{_ci(block)}</td><td class='num'>"
                         f"{delta(None if old is None or block['pass_rate'] is None else block['pass_rate'] - old)}"
                         "</td></tr>")
    parts.append("<h2>Arms</h2>" + table(["arm", "older", "newer", "Δ"], arms_rows))
    rows = []
    changed = comparison.changed
    for c in changed:
        href = links.case(name, c.case)
        why = "".join(f"<li>{e(r)}</li>" for r in c.reasons) or "<li class='mute'>same records</li>"
        d = None if c.before is None or c.after is None else c.after - c.before
        rows.append(f'<tr><td><a href="{e(href)}">{e(c.case)}</a></td><td>{e(c.arm)}</td>'
                    f"<td>{badge(_STATUS.get(c.status, c.status))}</td>"
                    f"<td class='num'>{num(c.before)} → {num(c.after)}</td><td class='num'>{delta(d)}</td>"
                    f'<td><ul class="checks">{why}</ul></td></tr>')
    unchanged = len(comparison.cells) - len(changed)
    parts.append(f"<h2>Cells that changed ({len(changed)}; {unchanged} unchanged)</h2>"
                 + (table(["case", "arm", "status", "pass rate", "Δ", "why (explain's reasons)"], rows) if rows
                    else '<p class="mute">No cell changed.</p>'))
    return Rendered(page(title=f"{name}: compare", body="".join(parts), links=links, served=served, token=token,
                         meta={"skillmake-spec": name, "skillmake-base": links.base}), links)


def _ci(block: Any) -> str:
    text = ci_text(block.get("pass_rate_ci")) if isinstance(block, dict) else ""
    return f' <span class="ci mute">{text}</span>' if text else ""
