"""Structured-output checks: is_json, json_schema, csv_valid, csv_row_count."""

from __future__ import annotations

import csv
import io
import json
import os
from typing import Any

from skillmake.run.checks.base import CheckContext, Target, Verdict, clip, listing
from skillmake.spec.model import Check


def _parse_json(target: Target) -> tuple[Any, str | None]:
    try:
        return json.loads(target.text), None
    except json.JSONDecodeError as exc:
        why = f"{target.label} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        if target.text.lstrip().startswith("```"):
            why += " (it is wrapped in a ``` code fence)"
        return None, why + f": {clip(target.text)}"


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def is_json(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    value, why = _parse_json(target)
    if why is not None:
        return Verdict(False, why)
    size = f" with {len(value)} item(s)" if isinstance(value, dict | list) else ""
    return Verdict(True, f"{target.label} is a JSON {_kind(value)}{size}")


def _schema(check: Check, ctx: CheckContext) -> tuple[Any, str | None]:
    if "schema" in check.params:
        return check.params["schema"], None
    path = os.path.join(ctx.spec_folder, check.params["schema_file"])
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f), None
    except (OSError, ValueError) as exc:
        return None, f"cannot read schema file {check.params['schema_file']!r}: {exc}"


def json_schema(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    from jsonschema import Draft202012Validator, validators

    schema, why = _schema(check, ctx)
    if why is not None:
        return Verdict(False, why)
    value, why = _parse_json(target)
    if why is not None:
        return Verdict(False, why)
    cls = validators.validator_for(schema, default=Draft202012Validator)
    errors = sorted(cls(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
    if not errors:
        return Verdict(True, f"{target.label} is valid against the schema")
    shown = [f"{_path(e.absolute_path)}: {e.message}" for e in errors]
    return Verdict(False, f"{len(errors)} schema error(s): {listing(shown, 3)}")


def _path(parts: Any) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _rows(text: str) -> tuple[list[list[str]], str | None]:
    try:
        rows = list(csv.reader(io.StringIO(text), strict=True))
    except csv.Error as exc:
        return [], f"CSV parse error: {exc}"
    # A trailing blank line is how files end, not an empty record.
    while rows and not rows[-1]:
        rows.pop()
    return rows, None


def csv_valid(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    rows, why = _rows(target.text)
    if why is not None:
        return Verdict(False, f"{target.label}: {why}")
    if not rows:
        return Verdict(False, f"{target.label} has no CSV rows")
    width = len(rows[0])
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != width:
            return Verdict(False, f"row {number} has {len(row)} field(s), expected {width} (like row 1): "
                                  f"{clip(','.join(row))}")
    header = check.params.get("header")
    if header is not None and [c.strip() for c in rows[0]] != list(header):
        return Verdict(False, f"header is {rows[0]}, expected {list(header)}")
    return Verdict(True, f"{len(rows)} row(s) × {width} column(s)" + (f", header {rows[0]}" if header else ""))


def csv_row_count(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    rows, why = _rows(target.text)
    if why is not None:
        return Verdict(False, f"{target.label}: {why}")
    has_header = check.params.get("header", True)
    have = max(0, len(rows) - 1) if has_header else len(rows)
    p = check.params
    if "count" in p:
        wanted, ok = f"exactly {p['count']}", have == p["count"]
    else:
        low, high = p.get("min"), p.get("max")
        ok = (low is None or have >= low) and (high is None or have <= high)
        wanted = " and ".join(part for part in (f"at least {low}" if low is not None else "",
                                                f"at most {high}" if high is not None else "") if part)
    what = "data row(s) after the header" if has_header else "row(s)"
    return Verdict(ok, f"{target.label} has {have} {what}, needed {wanted}")


CHECKS = {"is_json": is_json, "json_schema": json_schema, "csv_valid": csv_valid, "csv_row_count": csv_row_count}
