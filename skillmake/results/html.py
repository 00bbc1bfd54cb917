"""The HTML report: one self-contained page per spec (inline CSS, no script, no external URL)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from skillmake.core.stats import delta
from skillmake.results.adaptive import saved_line
from skillmake.results.history import Change, compare
from skillmake.results.report import ci_text, headline_pass_at_k, paired_text

Report = Mapping[str, Any]

_CSS = """
:root{color-scheme:light dark;--bg:#fff;--fg:#1d2127;--mute:#667085;--line:#e4e7ec;--soft:#f6f7f9;
--ok:#1a7f37;--okbg:#e8f6ec;--bad:#c4291c;--badbg:#fdecea;--bar:#2f81f7}
@media (prefers-color-scheme:dark){:root{--bg:#111418;--fg:#e6e8eb;--mute:#9aa4b2;--line:#2a3038;
--soft:#181c22;--ok:#4ac26b;--okbg:#12261a;--bad:#ff7b72;--badbg:#2d1517;--bar:#58a6ff}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:1100px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:22px;margin:0 0 2px}h1 small{color:var(--mute);font-weight:400}
h2{font-size:15px;margin:28px 0 8px;text-transform:uppercase;letter-spacing:.04em;color:var(--mute)}
.meta{color:var(--mute);margin:0 0 16px}
code,.num{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
.verdict{border-radius:8px;padding:12px 16px;border:1px solid}
.verdict.pass{background:var(--okbg);border-color:var(--ok)}.verdict.fail{background:var(--badbg);border-color:var(--bad)}
.verdict strong{font-size:17px}.verdict.pass strong{color:var(--ok)}.verdict.fail strong{color:var(--bad)}
.verdict ul{margin:6px 0 0;padding-left:20px}
table{border-collapse:collapse;width:100%}
th,td{padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top;text-align:left}
th{font-weight:600;color:var(--mute);font-size:12px;white-space:nowrap}
tr.baseline td{color:var(--mute)}tr.more td{border-bottom:1px solid var(--line);padding-top:0}
.up{color:var(--ok)}.down{color:var(--bad)}.zero{color:var(--mute)}
.bar{display:inline-block;width:48px;height:6px;border-radius:3px;margin-right:6px;vertical-align:middle;
background:linear-gradient(90deg,var(--bar) var(--v),var(--line) var(--v))}
.tag{display:inline-block;padding:0 6px;border-radius:9px;font-size:11px;background:var(--soft);
border:1px solid var(--line);color:var(--mute);margin-left:4px}.tag.bad{color:var(--bad);border-color:var(--bad)}
details summary{cursor:pointer;color:var(--mute);font-size:12px}
details[open]{background:var(--soft);border-radius:6px;padding:4px 8px 8px}
ul.failures{list-style:none;margin:6px 0;padding:0}
ul.failures li{padding:4px 0;border-top:1px dashed var(--line)}
ul.failures li:first-child{border-top:0}
.evidence{display:block;white-space:pre-wrap;word-break:break-word;color:var(--mute);margin-top:2px}
.keys{color:var(--mute);font-size:12px;margin:6px 0 0}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _delta(value: float | None, *, title: str = "") -> str:
    attr = f' title="{_e(title)}"' if title else ""
    if value is None:
        return f'<td class="num zero"{attr}>—</td>'
    cls = "zero" if abs(value) < 1e-9 else ("up" if value > 0 else "down")
    return f'<td class="num {cls}"{attr}>{value:+.2f}</td>'


def _rate(passed: int, n: int, rate: float | None) -> str:
    width = 0 if rate is None else round(rate * 100)
    return f'<td class="num"><span class="bar" style="--v:{width}%"></span>{passed}/{n}</td>'


def _ci(block: Mapping[str, Any], field: str) -> str:
    """A 95% Wilson interval cell, from the report's `<field>_ci`; "—" without one."""
    text = ci_text(block.get(f"{field}_ci"))
    return f'<td class="num ci" title="95% Wilson interval of the {field.replace("_", " ")}">{text or "—"}</td>'


def _sp(text: str) -> str:
    return f" {text}" if text else ""


def _ms(value: float | None) -> str:
    return "—" if value is None else (f"{value:.0f} ms" if value < 1000 else f"{value / 1000:.1f} s")


def _short(key: str) -> str:
    return f'<code title="{_e(key)}">{_e(key.removeprefix("sha256:")[:10])}</code>'


def _usage(usage: Mapping[str, Any]) -> tuple[str, str]:
    tokens, cost = usage.get("total_tokens"), usage.get("cost_usd")
    return ("—" if tokens is None else f"{tokens:,}", "—" if cost is None else f"${cost:.4f}")


def _estimators(report: Report) -> list[tuple[str, str]]:
    """(field, label) of the pass@k columns: a caliper spec leads with caliper's pass@k and shows the unbiased one
    beside it, each named; any other spec shows the unbiased one, as the terminal does (report.json has both)."""
    fields = headline_pass_at_k(report)
    if len(fields) == 1:
        return [("pass_at_k", "pass@k")]
    return [(m, "pass@k (caliper)" if m == "pass_at_k_caliper" else "pass@k (unbiased)") for m in fields]


_TITLES = {"pass_at_k": "unbiased estimator 1 − C(n−c, k) / C(n, k)",
           "pass_at_k_caliper": "caliper's pass@k 1 − (1 − c/n)^k"}


def _th(label: str, field: str | None = None) -> str:
    title = f' title="{_e(_TITLES[field])}"' if field in _TITLES else ""
    return f"<th{title}>{_e(label)}</th>"


def _verdict(report: Report) -> str:
    """The banner: the spec's verdict and every reason it failed, then the gates that were met."""
    verdict = report["verdict"]
    met = [t for t in report["thresholds"] if t["passed"]]
    counts = report["counts"]
    head = "passed" if verdict["passed"] else "FAILED"
    if verdict.get("inconclusive"):
        head += f" ({verdict['inconclusive']} inconclusive)"
    out = [f'<section class="verdict {"pass" if verdict["passed"] else "fail"}"><strong>{head}</strong> '
           f'<span class="meta">{counts["graded"]}/{counts["expected"]} trials graded</span>']
    saved = saved_line(report)
    if saved:
        out.append(f'<p class="meta">{_e(saved)}</p>')
    if verdict["reasons"]:
        out.append("<ul>" + "".join(f"<li>{_e(reason)}</li>" for reason in verdict["reasons"]) + "</ul>")
    if verdict.get("warnings"):
        out.append("<ul>" + "".join(f"<li>warning: {_e(w)}</li>" for w in verdict["warnings"]) + "</ul>")
    if met:
        out.append(f"<details><summary>{len(met)} threshold(s) met</summary><ul>"
                   + "".join(f"<li>{_e(t['message'])}</li>" for t in met) + "</ul></details>")
    out.append("</section>")
    return "".join(out)


def _arms(report: Report, previous: Report | None) -> str:
    prev_arms = (previous or {}).get("arms", {})
    estimators = _estimators(report)
    head = [_th(h) for h in ("arm", "pass rate", "95% CI", "mean score", "stability")]
    head += [_th(label, m) for m, label in estimators]
    head += [_th(h) for h in ("pass^k", "cases passed", "tokens", "cost", "mean time")]
    head += [_th("Δ prev")] if previous else []
    out = ["<table><thead><tr>" + "".join(head) + "</tr></thead><tbody>"]
    for name, arm in report["arms"].items():
        tokens, cost = _usage(arm["usage"]["total"])
        mean_ms = arm["duration_ms"]["mean"]
        tag = "" if arm["skill"] else '<span class="tag">baseline</span>'
        cells = [f"<td>{_e(name)}{tag}</td>", _rate(arm["passed"], arm["n"], arm["pass_rate"]),
                 _ci(arm, "pass_rate")]
        metrics = ("mean_score", "stability", *(m for m, _ in estimators), "pass_hat_k")
        cells += [f'<td class="num">{_num(arm.get(m))}</td>' for m in metrics]
        cells += [f'<td class="num">{arm["cases_passed"]}/{arm["cases"]}</td>', f'<td class="num">{tokens}</td>',
                  f'<td class="num">{cost}</td>',
                  f'<td class="num">{_ms(mean_ms)}</td>']
        if previous:
            old = prev_arms.get(name, {}).get("pass_rate")
            cells.append(_delta(delta(arm["pass_rate"], old), title=f"previous pass rate {_num(old)}"))
        out.append(f'<tr class="{"skill" if arm["skill"] else "baseline"}">' + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    base = report.get("baseline")
    if base:
        d = base["delta"]
        shown = [("pass_rate", "pass rate"), ("mean_score", "mean score"), *estimators, ("pass_hat_k", "pass^k")]
        bits = ", ".join(f"{_e(label)} <b>{'—' if d.get(m) is None else f'{d[m]:+.2f}'}</b>" for m, label in shown)
        paired = paired_text(base.get("paired"))
        bits += f"; pass-rate delta 95% interval {_e(paired)}" if paired else ""
        out.append(f'<p class="meta">Baseline: {_e(base["arm"])} vs {_e(base["against"])}: {bits}</p>')
    return "".join(out)


def _prev_cell(change: Change | None) -> str:
    if change is None:
        return '<td class="num zero">—</td>'
    if change.status == "new":
        return '<td class="num zero">new</td>'
    why = ", ".join(w for w, c in (("trials re-run", change.trials_changed), ("re-graded", change.grades_changed))
                    if c) or "same records"
    return _delta(change.delta, title=f"was {_num(change.before)}; {why}")


def _details(row: Mapping[str, Any]) -> str:
    failures: Sequence[Mapping[str, Any]] = row["failures"]
    label = f"{len(failures)} failure(s)" if failures else "records"
    items = []
    for f in failures:
        ident = f"<code>{_e(f['id'])}</code> " if f["id"] else ""
        items.append(f'<li><span class="tag">trial {_e(f["k"])}</span><span class="tag">{_e(f["source"])}</span> '
                     f'{ident}{_e(f["text"])}<span class="evidence">{_e(f["evidence"])}</span></li>')
    keys = "".join(f"<li>trial {i}: {_short(t)} → grade {_short(g)}</li>"
                   for i, (t, g) in enumerate(zip(row["trial_keys"], row["grade_keys"], strict=False)))
    body = f'<ul class="failures">{"".join(items)}</ul>' if items else ""
    return (f"<details><summary>{label}</summary>{body}"
            f'<ul class="keys failures">{keys or "<li>no graded trials</li>"}</ul></details>')


def _decided(block: Mapping[str, Any] | None) -> str:
    """An adaptive cell's decision as a tag: pass / fail / inconclusive after how many of its max trials."""
    if not block:
        return ""
    if block["used"] is None:
        return '<span class="tag bad">undecided</span>'
    bad = "" if block["decision"] == "pass" else " bad"
    return (f'<span class="tag{bad}" title="adaptive trials: decide {block["decide"]:.2f}">{_e(block["decision"])} '
            f'after {block["used"]}/{block["max"]}</span>')


def _cells(report: Report, previous: Report | None) -> str:
    base = report.get("baseline")
    against = {r["case"]: r["pass_rate"] for r in report["rows"] if base and r["arm"] == base["against"]}
    changes = {(c.case, c.arm): c for c in compare(previous, report).changes} if previous else {}
    k = max((r["k"] for r in report["rows"]), default=report["spec"]["trials"])
    estimators = _estimators(report)
    head = [_th(h) for h in ("case", "arm", "passed", "95% CI")]
    head += [_th(label.replace("@k", f"@{k}"), m) for m, label in estimators]
    head += [_th(h) for h in (f"pass^{k}", "mean score", "Δ baseline")]
    head += [_th("Δ prev")] if previous else []
    out = ["<table><thead><tr>" + "".join(head) + "</tr></thead><tbody>"]
    for row in report["rows"]:
        skill = report["arms"].get(row["arm"], {}).get("skill", True)
        tags = '<span class="tag">required</span>' if row["required"] else ""
        tags += "".join(f'<span class="tag bad">{n} {_e(o)}</span>' for o, n in row["outcomes"].items()
                        if n and o not in ("pass", "fail"))
        if row.get("not_selected") and not row["n"]:  # this run's selection left it out: not run, not failed
            tags += '<span class="tag">not run (not selected)</span>'
        elif row["n"] < row["expected"]:
            tags += f'<span class="tag bad">{row["n"]}/{row["expected"]} graded</span>'
        tags += _decided(row.get("adaptive"))
        cells = [f"<td>{_e(row['case'])}{tags}</td>", f"<td>{_e(row['arm'])}</td>",
                 _rate(row["passed"], row["n"], row["pass_rate"]), _ci(row, "pass_rate"),
                 *(f'<td class="num">{_num(row.get(m))}</td>' for m, _ in estimators),
                 f'<td class="num">{_num(row["pass_hat_k"])}</td>', f'<td class="num">{_num(row["mean_score"])}</td>']
        if base and row["arm"] != base["against"] and row["case"] in against:
            cells.append(_delta(delta(row["pass_rate"], against[row["case"]]),
                                title=f"{base['against']} pass rate {_num(against[row['case']])}"))
        else:
            cells.append('<td class="num zero">—</td>')
        if previous:
            cells.append(_prev_cell(changes.get((row["case"], row["arm"]))))
        out.append(f'<tr class="{"skill" if skill else "baseline"}">' + "".join(cells) + "</tr>")
        out.append(f'<tr class="more"><td colspan="{len(head)}">{_details(row)}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _triggers(section: Mapping[str, Any] | None) -> str:
    """The trigger table: per query whether it should fire, how often it did, and the totals."""
    if not section:
        return ""
    head = (f"<h2>Triggers</h2><p class=\"meta\">{_e(section['agent'])}, {section['runs']} run(s) per query, "
            f"threshold {section['threshold']:.2f}")
    if section.get("skipped"):
        return f"{head} — not run: {_e(section['skipped'])}</p>"
    summary = section["summary"]
    head += (f" · {summary['passed']}/{summary['total']} queries pass · precision {_num(summary['precision'])}"
             f"{_sp(ci_text(summary.get('precision_ci')))} · recall {_num(summary['recall'])}"
             f"{_sp(ci_text(summary.get('recall_ci')))} · F1 {_num(summary['f1'])}</p>")
    rows = []
    for q in section["queries"]:
        mark = "" if q["pass"] else (" <span class=\"tag bad\">no result</span>" if not q["runs"] else
                                     " <span class=\"tag bad\">false positive</span>" if not q["should_trigger"]
                                     else " <span class=\"tag bad\">missed</span>")
        records = " ".join(_short(t["record"]) for t in q["trials"] if t["record"])
        rows.append(f"<tr><td>{_e(q['query'])}{mark}<div class=\"keys\">{_e(q['id'])} · {records}</div></td>"
                    f"<td>{'yes' if q['should_trigger'] else 'no'}</td>"
                    f"{_rate(q['triggers'], q['runs'], q['trigger_rate'])}{_ci(q, 'trigger_rate')}"
                    f"<td class=\"num\">{q['errors'] or ''}</td></tr>")
    return (f"{head}<table><thead><tr><th>query</th><th>should fire</th><th>fired</th><th>95% CI</th>"
            f"<th>no result</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def html_report(report: Report, *, previous: Report | None = None) -> str:
    """A complete HTML5 page for one spec's report; every value from the report is escaped.

    Agent outputs reach the page as failure evidence, so they are untrusted text: nothing from the
    report is ever emitted unescaped. `previous` (the last report of the same spec) adds Δ prev columns.
    """
    spec = report["spec"]
    tokens, cost = _usage(report["usage"]["total"])
    meta = [f"<code>{_e(spec['path'])}</code>", f"{spec['trials']} trial(s) per case",
            f"{len(spec['cases'])} case(s) × {len(spec['arms'])} arm(s)", f"tokens {tokens}", f"cost {cost}"]
    if report.get("generated"):
        meta.append(f"generated {_e(report['generated'])}")
    if previous is not None and previous.get("generated"):
        meta.append(f"compared with {_e(previous['generated'])}")
    title = f"{_e(spec['name'])} — {_e(spec['skill'])}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>skillmake · {title}</title><style>{_CSS}</style></head><body><main>"
        f"<header><h1>{_e(spec['name'])} <small>skill {_e(spec['skill'])}</small></h1>"
        f'<p class="meta">{" · ".join(meta)}</p></header>'
        f"{_verdict(report)}<h2>Arms</h2>{_arms(report, previous)}"
        f"<h2>Cases</h2>{_cells(report, previous)}{_triggers(report.get('triggers'))}</main></body></html>\n"
    )
