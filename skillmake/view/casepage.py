"""A case's page: the prompt and staged inputs, then every trial of every arm side by side — output, output files
previewed by type, check and judge results with evidence, the transcript, usage — each with a reviewer's note."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skillmake.results.adaptive import label
from skillmake.view import artifacts, data, transcript
from skillmake.view.feedback import Feedback
from skillmake.view.feedback import run_id as feedback_id
from skillmake.view.html import (
    NOT_SELECTED,
    Links,
    Rendered,
    badge,
    crumbs,
    duration,
    e,
    missing_word,
    money,
    num,
    page,
    row_rate,
    tokens,
)

Report = Mapping[str, Any]
_MARKDOWNISH = re.compile(r"^(#{1,6} |[-*] |\d+\. |```)|\*\*|\]\(", re.MULTILINE)
MAX_WORKSPACE_FILES = 60


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseData:
    name: str  # spec
    case: str
    report: Report
    eval_id: int
    prompt: str
    tags: Sequence[str]
    trials: Mapping[tuple[str, int], data.TrialView]
    feedback: Feedback
    prev_case: str | None
    next_case: str | None


def _blob_link(links: Links, name: str, digest: str, blob: bytes) -> str:
    kind = artifacts.kind_of(name, blob)
    return links.file(digest, artifacts.extension(kind, blob))


def _file_preview(source: data.Source, links: Links, name: str, digest: str, *, open_: bool = True) -> str:
    blob = data.blob(source, digest)
    if blob is None:
        return f'<details><summary><code>{e(name)}</code> — not in the store</summary></details>'
    url = _blob_link(links, name, digest, blob)
    return (f'<details{" open" if open_ else ""}><summary><code>{e(name)}</code> '
            f'<span class="mute">{artifacts.size_label(len(blob))}</span> · '
            f'<a href="{e(url)}" download="{e(name.rsplit("/", 1)[-1])}">download</a></summary>'
            f"{artifacts.preview(name, blob, url)}</details>")


def _stats(links: Links, record: Mapping[str, Any] | None, grade: Mapping[str, Any] | None) -> str:
    bits = []
    if record is not None:
        href = e(links.record(str(record["key"])))
        usage, timing, agent = record.get("usage") or {}, record.get("timing") or {}, record.get("agent") or {}
        total = usage.get("total_tokens")
        if total is None and (usage.get("input_tokens") is not None or usage.get("output_tokens") is not None):
            total = (usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0)
        bits += [f'<a href="{href}" title="trial record {e(record["key"])}">tokens {tokens(total)}</a>',
                 f'<a href="{href}">cost {money(usage.get("cost_usd"))}</a>',
                 f'<a href="{href}">time {duration(timing.get("duration_ms"))}</a>',
                 f'<a href="{href}">turns {e(usage.get("num_turns") if usage.get("num_turns") is not None else "—")}'
                 f"</a>",
                 f'<a href="{href}">{e(agent.get("kind", "?"))}'
                 + (f' {e(agent["model"])}' if agent.get("model") else "") + "</a>"]
        skills = (record.get("activation") or {}).get("skills") or []
        bits.append(f'<a href="{href}">skills used: {e(", ".join(skills) if skills else "none")}</a>')
        if record.get("run_id"):
            bits.append(f'<span title="the run that drew this sample">run {e(record["run_id"])}</span>')
    if grade is not None:
        g = e(links.record(str(grade["key"])))
        bits.append(f'<a href="{g}" title="grade record {e(grade["key"])}">score {num(grade.get("score"))}</a>')
        usage = grade.get("usage") or {}
        if usage.get("cost_usd") is not None:
            bits.append(f'<a href="{g}">judge cost {money(usage.get("cost_usd"))}</a>')
    return f'<div class="stats">{" ".join(bits)}</div>' if bits else ""


def _checks(grade: Mapping[str, Any] | None) -> str:
    if grade is None:
        return '<p class="mute">not graded</p>'
    items = []
    found = list(grade.get("expectations") or ())
    for x in sorted(found, key=lambda x: bool(x.get("passed"))):  # what failed first
        mark = '<b class="ok">✓</b>' if x.get("passed") else '<b class="no">✗</b>'
        ident = f'<code>{e(x["id"])}</code> ' if x.get("id") else ""
        score = f' <span class="mute">score {num(x.get("score"))}</span>' if x.get("score") is not None else ""
        items.append(f'<li>{mark} <span class="tag">{e(x.get("source", "judge"))}</span> {ident}{e(x.get("text", ""))}'
                     f'{score}<span class="ev">{e(x.get("evidence", ""))}</span></li>')
    error = f'<p class="note">{e(grade["error"])}</p>' if grade.get("error") else ""
    passed = sum(1 for x in found if x.get("passed"))
    opened = " open" if passed < len(found) or grade.get("error") else ""
    return (f"<details{opened}><summary>checks and judges: {passed}/{len(found)} passed</summary>{error}"
            f'<ul class="checks">{"".join(items)}</ul></details>')


def _transcript(source: data.Source, links: Links, record: Mapping[str, Any]) -> str:
    digest = (record.get("outputs") or {}).get("transcript")
    raw = data.blob(source, digest)
    if raw is None:
        return ""
    found = transcript.entries(raw)
    rows = "".join(f'<li class="{e(x.role)}"><span class="role">{e(x.role)} · {e(x.kind)}'
                   + (f" · <code>{e(x.name)}</code>" if x.name else "") + f"</span><pre>{e(x.text)}</pre></li>"
                   for x in found)
    url = links.file(str(digest), "txt")
    calls = sum(1 for x in found if x.kind == "tool_use")
    return (f"<details><summary>transcript: {len(found)} entries, {calls} tool call(s) · "
            f'<a href="{e(url)}">the whole artifact</a></summary><ol class="transcript">{rows}</ol></details>')


def _output(source: data.Source, links: Links, record: Mapping[str, Any]) -> str:
    outputs = record.get("outputs") or {}
    digest = outputs.get("output")
    blob = data.blob(source, digest)
    parts = []
    if blob is not None:
        url = links.file(str(digest), "txt" if artifacts.as_text(blob) is not None else "bin")
        text = artifacts.as_text(blob)
        parts.append(artifacts.preview("output.txt", blob, url) if blob.strip() else
                     '<p class="mute">(empty output)</p>')
        if text and _MARKDOWNISH.search(text):
            parts.append(f'<details><summary>output rendered as markdown</summary>'
                         f'{artifacts.preview("output.md", blob, url)}</details>')
    parts.append(_stdout(source, links, record))
    files = outputs.get("files") or {}
    for name, file_digest in sorted(files.items()):
        parts.append(_file_preview(source, links, name, file_digest))
    return "".join(parts) or '<p class="mute">no output</p>'


def _stdout(source: data.Source, links: Links, record: Mapping[str, Any]) -> str:
    """What a command agent printed, when the graded output is something else (the files `output_files`
    captured): shown beside them, so a baseline that printed its answer and wrote no file is not "(empty output)".
    A CLI agent's stdout is its event stream, which the transcript shows."""
    outputs = record.get("outputs") or {}
    digest = outputs.get("stdout")
    if (record.get("agent") or {}).get("kind") != "command" or not digest or digest == outputs.get("output"):
        return ""
    blob = data.blob(source, digest)
    if blob is None or not blob.strip() or blob == data.blob(source, outputs.get("output")):
        return ""
    url = links.file(str(digest), "txt" if artifacts.as_text(blob) is not None else "bin")
    return (f'<h4>stdout <span class="mute">(what the agent printed)</span></h4>'
            f'{artifacts.preview("stdout.txt", blob, url)}')


