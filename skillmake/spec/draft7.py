"""A small, exact JSON Schema draft-07 validator for the keywords skillmake's own schemas use.

Why: `import jsonschema` (+ referencing, attrs, rpds) costs ~70 ms, half the budget of the editor-save
`skillmake validate` path. This module reproduces jsonschema's Draft7Validator for a subset of keywords —
same errors, same messages, same `validator`/`validator_value`/`instance`/`schema`/`absolute_path`/`context`
— and refuses (`Unsupported`) any schema using something else, so callers fall back to jsonschema.
tests/unit/test_draft7.py proves the two agree on every spec in the test corpus, good and bad.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from skillmake.spec.draft7code import Generator, Lazy
from skillmake.spec.draft7code import Test as _Test

_ANNOTATIONS = frozenset(("$schema", "$id", "$comment", "title", "description", "default", "examples",
                          "definitions", "format", "readOnly", "writeOnly", "contentMediaType",
                          "contentEncoding"))


class Unsupported(Exception):
    """The schema uses a keyword or reference this validator does not implement exactly."""


class Error:
    """One violation, shaped like jsonschema's ValidationError where skillmake reads it."""

    __slots__ = ("absolute_path", "context", "instance", "message", "schema", "validator", "validator_value")

    def __init__(self, message: str, path: tuple[Any, ...], *, context: list[Error] | None = None) -> None:
        self.message = message
        self.absolute_path = path
        self.context = context or []
        self.validator: str | None = None
        self.validator_value: Any = None
        self.instance: Any = None
        self.schema: Any = None

    def __repr__(self) -> str:
        return f"<Error {self.validator} at {list(self.absolute_path)}: {self.message}>"


_Errors = Iterator[Error]


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "number": _is_number,
    # draft-06+: 1.0 is an integer
    "integer": lambda x: (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer()),
}
# `strict_integers`: an integer is what was written as one. A spec's `trials: 2.0` is a mistake that reaches
# range() and crashes; the value-based draft-06+ rule above cannot see it.
_STRICT_TYPES = {**_TYPES, "integer": lambda x: isinstance(x, int) and not isinstance(x, bool)}


