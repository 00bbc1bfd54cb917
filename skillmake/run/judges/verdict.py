"""Reading a verdict out of a model's reply: the tool call or the JSON in its text, conformed to the judge's schema.

Models answer loosely even when told exactly how: a forced tool call with keys the schema does not name, the
JSON wrapped in prose or a ```json fence, a score written "4" or "4/5". A verdict is accepted when the fields
the judge reads are there with valid values: keys the schema does not name are dropped, scalars written as
text are read as the schema's type, a missing text field reads as empty (a missing nullable one as null). A
reply that still lacks or breaks a field is refused (a judge_error, never a guessed verdict).
"""

from __future__ import annotations

import json
import re
from typing import Any

from skillmake.run.judges.base import TOOL_NAME, JudgeRequest, ProviderReply, ReplyError

_NUMBER = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)\s*(?:(/)\s*(\d+(?:\.\d+)?)|(%))?\s*$")
_MAX_STARTS = 200  # JSON openings tried in one text reply; bounds the work on a long, brace-heavy answer


def read(judge: Any, request: JudgeRequest, reply: ProviderReply) -> dict[str, Any]:
    """The reply's verdict as data that fits `request.schema`, else ReplyError saying what is wrong.

    Tried in order, the first that fits wins: the tool call's input (or the provider's structured output),
    the JSON in the text (the whole text, or each object embedded in prose or a fence), then the
    judge's own plain-text form (eva's SCORE=/REASON=)."""
    candidates = ([reply.data] if reply.data is not None else []) + _json_in(reply.text)
    parse = getattr(judge, "from_text", None)
    parsed = parse(reply.text) if parse is not None else None
    if parsed is not None:
        candidates.append(parsed)
    if not candidates:
        excerpt = " ".join(reply.text.split())[:200] or "(empty)"
        raise ReplyError(f"the reply holds no verdict (neither a {TOOL_NAME} call nor JSON): {excerpt!r}")
    first: ReplyError | None = None
    for candidate in candidates:
        try:
            return fit(candidate, request.schema)
        except ReplyError as err:
            first = first or err
    assert first is not None
    raise first


def fit(value: Any, schema: dict[str, Any]) -> dict[str, Any]:
    """`value` conformed to `schema` and validated against it; ReplyError names the first field that is wrong."""
    value = _unwrap(value, schema)
    data = conform(value, schema)
    if isinstance(data, dict) and _surely_valid(data, schema):
        return data
    import jsonschema  # here: only for a verdict draft7 cannot pass, to word what is wrong as before

    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "(top)"
        raise ReplyError(f"the verdict does not match the schema at {where}: {_short(err.message)}") from err
    assert isinstance(data, dict)
    return data


def _surely_valid(data: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Whether `data` fits `schema`, decided by spec/draft7.py's exact validator of the plain keywords the verdict
    schemas use (the same answer as jsonschema's for them), without importing jsonschema: ~0.14 s of CPU that every
    judged run paid on its first grade. False for a schema it cannot decide exactly, and for an invalid verdict."""
    from skillmake.spec import draft7

    try:
        return draft7.Validator(schema).is_valid(data)
    except draft7.Unsupported:
        return False


def conform(value: Any, schema: dict[str, Any]) -> Any:
    """`value` read the way `schema` asks, wherever that is unambiguous; anything else is left for validation."""
    types = _types(schema)
    if isinstance(value, dict) and "object" in types:
        return _conform_object(value, schema)
    if isinstance(value, list) and "array" in types:
        items = schema.get("items")
        return [conform(v, items) for v in value] if isinstance(items, dict) else value
    if isinstance(value, str) and "string" not in types:
        return _from_string(value, schema, types)
    if isinstance(value, float) and "integer" in types and "number" not in types and value.is_integer():
        return int(value)
    return value


def _conform_object(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties") or {}
    folded = {str(k).strip().lower(): k for k in value}
    out: dict[str, Any] = {}
    for name, sub in props.items():
        key = name if name in value else folded.get(name.lower())  # "Score" for "score"
        if key is not None and key in value:
            out[name] = conform(value[key], sub)
        elif name in (schema.get("required") or ()):
            types = _types(sub)
            if "null" in types:
                out[name] = None  # an extraction that left a field out: the same as "not found"
            elif types == {"string"}:
                out[name] = ""  # a reason or evidence left out; the judge says so in the verdict
    if schema.get("additionalProperties", True) is not False:
        out.update({k: v for k, v in value.items() if k not in props})
    return out


def _from_string(text: str, schema: dict[str, Any], types: set[str]) -> Any:
    word = text.strip().lower()
    if "boolean" in types and word in ("true", "false"):
        return word == "true"
    if "null" in types and word in ("null", "none", ""):
        return None
    match = _NUMBER.match(text)
    if not match or not types & {"integer", "number"}:
        return text
    number = float(match.group(1))
    over = float(match.group(3)) if match.group(2) else None
    percent = bool(match.group(4))
    if "integer" in types and "number" not in types:
        if percent:
            return text
        if over is not None:  # "4/5" on a 1-5 scale is a 4; "8/10" on it is not a score we can place
            top = max((e for e in schema.get("enum") or () if isinstance(e, int | float)), default=None)
            if top is None or over != top:
                return text
        return int(number) if number.is_integer() else number
    if over is not None:  # a 0-1 score written as a fraction or a percentage
        return number / over if over else text
    return number / 100 if percent else number


def _unwrap(value: Any, schema: dict[str, Any]) -> Any:
    """The verdict inside a one-key wrapper ({"record_verdict": {...}}, {"verdict": {...}}), or the one list
    a schema of a single array property asks for ({"expectations": [...]} given as just [...])."""
    required = list(schema.get("required") or ())
    if isinstance(value, dict) and required and not any(r in value for r in required) and len(value) == 1:
        inner = next(iter(value.values()))
        if isinstance(inner, dict):
            return inner
    props = schema.get("properties") or {}
    if isinstance(value, list) and len(required) == 1 and "array" in _types(props.get(required[0]) or {}):
        return {required[0]: value}
    return value


def _json_in(text: str) -> list[Any]:
    """Every JSON object or array in a text reply, in order of appearance: the whole text, or each one
    embedded in prose or a ```json fence (a fence needs no parsing of its own: its JSON is found inside)."""
    found: list[Any] = []
    stripped = text.strip()
    decoder = json.JSONDecoder()
    position, tries = 0, 0
    while tries < _MAX_STARTS:
        starts = [i for i in (stripped.find("{", position), stripped.find("[", position)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        tries += 1
        try:
            value, end = decoder.raw_decode(stripped, start)
        except ValueError:
            position = start + 1
            continue
        if isinstance(value, dict | list) and value not in found:
            found.append(value)
        position = end
    return found


def _types(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type")
    return {kind} if isinstance(kind, str) else set(kind or ())


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
