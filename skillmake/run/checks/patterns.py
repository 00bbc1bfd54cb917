"""Regular-expression checks: regex/matches, min_count, numbered entries, URLs and formats."""

from __future__ import annotations

import re

from skillmake.run.checks.base import CheckContext, Target, Verdict, clip, listing, plural
from skillmake.spec import formats
from skillmake.spec.model import Check

# A numbered entry starts a line: "1. x", "2) x", "**3.** x", "### 4. x", "- 5. x".
_ENTRY = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+)?(?:\*\*|__)?\d{1,4}[.)](?:\*\*|__)?(?=[ \t]|$)",
                    re.MULTILINE)


def _show(pattern: str) -> str:
    return f"/{pattern}/"


def _search(check: Check, target: Target) -> Verdict:
    pattern: str = check.params["pattern"]
    m = re.search(pattern, target.text)
    if m:
        return Verdict(True, f"{_show(pattern)} matched {clip(m.group(0))} at char {m.start()}")
    return Verdict(False, f"no match for {_show(pattern)} in {clip(target.text)}")


def regex(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    return _search(check, target)


def not_matches(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    found = _search(check, target)
    if found.passed:
        return Verdict(False, found.evidence)
    return Verdict(True, f"no match for {_show(check.params['pattern'])} in {target.label}")


def min_count(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    pattern: str = check.params["pattern"]
    need: int = check.params["count"]
    # Multiline, as clauditor: "^- " counts bullet lines.
    hits = [m.group(0) for m in re.finditer(pattern, target.text, re.MULTILINE)]
    shown = f": {listing([clip(h, 30) for h in hits], 3)}" if hits else ""
    return Verdict(len(hits) >= need, f"found {plural(len(hits), 'match', 'matches')} of {_show(pattern)}, "
                                       f"needed {need}{shown}")


def has_entries(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    need: int = check.params.get("count", 1)
    hits = [m.group(0).strip() for m in _ENTRY.finditer(target.text)]
    shown = f": {listing(hits, 5)}" if hits else ""
    return Verdict(len(hits) >= need, f"found {plural(len(hits), 'numbered entry', 'numbered entries')}, "
                                       f"needed {need}{shown}")


def urls_in(text: str) -> list[str]:
    """Distinct http(s) URLs in order of first appearance."""
    return list(dict.fromkeys(formats.find_values("url", text)))


def has_urls(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    need: int = check.params.get("count", 1)
    urls = urls_in(target.text)
    shown = f": {listing(urls)}" if urls else ""
    return Verdict(len(urls) >= need, f"found {plural(len(urls), 'URL')}, needed {need}{shown}")


def has_format(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    fmt: str = check.params["format"]
    need: int = check.params.get("count", 1)
    values = formats.find_values(fmt, target.text)
    what = fmt if formats.is_registered(fmt) else _show(fmt)
    shown = f": {listing(values)}" if values else f" in {clip(target.text)}"
    return Verdict(len(values) >= need, f"found {len(values)} {what} value(s), needed {need}{shown}")


CHECKS = {
    "regex": regex, "matches": regex, "not_matches": not_matches, "min_count": min_count,
    "has_entries": has_entries, "has_urls": has_urls, "has_format": has_format,
}
