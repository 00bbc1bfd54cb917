"""The viewer's page shell and the small formatters every page uses; every value is escaped here or by the caller
with `e`, and nothing from a record reaches a page any other way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from importlib import resources
from typing import Any

from skillmake.results.report import ci_text

# The policy of every page, served (a header) and static (a meta tag, which cannot carry frame-ancestors): no
# inline script or style, nothing from anywhere but the viewer itself.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'")
SERVED_CSP = CSP + "; frame-ancestors 'none'"
OUTCOME_MARK = {"pass": "✓", "fail": "✗", "error": "!", "timeout": "⧗", "judge_error": "?", "cheat": "⚑",
                "ungraded": "·", "missing": "–"}


def asset(name: str) -> bytes:
    return resources.files("skillmake.view").joinpath("assets", name).read_bytes()


def e(value: object) -> str:
    return escape(str(value), quote=True)


@dataclass(slots=True)
class Links:
    """URLs from one page to the site's shared files, relative (the same in a served and a copied site), and the
    artifacts and records the page names, so a static export copies exactly those."""

    base: str  # from the page to the site root: "", "../../", …
    files: dict[str, str] = field(default_factory=dict)  # file name under files/ → object digest
    records: set[str] = field(default_factory=set)  # record keys

    def file(self, digest: str, ext: str) -> str:
        name = f"{digest.removeprefix('sha256:')}.{ext}"
        self.files[name] = digest
        return f"{self.base}files/{name}"

    def record(self, key: str) -> str:
        self.records.add(key)
        return f"{self.base}records/{key.removeprefix('sha256:')}.json"

    def spec(self, name: str, page: str = "index.html") -> str:
        return f"{self.base}specs/{name}/{page}"

    def case(self, spec: str, case: str) -> str:
        return f"{self.base}specs/{spec}/cases/{case}.html"


@dataclass(frozen=True, slots=True)
class Rendered:
    """A page and the shared files it links to (what a static export must copy beside it)."""

    html: str
    links: Links


def num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def money(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def duration(ms: float | None) -> str:
    if ms is None:
        return "—"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def tokens(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def delta(value: float | None, *, href: str | None = None, title: str = "") -> str:
    """A signed change, coloured; a link when `href` is given."""
    if value is None:
        return '<span class="zero">—</span>'
    cls = "zero" if abs(value) < 1e-9 else ("up" if value > 0 else "down")
    text = f"{value:+.2f}"
    attr = f' title="{e(title)}"' if title else ""
    if href:
        return f'<a class="{cls}" href="{e(href)}"{attr}>{text}</a>'
    return f'<span class="{cls}"{attr}>{text}</span>'


def outcome(value: str, *, href: str | None = None, title: str = "") -> str:
    """A trial's outcome as a coloured mark with its word for screen readers and tooltips."""
    mark = OUTCOME_MARK.get(value, "?")
    label = title or value
    if href:
        return f'<a class="o {e(value)}" href="{e(href)}" title="{e(label)}" aria-label="{e(label)}">{mark}</a>'
    return f'<span class="o {e(value)}" title="{e(label)}">{mark}</span>'


def badge(value: str) -> str:
    return f'<span class="badge {e(value)}">{e(value)}</span>'


def rate(passed: int, n: int, value: float | None, ci: Mapping[str, float] | None = None) -> str:
    """passed/n with a bar; with `ci` (the report's pass_rate_ci) the rate and its 95% Wilson interval after it."""
    width = 0 if value is None else round(value * 100)
    interval = (f' <span class="ci mute" title="pass rate and its 95% Wilson interval">{value:.2f} '
                f'{ci_text(ci)}</span>' if ci and value is not None else "")
    return f'<span class="bar" data-v="{width}"><i class="w{width // 5 * 5}"></i></span>{passed}/{n}{interval}'


NOT_SELECTED = "not run (not selected)"  # the terminal's words (results/summary.py) for a cell a selection left out


def not_selected(row: Mapping[str, Any] | None) -> bool:
    """Whether the last run's selection (-k, --tag, --spec) left this row's cell out and nothing is stored for it:
    not run, not failed — no 0/0."""
    return bool(row and row.get("not_selected") and not row["n"])


def row_rate(row: Mapping[str, Any]) -> str:
    """A report row's passed/n with its bar, or "not run (not selected)" for a cell the selection left out."""
    if not_selected(row):
        return (f'<span class="mute" title="the last run\'s selection (-k, --tag, --spec) left this cell out, and no '
                f'result of it is stored">{NOT_SELECTED}</span>')
    return rate(row["passed"], row["n"], row["pass_rate"], row.get("pass_rate_ci"))


def missing_word(row: Mapping[str, Any] | None) -> str:
    """What a trial with no record is: left out by the last run's selection, or missing."""
    return NOT_SELECTED if row and row.get("not_selected") else "missing"


def table(head: Sequence[str], rows: Sequence[str], *, cls: str = "") -> str:
    ths = "".join(f"<th>{h}</th>" for h in head)
    return f'<table class="{cls}"><thead><tr>{ths}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def crumbs(links: Links, parts: Sequence[tuple[str, str | None]]) -> str:
    items = [f'<a href="{e(links.base)}index.html">all specs</a>']
    items += [f'<a href="{e(href)}">{e(label)}</a>' if href else f"<span>{e(label)}</span>" for label, href in parts]
    return '<nav class="crumbs">' + " / ".join(items) + "</nav>"


def page(*, title: str, body: str, links: Links, served: bool, token: str | None = None,
         meta: Mapping[str, str] | None = None) -> str:
    """A complete page. `served`: from `skillmake view` (feedback saved through the server, `token` required
    with each save); else a static export (feedback kept in the browser and downloaded as feedback.json)."""
    extra = {"skillmake-mode": "served" if served else "static", **(meta or {})}
    if served and token:
        extra["skillmake-token"] = token
    metas = "".join(f'<meta name="{e(k)}" content="{e(v)}">' for k, v in extra.items())
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{e(CSP)}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="referrer" content="no-referrer">{metas}'
            f"<title>{e(title)} · skillmake</title>"
            f'<link rel="stylesheet" href="{e(links.base)}assets/viewer.css">'
            f'<script src="{e(links.base)}assets/viewer.js" defer></script>'
            f"</head><body><main>{body}</main></body></html>\n")


def json_block(element_id: str, value: Any) -> str:
    """Data for the page's script, in a non-executable block; `<`, `>` and `&` escaped so no text in it can
    close the element (skill-creator's viewer does the same with its embedded data)."""
    import orjson

    text = orjson.dumps(value).decode()
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f'<script type="application/json" id="{e(element_id)}">{text}</script>'