def _workspace(source: data.Source, links: Links, record: Mapping[str, Any], staged: Mapping[str, str]) -> str:
    tree = data.workspace_files(source, record)
    captured = set((record.get("outputs") or {}).get("files") or {})
    left = {p: d for p, d in tree.items() if p not in captured and staged.get(p) != d}
    if not left:
        return ""
    items = []
    for path, digest in sorted(left.items())[:MAX_WORKSPACE_FILES]:
        items.append(f"<li>{_file_preview(source, links, path, digest, open_=False)}</li>")
    more = f"<li class='mute'>… {len(left) - MAX_WORKSPACE_FILES} more</li>" if len(left) > MAX_WORKSPACE_FILES else ""
    return (f"<details><summary>{len(left)} other file(s) the agent left in its workspace</summary>"
            f'<ul class="checks">{"".join(items)}{more}</ul></details>')


def _feedback_form(links: Links, d: CaseData, rid: str, served: bool, token: str | None) -> str:
    note = d.feedback.notes.get(rid)
    saved = f"saved {e(note['timestamp'])}" if note else ""
    hidden = ("" if not served else
              f'<input type="hidden" name="spec" value="{e(d.name)}"><input type="hidden" name="run_id" '
              f'value="{e(rid)}"><input type="hidden" name="token" value="{e(token or "")}">'
              f'<input type="hidden" name="next" value="/{e(links.case(d.name, d.case)[len(links.base):])}">')
    return (f'<form class="fb" data-run-id="{e(rid)}" method="post" action="{e(links.base)}api/feedback">{hidden}'
            f'<label class="mute" for="fb-{e(rid)}">feedback on <code>{e(rid)}</code></label>'
            f'<textarea id="fb-{e(rid)}" name="feedback" placeholder="what a reviewer noticed (empty: looks good)">'
            f'{e(note["feedback"]) if note else ""}</textarea>'
            f'<div class="row"><button type="submit"{"" if served else " hidden"}>save note</button>'
            f'<span class="saved">{saved}</span></div></form>')


