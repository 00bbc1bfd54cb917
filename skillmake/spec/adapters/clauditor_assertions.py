"""clauditor's Layer 1 assertions as native checks that give clauditor 0.1.3's verdicts (clauditor/assertions.py).

Where clauditor counts differently from skillmake's check of the same name, the assertion becomes a native check that
counts as clauditor does, named as clauditor names its result (`has_entries>=3`): has_entries counts `**N. ` only,
min_count does not use multiline, has_format counts `findall` of clauditor's own registry pattern, has_urls counts
every occurrence. Values clauditor's loader accepts but the native schema does not (a count of 0, an empty needle, a
bad regex) become a check with clauditor's outcome for every output: always passing, or always failing with the
reason in its name. tests/differential/test_clauditor_assertions.py holds the two implementations side by side.
"""

from __future__ import annotations

import re
from typing import Any

from skillmake.spec.formats import CLAUDITOR_ENTRY, CLAUDITOR_FORMATS, CLAUDITOR_URL

_NEVER = "(?!)"  # a regex that matches nothing: a check that fails on every output
_GLOBAL_FLAGS = re.compile(r"(?:\(\?[aiLmsux]+\))+")
_MAX_LENGTH, _MAX_COUNT = 100_000_000, 1_000_000  # the native schema's bounds (no real output reaches them)


def single_line(pattern: str) -> str:
    """`pattern` as re.findall(pattern, text) reads it, for a check that searches with re.MULTILINE: the body wrapped
    in a scoped `(?-m:…)`, leading global flags kept in front (Python refuses them anywhere else)."""
    lead = _GLOBAL_FLAGS.match(pattern)
    flags = lead.group(0) if lead else ""
    if "m" in flags.replace("(?", "").replace(")", ""):
        return pattern  # the pattern asks for multiline itself
    body = pattern[len(flags):]
    closing = "\n)" if "x" in flags else ")"  # in verbose mode a trailing comment would swallow the `)`
    return f"{flags}(?-m:{body}{closing}"


def regex_problem(pattern: str) -> str | None:
    try:
        re.compile(pattern)
    except re.error as exc:
        return str(exc)
    return None


def _always(passes: bool, name: str) -> dict[str, Any]:
    return {"type": "min_length", "length": 0, "name": name} if passes else \
        {"type": "regex", "pattern": _NEVER, "name": name}


def _searchable(pattern: str) -> str:
    """The native schema wants a pattern with a non-space character: `  ` is the same regex as `(?:  )`."""
    return pattern if pattern.strip() else f"(?:{pattern})"


def _at_least(pattern: str, count: int, name: str) -> dict[str, Any]:
    """re.findall(pattern, output) has at least `count` items (clauditor: `count >= minimum`)."""
    if count <= 0:
        return _always(True, name)
    if count > _MAX_COUNT:
        return _always(False, f"{name} (more matches than any output holds)")
    return {"type": "min_count", "pattern": _searchable(single_line(pattern)), "count": count, "name": name}


def native_check(assertion: dict[str, Any]) -> dict[str, Any]:
    """The native check for one clauditor assertion its loader accepted (type known, keys and types right)."""
    kind: str = assertion["type"]
    name = assertion.get("name") if isinstance(assertion.get("name"), str) else None
    check = _translate(kind, assertion)
    payload = {k: v for k, v in assertion.items() if k not in ("id", "name")}
    if {k: v for k, v in check.items() if k != "name"} == payload:
        del check["name"]  # the same check under the same name: a native twin of the spec keeps its grade key
    if name:  # the spec's own label wins over clauditor's generated one
        check["name"] = name
    if "id" in assertion:
        check["id"] = assertion["id"]
    return check


def _translate(kind: str, a: dict[str, Any]) -> dict[str, Any]:
    count = a.get("count", 1)
    label = clauditor_name(a)
    if kind in ("contains", "not_contains"):
        needle: str = a["needle"]
        if not needle:  # "" is in every output
            return _always(kind == "contains", label)
        if not needle.strip():  # the native needle needs a non-space character: the same test as a regex
            return {"type": "regex" if kind == "contains" else "not_matches", "pattern": re.escape(needle),
                    "name": label}
        return {"type": kind, "needle": needle, "name": label}
    if kind == "regex":
        pattern: str = a["pattern"]
        problem = regex_problem(pattern)
        if problem:
            return _always(False, f"{label} (invalid regular expression: {problem})")
        return {"type": "regex", "pattern": _searchable(pattern), "name": label}
    if kind == "min_count":
        pattern = a["pattern"]
        problem = regex_problem(pattern)
        if problem:
            return _always(False, f"{label} (invalid regular expression: {problem})")
        return _at_least(pattern, a["count"], label)
    if kind in ("min_length", "max_length"):
        length: int = a["length"]
        if length < 0:  # every output is at least -1 characters long, none is at most -1
            return _always(kind == "min_length", label)
        if length > _MAX_LENGTH:
            return _always(kind == "max_length", label)
        return {"type": kind, "length": length, "name": label}
    if kind == "has_urls":
        return _at_least(CLAUDITOR_URL, count, label)
    if kind == "has_entries":
        return _at_least(CLAUDITOR_ENTRY, count, label)
    if kind == "has_format":
        fmt: str = a["format"]
        return _at_least(CLAUDITOR_FORMATS[fmt][1], count, label)
    if kind == "urls_reachable":
        if count <= 0:
            return _always(True, label)
        return {"type": "urls_reachable", "count": min(count, _MAX_COUNT), "name": label}
    raise ValueError(f"not a clauditor assertion type: {kind!r}")  # the loader refused it before


def field_format(fmt: str) -> str:
    """A section field's `format` (a name clauditor's registry holds): clauditor's strict pattern, matched in full."""
    return CLAUDITOR_FORMATS[fmt][0]


def clauditor_name(a: dict[str, Any]) -> str:
    """The name clauditor gives an assertion's result (assertions.py), e.g. `has_entries>=3`."""
    kind, count = a.get("type", ""), a.get("count", 1)
    if kind in ("contains", "not_contains"):
        return f"{kind}:{str(a.get('needle', ''))[:40]}"
    if kind == "regex":
        return f"regex:{str(a.get('pattern', ''))[:40]}"
    if kind == "min_count":
        return f"min_count:{str(a.get('pattern', ''))[:30]}>={a.get('count')}"
    if kind == "min_length":
        return f"min_length>={a.get('length')}"
    if kind == "max_length":
        return f"max_length<={a.get('length')}"
    if kind == "has_format":
        return f"has_format:{a.get('format')}>={count}"
    return f"{kind}>={count}" if kind in ("has_urls", "has_entries", "urls_reachable") else f"unknown:{kind}"