def equal(one: Any, two: Any) -> bool:
    """JSON equality: True is not 1, recursively (jsonschema._utils.equal)."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(equal(one[k], two[k]) for k in one)
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    return bool(one == two)


class Validator:
    """Validates instances against one draft-07 schema; construct raises Unsupported when it can't be exact.

    With `strict_integers`, "integer" accepts only values parsed as integers (2.0 is a number, not an integer):
    the one deliberate departure from jsonschema, for specs (schema.reference_validator does the same there).
    """

    def __init__(self, schema: Any, *, strict_integers: bool = False) -> None:
        self.root = schema
        self.types = _STRICT_TYPES if strict_integers else _TYPES
        self._refs: dict[str, Any] = {}
        self._tests: dict[int, _Test] = {}
        self._check(schema, set(), root=True)

    # --- public -------------------------------------------------------------

    def iter_errors(self, instance: Any) -> _Errors:
        if self._valid(instance, self.root):  # the common case, without building any error
            return iter(())
        return self._errors(instance, self.root, ())

    def is_valid(self, instance: Any) -> bool:
        return self._valid(instance, self.root)

    # --- support check ------------------------------------------------------

    def _check(self, schema: Any, seen: set[int], *, root: bool = False) -> None:
        if schema is False and not root:
            # jsonschema drops the last path segment of errors from a `false` subschema; not worth copying.
            raise Unsupported("a false subschema")
        if isinstance(schema, bool):
            return
        if not isinstance(schema, dict):
            raise Unsupported(f"schema is not an object: {schema!r}")
        if id(schema) in seen:
            return
        seen.add(id(schema))
        for key, value in schema.items():
            if key == "$ref":
                self._check(self._resolve(value), seen)
            elif key in _ANNOTATIONS:
                if key == "definitions":
                    for sub in value.values():
                        self._check(sub, seen)
            elif key in ("properties", "patternProperties"):
                for sub in value.values():
                    self._check(sub, seen)
                if key == "patternProperties":
                    for pattern in value:
                        re.compile(pattern)
            elif key in ("additionalProperties", "items", "not", "if", "then", "else", "propertyNames"):
                if key == "items" and isinstance(value, list):
                    raise Unsupported("tuple 'items'")
                if not (key == "additionalProperties" and value is False):  # a keyword of its own, not a descent
                    self._check(value, seen)
            elif key in ("allOf", "anyOf", "oneOf"):
                for sub in value:
                    self._check(sub, seen)
            elif key == "type":
                for name in [value] if isinstance(value, str) else value:
                    if name not in _TYPES:
                        raise Unsupported(f"type {name!r}")
            elif key == "pattern":
                re.compile(value)
            elif key not in _KEYWORDS:
                raise Unsupported(f"keyword {key!r}")

    def _resolve(self, ref: str) -> Any:
        found = self._refs.get(ref)
        if found is None:
            found = self._refs[ref] = self._lookup(ref)
        return found

    def _lookup(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise Unsupported(f"non-local $ref {ref!r}")
        node = self.root
        for token in ref[1:].split("/")[1:] if ref != "#" else []:
            token = token.replace("~1", "/").replace("~0", "~")
            if "%" in token:
                raise Unsupported(f"percent-encoded $ref {ref!r}")
            try:
                node = node[int(token)] if isinstance(node, list) else node[token]
            except (KeyError, IndexError, ValueError, TypeError):
                raise Unsupported(f"unresolvable $ref {ref!r}") from None
        return node

    # --- validation ---------------------------------------------------------

    def _valid(self, instance: Any, schema: Any) -> bool:
        """Whether `instance` is valid: the same rules as `_errors`, compiled to Python (draft7code.py)."""
        return self._compiled(schema)(instance)

    def _compiled(self, schema: Any) -> _Test:
        test = self._tests.get(id(schema))
        if test is None:
            test = self._tests[id(schema)] = Lazy(schema, walk=self._walk, generate=self._generate)
        return test

    def _walk(self, instance: Any, schema: Any) -> bool:
        return next(self._errors(instance, schema, ()), None) is None

    def _generate(self, schema: Any) -> _Test:
        return Generator(known=self._tests, resolve=self._resolve, strict=self.types is _STRICT_TYPES,
                         equal=equal, make=self._compiled).compile(schema)

    def _errors(self, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
        if schema is True:
            return
        if schema is False:
            error = Error(f"False schema does not allow {instance!r}", path)
            error.instance, error.schema = instance, schema
            yield error
            return
        if "$ref" in schema:  # draft-07: siblings of $ref are ignored
            yield from self._errors(instance, self._resolve(schema["$ref"]), path)
            return
        for key, value in schema.items():
            fn = _KEYWORDS.get(key)
            if fn is None:
                continue
            for error in fn(self, value, instance, schema, path):
                if error.validator is None and error.schema is None:
                    error.validator, error.validator_value = key, value
                    error.instance, error.schema = instance, schema
                yield error


def _type(v: Validator, types: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    names = [types] if isinstance(types, str) else types
    if not any(v.types[name](instance) for name in names):
        yield Error(f"{instance!r} is not of type {', '.join(repr(n) for n in names)}", path)


def _properties(v: Validator, props: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    if isinstance(instance, dict):
        for name, sub in props.items():
            if name in instance:
                yield from v._errors(instance[name], sub, (*path, name))


def _pattern_properties(v: Validator, props: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    if isinstance(instance, dict):
        for pattern, sub in props.items():
            for name, value in instance.items():
                if re.search(pattern, name):
                    yield from v._errors(value, sub, (*path, name))


def _additional(v: Validator, ap: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    if not isinstance(instance, dict):
        return
    props = schema.get("properties", {})
    patterns = "|".join(schema.get("patternProperties", {}))
    extras = [k for k in instance if k not in props and not (patterns and re.search(patterns, k))]
    if isinstance(ap, dict):
        for extra in extras:
            yield from v._errors(instance[extra], ap, (*path, extra))
    elif not ap and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(e) for e in sorted(extras))
            shown = ", ".join(repr(p) for p in sorted(schema["patternProperties"]))
            yield Error(f"{joined} {verb} not match any of the regexes: {shown}", path)
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield Error(f"Additional properties are not allowed "
                        f"({', '.join(repr(e) for e in sorted(extras, key=str))} {verb} unexpected)", path)


def _property_names(v: Validator, sub: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    if isinstance(instance, dict):
        for name in instance:
            yield from v._errors(name, sub, path)


def _required(v: Validator, names: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    if isinstance(instance, dict):
        for name in names:
            if name not in instance:
                yield Error(f"{name!r} is a required property", path)


def _items(v: Validator, sub: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    if isinstance(instance, list):
        for i, item in enumerate(instance):
            if not v._valid(item, sub):
                yield from v._errors(item, sub, (*path, i))


def _const(v: Validator, value: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    if not equal(instance, value):
        yield Error(f"{value!r} was expected", path)


def _enum(v: Validator, values: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    if all(not equal(each, instance) for each in values):
        yield Error(f"{instance!r} is not one of {values!r}", path)


def _bound(message: str, failed: Callable[[Any, Any], bool]) -> Callable[..., _Errors]:
    def check(v: Validator, bound: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
        if _is_number(instance) and failed(instance, bound):
            yield Error(f"{instance!r} {message} {bound!r}", path)
    return check


def _size(kind: Callable[[Any], bool], *, too_few: bool, zero_or_one: str, other: str) -> Callable[..., _Errors]:
    def check(v: Validator, limit: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
        if kind(instance) and (len(instance) < limit if too_few else len(instance) > limit):
            special = 1 if too_few else 0
            yield Error(f"{instance!r} {zero_or_one if limit == special else other}", path)
    return check


def _pattern(v: Validator, pattern: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    if isinstance(instance, str) and not re.search(pattern, instance):
        yield Error(f"{instance!r} does not match {pattern!r}", path)


def _all_of(v: Validator, subs: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    for sub in subs:
        yield from v._errors(instance, sub, path)


def _any_of(v: Validator, subs: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    collected: list[Error] = []
    if any(v._valid(instance, sub) for sub in subs):
        return
    for sub in subs:
        collected.extend(v._errors(instance, sub, path))
    yield Error(f"{instance!r} is not valid under any of the given schemas", path, context=collected)


def _one_of(v: Validator, subs: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    collected: list[Error] = []
    first_valid = None
    rest = iter(subs)
    for sub in rest:
        if v._valid(instance, sub):
            first_valid = sub
            break
        collected.extend(v._errors(instance, sub, path))
    else:
        yield Error(f"{instance!r} is not valid under any of the given schemas", path, context=collected)
    more = [sub for sub in rest if v._valid(instance, sub)]
    if more:
        more.append(first_valid)
        yield Error(f"{instance!r} is valid under each of {', '.join(repr(s) for s in more)}", path)


def _not(v: Validator, sub: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    if v._valid(instance, sub):
        yield Error(f"{instance!r} should not be valid under {sub!r}", path)


def _if(v: Validator, sub: Any, instance: Any, schema: Any, path: tuple[Any, ...]) -> _Errors:
    if v._valid(instance, sub):
        if "then" in schema:
            yield from v._errors(instance, schema["then"], path)
    elif "else" in schema:
        yield from v._errors(instance, schema["else"], path)


def _is_string(x: Any) -> bool:
    return isinstance(x, str)


def _is_array(x: Any) -> bool:
    return isinstance(x, list)


def _is_object(x: Any) -> bool:
    return isinstance(x, dict)


_KEYWORDS: dict[str, Callable[..., _Errors]] = {
    "type": _type,
    "properties": _properties,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional,
    "propertyNames": _property_names,
    "required": _required,
    "items": _items,
    "const": _const,
    "enum": _enum,
    "minimum": _bound("is less than the minimum of", lambda i, b: i < b),
    "maximum": _bound("is greater than the maximum of", lambda i, b: i > b),
    "exclusiveMinimum": _bound("is less than or equal to the minimum of", lambda i, b: i <= b),
    "exclusiveMaximum": _bound("is greater than or equal to the maximum of", lambda i, b: i >= b),
    "minLength": _size(_is_string, too_few=True, zero_or_one="should be non-empty", other="is too short"),
    "maxLength": _size(_is_string, too_few=False, zero_or_one="is expected to be empty", other="is too long"),
    "minItems": _size(_is_array, too_few=True, zero_or_one="should be non-empty", other="is too short"),
    "maxItems": _size(_is_array, too_few=False, zero_or_one="is expected to be empty", other="is too long"),
    "minProperties": _size(_is_object, too_few=True, zero_or_one="should be non-empty",
                           other="does not have enough properties"),
    "maxProperties": _size(_is_object, too_few=False, zero_or_one="is expected to be empty",
                           other="has too many properties"),
    "pattern": _pattern,
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "not": _not,
    "if": _if,
}
