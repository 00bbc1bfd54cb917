"""Markdown to HTML for untrusted text: a small subset (headings, lists, code, emphasis, links), every character
escaped first, links kept only when they point somewhere harmless."""

from __future__ import annotations

import re
from html import escape

_SAFE_SCHEMES = ("http://", "https://", "mailto:")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[([^\]\n]{1,500})\]\(([^)\s]{1,2000})\)")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*([^*\n]+)\*(?!\*)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d{1,9}[.)]\s+(.*)$")


def safe_href(url: str) -> str | None:
    """The URL if following it cannot run anything (http, https, mailto, or a fragment), else None.

    `javascript:`, `data:`, `vbscript:` and any other scheme are refused, whatever their case or the control
    characters hidden in them (browsers strip those before reading the scheme)."""
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", url).lower()
    if cleaned.startswith(_SAFE_SCHEMES) or (cleaned.startswith("#") and ":" not in cleaned):
        return url
    return None


def _inline(text: str) -> str:
    """One line of markdown: code spans are kept verbatim (escaped), the rest gets links and emphasis."""
    out: list[str] = []
    last = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_spans(text[last:match.start()]))
        out.append(f"<code>{escape(match.group(1))}</code>")
        last = match.end()
    out.append(_spans(text[last:]))
    return "".join(out)


def _spans(text: str) -> str:
    out: list[str] = []
    last = 0
    for match in _LINK.finditer(text):
        out.append(_emphasis(escape(text[last:match.start()])))
        label, url = match.group(1), match.group(2)
        href = safe_href(url)
        if href is None:  # shown as the text it was, never as a link
            out.append(escape(match.group(0)))
        else:
            out.append(f'<a href="{escape(href, quote=True)}" rel="noopener noreferrer nofollow" '
                       f'target="_blank">{_emphasis(escape(label))}</a>')
        last = match.end()
    out.append(_emphasis(escape(text[last:])))
    return "".join(out)


def _emphasis(escaped: str) -> str:
    escaped = _BOLD.sub(r"<strong>\1</strong>", escaped)
    return _ITALIC.sub(r"<em>\1</em>", escaped)


def render(text: str) -> str:
    """HTML for `text` read as markdown. Raw HTML in the text is shown as text, never interpreted."""
    html: list[str] = []
    lines = text.replace("\r\n", "\n").split("\n")
    para: list[str] = []
    items: list[str] = []
    list_tag = ""

    def flush() -> None:
        nonlocal list_tag
        if para:
            html.append("<p>" + "<br>".join(_inline(p) for p in para) + "</p>")
            para.clear()
        if items:
            html.append(f"<{list_tag}>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + f"</{list_tag}>")
            items.clear()
            list_tag = ""

    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            flush()
            fence = line.lstrip()[:3]
            block: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].lstrip().startswith(fence):
                block.append(lines[i])
                i += 1
            html.append("<pre><code>" + escape("\n".join(block)) + "</code></pre>")
            i += 1
            continue
        heading = _HEADING.match(line)
        bullet = _BULLET.match(line)
        numbered = _NUMBERED.match(line) if bullet is None else None
        if heading:
            flush()
            level = len(heading.group(1))
            html.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif bullet or numbered:
            tag = "ul" if bullet else "ol"
            if para or (list_tag and list_tag != tag):
                flush()
            list_tag = tag
            items.append((bullet or numbered).group(1))  # type: ignore[union-attr]
        elif not line.strip():
            flush()
        elif line.startswith(">"):
            flush()
            html.append(f"<blockquote>{_inline(line.lstrip('> '))}</blockquote>")
        else:
            if items:
                flush()
            para.append(line)
        i += 1
    flush()
    return "".join(html)
