"""Whether a JSON Schema a spec carries is surely well-formed, decided without importing jsonschema.

Checking a json_schema check's schema against its metaschema took jsonschema (~70 ms to import, more than the
rest of `skillmake validate FILE`). Almost every such schema uses a handful of keywords in the plain way; this
module accepts exactly those, and answers "don't know" for anything else, so jsonschema still decides (and words
the message) for every schema that might be wrong. Sound, not complete: `surely_valid(s)` implies that the
metaschema of every draft `s` may be read under (draft-07, 2019-09, 2020-12; no `$schema` means 2020-12) accepts
`s`; tests/unit/test_wellformed.py checks that against jsonschema on generated schemas.
"""

from __future__ import annotations

from typing import Any

# The drafts whose metaschemas agree on every keyword below (the older ones differ: `required: []`, booleans
# as schemas, `exclusiveMinimum: true`).
DRAFTS = frozenset({"http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema",
                    "https://json-schema.org/draft/2019-09/schema", "https://json-schema.org/draft/2019-09/schema#",
                    "https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#"})
TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
MAX_DEPTH = 64  # deeper than any schema a person writes: jsonschema decides


def _schema(value: Any, depth: int) -> bool:
    return isinstance(value, bool) or (isinstance(value, dict) and _object(value, depth + 1))


def _schemas(value: Any, depth: int) -> bool:
    return isinstance(value, list) and len(value) > 0 and all(_schema(v, depth) for v in value)


def _schema_map(value: Any, depth: int) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and _schema(v, depth) for k, v in value.items())


def _count(value: Any, depth: int) -> bool:  # written as an integer: 2.0 is left to jsonschema
    return type(value) is int and value >= 0


def _number(value: Any, depth: int) -> bool:
    return type(value) in (int, float)


def _string(value: Any, depth: int) -> bool:
    return isinstance(value, str)


def _type(value: Any, depth: int) -> bool:
    if isinstance(value, str):
        return value in TYPES
    return (isinstance(value, list) and len(value) > 0 and all(isinstance(v, str) and v in TYPES for v in value)
            and len(set(value)) == len(value))


def _names(value: Any, depth: int) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value) and len(set(value)) == len(value)


def _array(value: Any, depth: int) -> bool:
    return isinstance(value, list)


def _anything(value: Any, depth: int) -> bool:
    return True


KEYWORDS = {
    "type": _type, "required": _names, "enum": _array, "const": _anything, "default": _anything,
    "examples": _array, "title": _string, "description": _string, "$comment": _string, "format": _string,
    "pattern": _string, "properties": _schema_map, "patternProperties": _schema_map, "$defs": _schema_map,
    "definitions": _schema_map, "additionalProperties": _schema, "propertyNames": _schema, "contains": _schema,
    "not": _schema, "if": _schema, "then": _schema, "else": _schema, "allOf": _schemas, "anyOf": _schemas,
    "oneOf": _schemas, "minimum": _number, "maximum": _number, "exclusiveMinimum": _number,
    "exclusiveMaximum": _number, "minLength": _count, "maxLength": _count, "minItems": _count, "maxItems": _count,
    "minProperties": _count, "maxProperties": _count,
    "uniqueItems": lambda value, depth: isinstance(value, bool),
    "multipleOf": lambda value, depth: _number(value, depth) and value > 0,
    "items": _schema,  # only the one-schema form: draft-07's list form is 2020-12's prefixItems
}


def _object(schema: dict[str, Any], depth: int) -> bool:
    if depth > MAX_DEPTH:
        return False
    for key, value in schema.items():
        check = KEYWORDS.get(key) if isinstance(key, str) else None
        if check is None or not check(value, depth):
            return False
    return True


def surely_valid(schema: Any) -> bool:
    """True only when `schema` is a valid JSON Schema under the draft its `$schema` names (2020-12 without one);
    False means "ask jsonschema", not "invalid"."""
    if not isinstance(schema, dict):
        return False
    if "$schema" in schema:
        if not isinstance(schema["$schema"], str) or schema["$schema"] not in DRAFTS:
            return False
        schema = {k: v for k, v in schema.items() if k != "$schema"}
    return _object(schema, 0)
