"""wellformed.surely_valid: never says "valid" where jsonschema's metaschema check finds a problem, says it for
the schemas people write, and so keeps jsonschema off the editor-save path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, validators

from skillmake.spec import wellformed
from skillmake.spec.inline import _schema_problem
from skillmake.spec.wellformed import DRAFTS, KEYWORDS, surely_valid

REPO = Path(__file__).resolve().parents[3]


def metaschema_errors(schema: Any) -> list[str]:
    cls = validators.validator_for(schema, default=Draft202012Validator) if isinstance(schema, dict) else (
        Draft202012Validator)
    return [e.message for e in cls(cls.META_SCHEMA).iter_errors(schema)]


# Values a person might put under a keyword, right or wrong: the right shapes and the near misses beside them.
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from(["string", "object", "array", "integer", "nope", "", "a"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["type", "a", "required", "x"]), inner,
                                                 max_size=3)), max_leaves=8)
type_names = st.sampled_from(["string", "object", "array", "integer", "null", "number", "boolean", "nope"])
counts = st.one_of(st.integers(-1, 3), st.sampled_from([2.0, 0.5, True]))
numbers = st.one_of(st.integers(-2, 2), st.floats(allow_nan=True, allow_infinity=True), st.booleans())
names = st.lists(st.one_of(st.sampled_from(["a", "b", "c"]), st.integers(0, 1)), max_size=3)
KEYS = st.sampled_from([*KEYWORDS, "$schema", "$ref", "dependencies", "unknownKeyword"])


def schemas() -> st.SearchStrategy[Any]:
    by_check: dict[Any, st.SearchStrategy[Any]] = {
        wellformed._count: counts, wellformed._number: numbers, wellformed._names: names,
        wellformed._type: st.one_of(type_names, st.lists(type_names, max_size=3))}

    def of(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        by_check_inner = {**by_check, wellformed._schema: st.one_of(inner, st.lists(inner, max_size=2)),
                          wellformed._schemas: st.lists(inner, max_size=2),
                          wellformed._schema_map: st.dictionaries(st.sampled_from(["p", "q"]), inner, max_size=2)}
        shaped = {key: by_check_inner[check] for key, check in KEYWORDS.items() if check in by_check_inner}
        shaped["$schema"] = st.sampled_from([*sorted(DRAFTS), "http://json-schema.org/draft-04/schema#"])

        shaped_pair = st.sampled_from(sorted(shaped)).flatmap(lambda key: st.tuples(st.just(key), shaped[key]))
        any_pair = st.tuples(KEYS, values)  # the wrong shape, or a keyword left to jsonschema
        pairs = st.one_of(shaped_pair, shaped_pair, shaped_pair, any_pair)
        return st.one_of(st.booleans(), st.lists(pairs, max_size=4).map(dict))

    return st.recursive(st.one_of(st.booleans(), st.just({})), of, max_leaves=10)


@settings(max_examples=1500, deadline=None)
@given(schemas())
def test_surely_valid_is_never_wrong(schema: Any) -> None:
    if surely_valid(schema):
        assert metaschema_errors(schema) == []


@pytest.mark.parametrize("schema", [
    {"type": "object", "required": ["total"]},
    {"type": "object", "required": ["greeting"], "properties": {"greeting": {"type": "string"}}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "items": {"type": "integer"},
     "minItems": 1, "uniqueItems": True},
    {"type": ["string", "null"], "enum": ["a", None], "description": "d"},
    {"anyOf": [{"type": "number", "minimum": 0, "exclusiveMaximum": 1.5}, {"const": 3}], "$defs": {"x": True}},
    {"properties": {"n": {"type": "integer", "multipleOf": 2}}, "additionalProperties": False,
     "patternProperties": {"^x-": {}}, "not": {"required": ["y"]}},
])
def test_the_schemas_people_write_are_decided_here(schema: dict[str, Any]) -> None:
    assert metaschema_errors(schema) == []
    assert surely_valid(schema)


@pytest.mark.parametrize("schema", [
    {"type": "object", "required": "name"},  # wrong: jsonschema words the message
    {"type": "obj"},
    {"type": ["string", "string"]},
    {"minLength": -1},
    {"minLength": 2.0},  # jsonschema accepts it; only it may say so
    {"multipleOf": 0},
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"},  # another draft's rules
    {"$schema": ["not", "a", "string"]},
    {"items": [{"type": "string"}]},  # draft-07's list form
    {"$ref": "#/definitions/x"},  # not among the keywords decided here
    {"properties": {"a": {"type": "string", "format": "date", "x-extension": 1}}},
])
def test_anything_else_is_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert not surely_valid(schema)


def test_the_message_for_a_bad_schema_is_still_jsonschemas() -> None:
    assert _schema_problem({"type": "object", "required": "name"}) == (
        ["required"], "'name' is not of type 'array'", "required")


def test_validating_a_spec_with_json_schema_checks_does_not_import_jsonschema() -> None:
    """full.eval.yaml has an inline schema and a schema_file: both are decided without jsonschema (~70 ms)."""
    code = ("import sys; from skillmake.commands.cli import main; "
            "code = main(['validate', '--quiet', 'tests/data/valid/full.eval.yaml']); "
            "print(code); print(' '.join(sorted(sys.modules)))")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60)
    status, modules = done.stdout.splitlines()
    assert status == "0", done.stderr
    loaded = {m.split(".")[0] for m in modules.split()}
    assert loaded.isdisjoint({"jsonschema", "referencing", "doit"})
