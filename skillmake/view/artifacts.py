"""Previewing an artifact by what it is: text and markdown rendered as text, CSV as a table, JSON pretty-printed,
raster images inline, everything else (SVG and HTML included) only as a download."""

from __future__ import annotations

import csv
import io
from html import escape

import orjson

from skillmake.view import markdown

TEXT_LIMIT = 60_000  # characters of a text artifact shown in a page; the rest behind a link to the whole file
CSV_ROWS = 200
# Raster formats by their first bytes: a file is shown as an image only when its content is one, whatever its name
# says. SVG is not among them: it can carry script, so it is offered as a download.
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "png"), (b"\xff\xd8\xff", "jpg"), (b"GIF87a", "gif"), (b"GIF89a", "gif"))
# Extensions a copied or served artifact may have; each is served with a fixed, harmless content type.
CONTENT_TYPES = {"png": "image/png", "jpg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
                 "txt": "text/plain; charset=utf-8", "bin": "application/octet-stream"}
_MARKDOWN = (".md", ".markdown")
_JSON = (".json", ".jsonl", ".ipynb")
_CSV = (".csv", ".tsv")


def image_type(data: bytes) -> str | None:
    """'png', 'jpg', 'gif' or 'webp' when the bytes are that raster image, else None."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def as_text(data: bytes) -> str | None:
    """The bytes as UTF-8 text, or None for binary content (a NUL byte, or not UTF-8)."""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def kind_of(name: str, data: bytes) -> str:
    """How to preview a file: image, markdown, json, csv, text or binary (a download)."""
    if image_type(data):
        return "image"
    lower = name.lower()
    if lower.endswith((".svg", ".html", ".htm", ".xhtml", ".xml")) or as_text(data) is None:
        return "binary"  # markup that a browser would run is never shown by it: a download, served inert
    if lower.endswith(_MARKDOWN):
        return "markdown"
    if lower.endswith(_JSON):
        return "json"
    if lower.endswith(_CSV):
        return "csv"
    return "text"


def extension(kind: str, data: bytes) -> str:
    """The extension an artifact is copied or served under: its image type, txt for text, bin otherwise."""
    if kind == "image":
        return image_type(data) or "bin"
    return "bin" if kind == "binary" else "txt"


def size_label(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _truncated(text: str, url: str) -> tuple[str, str]:
    if len(text) <= TEXT_LIMIT:
        return text, ""
    note = (f'<p class="trunc">showing the first {TEXT_LIMIT:,} of {len(text):,} characters · '
            f'<a href="{escape(url, quote=True)}">the whole file</a></p>')
    return text[:TEXT_LIMIT], note


def preview(name: str, data: bytes, url: str) -> str:
    """The HTML preview of one artifact; `url` is where the whole file is (a copy or the server's /files/)."""
    kind = kind_of(name, data)
    if kind == "image":
        return f'<img class="art" src="{escape(url, quote=True)}" alt="{escape(name, quote=True)}" loading="lazy">'
    if kind == "binary":
        return (f'<p class="dl"><a href="{escape(url, quote=True)}" download="{escape(name, quote=True)}">'
                f"download {escape(name)}</a> ({size_label(len(data))}; not shown here)</p>")
    text = as_text(data) or ""
    if kind == "json":
        try:
            text = orjson.dumps(orjson.loads(data), option=orjson.OPT_INDENT_2).decode()
        except orjson.JSONDecodeError:
            pass  # shown as it is: a file named .json that is not JSON is worth seeing as text
    if kind == "csv":
        table = _csv_table(text, tab=name.lower().endswith(".tsv"))
        if table is not None:
            return table
    shown, note = _truncated(text, url)
    if kind == "markdown":
        return f'<div class="md">{markdown.render(shown)}</div>{note}'
    return f'<pre class="out">{escape(shown)}</pre>{note}'


def _csv_table(text: str, *, tab: bool) -> str | None:
    try:
        rows = list(csv.reader(io.StringIO(text[:TEXT_LIMIT * 4]), delimiter="\t" if tab else ","))
    except csv.Error:
        return None
    if not rows:
        return None
    head, body = rows[0], rows[1:]
    more = f'<p class="trunc">{len(body) - CSV_ROWS:,} more rows</p>' if len(body) > CSV_ROWS else ""
    cells = "".join(f"<th>{escape(c)}</th>" for c in head)
    lines = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in body[:CSV_ROWS])
    return (f'<div class="scroll"><table class="csv"><thead><tr>{cells}</tr></thead><tbody>{lines}</tbody>'
            f"</table></div>{more}")
