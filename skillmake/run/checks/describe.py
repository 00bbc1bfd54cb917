"""Readable descriptions of checks, used as grading.json's `text` when a check has no name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from skillmake.spec.model import Check


def _q(value: Any) -> str:
    text = str(value)
    return f"'{text[:57]}…'" if len(text) > 58 else f"'{text}'"


def _any(values: list[str]) -> str:
    return ", ".join(_q(v) for v in values)


def _rows(p: dict[str, Any]) -> str:
    if "count" in p:
        return f"exactly {p['count']}"
    parts = [f"at least {p['min']}" if "min" in p else "", f"at most {p['max']}" if "max" in p else ""]
    return " and ".join(x for x in parts if x)


_TEMPLATES: dict[str, Callable[[str, dict[str, Any]], str]] = {
    "contains": lambda s, p: f"{s} contains {_q(p['needle'])}",
    "not_contains": lambda s, p: f"{s} does not contain {_q(p['needle'])}",
    "icontains": lambda s, p: f"{s} contains {_q(p['needle'])} (any case)",
    "regex": lambda s, p: f"{s} matches /{p['pattern']}/",
    "matches": lambda s, p: f"{s} matches /{p['pattern']}/",
    "not_matches": lambda s, p: f"{s} does not match /{p['pattern']}/",
    "min_count": lambda s, p: f"{s} has at least {p['count']} matches of /{p['pattern']}/",
    "min_length": lambda s, p: f"{s} is at least {p['length']} characters",
    "max_length": lambda s, p: f"{s} is at most {p['length']} characters",
    "has_urls": lambda s, p: f"{s} has at least {p.get('count', 1)} URL(s)",
    "has_entries": lambda s, p: f"{s} has at least {p.get('count', 1)} numbered entries",
    "urls_reachable": lambda s, p: f"at least {p.get('count', 1)} URL(s) in {s} are reachable",
    "has_format": lambda s, p: f"{s} has at least {p.get('count', 1)} {p['format']} value(s)",
    "contains_any": lambda s, p: f"{s} contains any of {_any(p['needles'])}",
    "contains_all": lambda s, p: f"{s} contains all of {_any(p['needles'])}",
    "min_tokens": lambda s, p: f"{s} has at least {p['count']} tokens",
    "max_tokens": lambda s, p: f"{s} has at most {p['count']} tokens",
    "equals": lambda s, p: f"{s} equals {_q(p['value'])}",
    "starts_with": lambda s, p: f"{s} starts with {_q(p['prefix'])}",
    "is_json": lambda s, p: f"{s} is valid JSON",
    "json_schema": lambda s, p: f"{s} is JSON valid against "
    + (f"schema file {_q(p['schema_file'])}" if "schema_file" in p else "the inline schema"),
    "file_exists": lambda s, p: f"{s} exists",
    "file_contains": lambda s, p: f"{s} contains {_q(p['needle'])}",
    "csv_valid": lambda s, p: f"{s} is valid CSV" + (f" with header {p['header']}" if "header" in p else ""),
    "csv_row_count": lambda s, p: f"{s} has {_rows(p)} CSV data rows",
    "python": lambda s, p: f"python script {_q(p['script'])} passes" if "script" in p else "python check passes",
}


def describe(check: Check) -> str:
    """'output contains 'HELLO'', 'file 'out.csv' has exactly 3 CSV data rows', …"""
    subject = f"file {_q(check.file)}" if check.file else "output"
    template = _TEMPLATES.get(check.type)
    return template(subject, check.params) if template else f"{check.type} check"