def _card(source: data.Source, links: Links, d: CaseData, arm: str, k: int, staged: Mapping[str, str],
          served: bool, token: str | None) -> str:
    view = d.trials.get((arm, k))
    trials = int(d.report["spec"]["trials"])
    rid = feedback_id(d.eval_id, arm, k, trials=trials)
    state = view.outcome if view is not None else "missing"
    row = next((r for r in d.report["rows"] if r["case"] == d.case and r["arm"] == arm), None)
    if state == "missing" and missing_word(row) == NOT_SELECTED:  # the selection left it out: not run, not lost
        head = f'<h3>{e(arm)} · trial {k} <span class="badge missing">not run</span></h3>'
        why = ("not run: the last run's selection (-k, --tag, --spec) left this cell out; <code>skillmake</code> "
               "without it runs it")
    else:
        head = f'<h3>{e(arm)} · trial {k} {badge(state)}</h3>'
        why = "no record yet: run <code>skillmake</code>"
    if view is None or view.record is None:
        return (f'<article class="card {e(state)}" id="t-{e(arm)}-{k}" data-arm="{e(arm)}">{head}'
                f'<p class="mute">{why}</p>'
                f"{_feedback_form(links, d, rid, served, token)}</article>")
    record = view.record
    error = f'<p class="note">{e(record["error"])}</p>' if record.get("error") else ""
    stderr = data.blob(source, (record.get("outputs") or {}).get("stderr"))
    stderr_html = ""
    if stderr:
        url = links.file(str(record["outputs"]["stderr"]), "txt")
        stderr_html = f"<details><summary>stderr</summary>{artifacts.preview('stderr.txt', stderr, url)}</details>"
    return (f'<article class="card {e(state)}" id="t-{e(arm)}-{k}" data-arm="{e(arm)}">{head}'
            f"{_stats(links, record, view.grade)}{error}{_output(source, links, record)}"
            f"{_workspace(source, links, record, staged)}{_checks(view.grade)}{_transcript(source, links, record)}"
            f"{stderr_html}{_feedback_form(links, d, rid, served, token)}</article>")


def render(source: data.Source, d: CaseData, *, served: bool, token: str | None = None) -> Rendered:
    links = Links(base="../../../")
    spec = d.report["spec"]
    arms = list(spec["arms"])
    rows = {r["arm"]: r for r in d.report["rows"] if r["case"] == d.case}
    first = next((v.record for v in d.trials.values() if v.record is not None), None)
    staged = data.staged_inputs(source, first)
    nav = ['<a rel="up" href="../index.html#cases">↑ all cases (<kbd>u</kbd>)</a>']
    nav.insert(0, f'<a rel="prev" href="{e(d.prev_case)}.html">← {e(d.prev_case)} (<kbd>k</kbd>)</a>'
               if d.prev_case else "<span></span>")
    nav.append(f'<a rel="next" href="{e(d.next_case)}.html">{e(d.next_case)} → (<kbd>j</kbd>)</a>'
               if d.next_case else "<span></span>")
    inputs = "".join(_file_preview(source, links, name, digest, open_=False) for name, digest in sorted(staged.items()))
    heads = "".join(f'<div class="armhead" data-arm="{e(a)}"><b>{e(a)}</b> ' + (row_rate(rows[a]) if a in rows else "")
                    + "</div>" for a in arms)
    # Adaptive trials: an arm's cards stop where its sequence decided; the trials after were never needed.
    limit = {a: int(rows[a]["expected"]) if a in rows and rows[a].get("adaptive") else int(spec["trials"])
             for a in arms}
    cards = "".join(_card(source, links, d, arm, k, staged, served, token) if k < limit[arm] else
                    f'<article class="card" data-arm="{e(arm)}"><h3>{e(arm)} · trial {k}</h3><p class="mute">not '
                    f'needed: {e(label(rows[arm]["adaptive"]))}</p></article>'
                    for k in range(max(limit.values(), default=0)) for arm in arms)
    tags = "".join(f'<span class="tag">{e(t)}</span>' for t in d.tags)
    body = (crumbs(links, [(d.name, "../index.html"), (d.case, None)])
            + f'<div class="navrow">{"".join(nav)}</div>'
            + f"<h1>{e(d.case)} <small>eval {d.eval_id}</small>{tags}</h1>"
            + f'<section class="panel"><h2>Prompt</h2><pre class="prompt">{e(d.prompt or "(no prompt recorded)")}'
              f"</pre></section>"
            + (f'<section class="panel"><h2>Staged input files</h2>{inputs}</section>' if inputs else "")
            + f'<h2>Trials, side by side</h2><div class="grid cols{min(len(arms), 6)}">{heads}{cards}</div>')
    case_href = links.case(d.name, d.case)[len(links.base):]
    return Rendered(page(title=f"{d.name} / {d.case}", body=body, links=links, served=served, token=token,
                         meta={"skillmake-spec": d.name, "skillmake-base": links.base,
                               "skillmake-case-href": case_href}), links)
