"""The shipped JSON Schemas: finding them, validating data, and turning errors into SpecErrors."""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillmake.core.errors import Location, RecordError, SpecError
from skillmake.spec import draft7
from skillmake.spec.source import Source, escape

if TYPE_CHECKING:
    from pathlib import Path

SPEC = "spec.schema.json"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$")


def schema_dir() -> Path:
    """Where the schemas are: inside the installed package, or the repository's schemas/."""
    from pathlib import Path

    return Path(_schema_folder())


@functools.cache
def _schema_folder() -> str:
    # os.path, not pathlib: importing pathlib costs ~5 ms on the editor-save path (validate FILE)
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # skillmake/ (this file: spec/)
    packaged = os.path.join(package, "schemas")
    if os.path.isdir(packaged):
        return packaged
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    return os.path.join(checkout, "schemas")


def schema_path(name: str) -> str:
    return os.path.join(_schema_folder(), name)


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    # stdlib json, not orjson: importing orjson costs ~5 ms on the editor-save path, parsing ~1 ms either way
    with open(schema_path(name), "rb") as f:
        return dict(json.loads(f.read()))


@functools.cache
def validator(name: str, *, strict_integers: bool = False) -> Any:
    """A validator for shipped schema `name`: the fast exact one when it can, else jsonschema's.

    `strict_integers` (specs): an "integer" must be written as one; `2.0` is refused (draft7.Validator)."""
    schema = load_schema(name)
    if schema.get("$schema", "").startswith("http://json-schema.org/draft-07/"):
        try:
            return draft7.Validator(schema, strict_integers=strict_integers)
        except draft7.Unsupported:
            pass  # a keyword the fast validator does not implement exactly: jsonschema decides
    return reference_validator(schema, strict_integers=strict_integers)


def reference_validator(schema: dict[str, Any], *, strict_integers: bool = False) -> Any:
    """jsonschema's own validator for `schema` (its draft from `$schema`, else draft-07)."""
    from jsonschema import Draft7Validator, validators

    cls = validators.validator_for(schema, default=Draft7Validator)
    if strict_integers:
        checker = cls.TYPE_CHECKER.redefine(
            "integer", lambda _checker, x: isinstance(x, int) and not isinstance(x, bool))
        cls = validators.extend(cls, type_checker=checker)
    return cls(schema)


def validate_record(name: str, data: Any, *, what: str) -> None:
    """Raise RecordError when `data` does not match schema `name` (records written and read)."""
    error = next(iter(validator(name).iter_errors(data)), None)
    if error is not None:
        pointer = "".join(f"/{escape(p)}" for p in error.absolute_path)
        raise RecordError(f"{what} does not match {name} at {pointer or '/'}: {error.message}",
                          hint="this is a bug in skillmake or a hand-edited file; delete the file to rebuild it")


def spec_errors(src: Source, name: str = SPEC) -> list[SpecError]:
    """Every schema violation in a parsed spec, as located, actionable errors (each reported once)."""
    found: list[_Found] = []
    for error in validator(name, strict_integers=True).iter_errors(src.data):
        found.extend(_translate(error, src))
    flagged = {f.pointer for f in found}
    found.extend(_Found(_not_finite(value, src.locate(pointer))) for pointer, value in _non_finite(src.data, "")
                 if pointer not in flagged)
    # A misspelt (or retired) key also makes its correct spelling "missing": report the misspelling only.
    meant = {(_parent(f.pointer), key) for f in found for key in f.suggests}
    out: list[SpecError] = []
    seen: set[tuple[str, str]] = set()
    for f in found:
        item, pointer = f.error, f.pointer
        if any((pointer, key) in meant for key in f.missing):
            continue
        ident = (pointer, item.message)
        if ident not in seen:
            seen.add(ident)
            out.append(item)
    return out


def _parent(pointer: str) -> str:
    return pointer.rsplit("/", 1)[0]


def _pointer(path: Iterable[Any]) -> str:
    return "".join(f"/{escape(p)}" for p in path)


@dataclass(frozen=True, slots=True)
class _Found:
    """A translated error, the keys it suggests (unknown and retired keys), and the keys it reports missing."""

    error: SpecError
    suggests: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()

    @property
    def pointer(self) -> str:
        return self.error.loc.pointer if self.error.loc else ""


def _required_only(schemas: Any) -> bool:
    return isinstance(schemas, list) and all(isinstance(s, dict) and set(s) == {"required"} for s in schemas)


def _translate(error: Any, src: Source) -> list[_Found]:
    """One jsonschema-shaped error → located SpecErrors, each with the key it suggests (if any)."""
    pointer = _pointer(error.absolute_path)
    kind = error.validator
    schema = error.schema
    instance = error.instance
    if kind == "additionalProperties" and isinstance(instance, dict):
        return [_unknown_key(key, schema, pointer, src) for key in sorted(set(instance) - set(schema.get(
            "properties", {})), key=str)]
    if kind == "enum":
        what = _article(schema["title"]) if isinstance(schema.get("title"), str) else _enum_noun(pointer)
        choices = ["null" if v is None else str(v) for v in error.validator_value]  # as a JSON/YAML user writes it
        guess = _closest(str(instance), choices)
        hint = f"did you mean {guess!r}?" if guess else _choices(choices, "choose one of")
        return [_Found(SpecError(f"{instance!r} is not {what}", loc=src.locate(pointer), hint=hint))]
    if kind == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return [_Found(SpecError(f"missing required key {missing!r}", loc=src.locate(pointer, key=True),
                                 hint=_required_hint(missing, schema)), missing=(missing,))]
    if kind == "type":
        expected = error.validator_value
        expected = [expected] if isinstance(expected, str) else list(expected)
        found = _type_error(expected, instance, src.locate(pointer))
        if instance is None and pointer.rsplit("/", 1)[-1].isdigit():  # an empty `-` line in a list
            found = SpecError(found.message, loc=found.loc, hint="write the item after the '-', or delete the line")
        return [_Found(found)]
    if kind in ("anyOf", "oneOf") and _required_only(schema.get(kind)):
        if not isinstance(instance, dict):  # `required` ignores non-objects; the type error says it all
            return []
        keys = [s["required"][0] for s in schema[kind]]
        shown = ", ".join(repr(k) for k in keys)
        if any(k in instance for k in keys):  # oneOf, several present
            return [_Found(SpecError(f"set only one of {shown}", loc=src.locate(pointer, key=True),
                               hint=f"keep exactly one of {' / '.join(keys)}"))]
        return [_Found(SpecError(f"needs one of {shown}", loc=src.locate(pointer, key=True),
                                 hint=_required_hint(keys[0], schema, instead=keys[1:]) if kind == "anyOf"
                                 else f"add one of {' / '.join(keys)}"),
                       missing=tuple(keys))]
    if kind in ("oneOf", "anyOf") and error.context:
        here = [e for e in error.context if _pointer(e.absolute_path) == pointer]
        deeper = [e for e in error.context if _pointer(e.absolute_path) != pointer]
        if here and all(e.validator == "type" for e in here) and deeper:
            # One alternative had the right type and failed inside (`command: [python3, 5]`): its errors are
            # the real ones, at the item, not "expected a string" at the list.
            return [f for e in deeper for f in _translate(e, src)]
        if here and all(e.validator == "type" for e in here):
            expected = []
            for e in here:
                value = e.validator_value
                expected.extend([value] if isinstance(value, str) else value)
            return [_Found(_type_error(expected, instance, src.locate(pointer)))]
        best = min(error.context, key=lambda e: len(list(e.absolute_path)))
        return _translate(best, src)
    if kind == "minItems":
        return [_Found(SpecError(f"needs at least {error.validator_value} item(s)", loc=src.locate(pointer),
                           hint="add an entry, or remove the key"))]
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if isinstance(instance, float) and not math.isfinite(instance):
            return [_Found(_not_finite(instance, src.locate(pointer)))]
        bound = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[kind]
        return [_Found(SpecError(f"{instance!r} is out of range: must be {bound} {error.validator_value}",
                           loc=src.locate(pointer), hint=f"use a value {bound} {error.validator_value}"))]
    if kind in ("minLength", "pattern") and isinstance(instance, str):
        if not instance.strip():
            return [_Found(SpecError("must not be empty", loc=src.locate(pointer),
                               hint="write a value, or remove the key"))]
        return [_Found(SpecError(f"{instance!r} is not a valid name here", loc=src.locate(pointer),
                           hint="use letters, digits, '_', '.', '-' (starting with a letter or digit)"))]
    if kind == "not" and error.validator_value == {}:
        return [_retired(pointer, schema, src)]
    if kind == "not":
        return [_Found(SpecError(f"{instance!r} is reserved", loc=src.locate(pointer),
                           hint="with_skill and without_skill are built-in arms; choose another name"))]
    return [_Found(SpecError(error.message, loc=src.locate(pointer), hint=None))]


def _retired(pointer: str, schema: dict[str, Any], src: Source) -> _Found:
    """A key a schema keeps only to refuse it (`"not": {}`), its description saying what replaced it: one error,
    and no "missing" error for the keys it names in backticks (clauditor's `value` → `needle`)."""
    key = pointer.rsplit("/", 1)[-1]
    hint = schema.get("description") or "remove it"
    return _Found(SpecError(f"{key!r} is a retired key", loc=src.locate(pointer, key=True), hint=hint),
                  tuple(re.findall(r"`([^`]+)`", hint)))


def _unknown_key(key: str, schema: dict[str, Any], pointer: str, src: Source) -> _Found:
    """An unknown key, with the likeliest fix: the same key in another case, the place where this key belongs
    (`input_files` at the top level belongs in a case), or the key it misspells."""
    allowed = sorted(schema.get("properties", {}))
    loc = src.locate(f"{pointer}/{escape(key)}", key=True)
    folded = _closest(key, allowed, cutoff=1.0)
    if folded:
        return _Found(SpecError(f"unknown key {key!r}", loc=loc, hint=f"did you mean {folded!r}?"), (folded,))
    places = _places()
    here = places.get(id(schema))
    if here is not None:
        elsewhere = [place for place in _ordered_places() if key in place.keys and place is not here]
        if here.check is not None and elsewhere and all(p.check is not None for p in elsewhere):
            types = [p.check for p in elsewhere if p.check]
            own = ", ".join(k for k in allowed if k not in ("type", "id", "name", "file")) or "no other keys"
            return _Found(SpecError(f"{key!r} is not a key of a {here.check} check", loc=loc,
                                    hint=f"{key!r} belongs to {_listed(types)} checks; a {here.check} check takes "
                                         f"{own}"))
        if elsewhere:
            there = next((p for p in elsewhere if p.check is None), elsewhere[0])
            return _Found(SpecError(f"{key!r} belongs {there.label}, not {here.label}", loc=loc, hint=there.move))
        seed = _seed_key(key)
        if seed:  # before the fuzzy match: clauditor's `variance` is not a misspelt `variants`
            return _Found(SpecError(f"unknown key {key!r}", loc=loc, hint=seed))
    guess = _closest(key, allowed)
    hint = f"did you mean {guess!r}?" if guess else _choices(allowed, "keys allowed here")
    return _Found(SpecError(f"unknown key {key!r}", loc=loc, hint=hint), (guess,) if guess else ())


def _seed_key(key: str) -> str | None:
    """The hint for another tool's key written in a skillmake spec: what skillmake writes instead."""
    # only on this error path
    from skillmake.spec.adapters.detect import CLAUDITOR_KEYS  # only on this error path

    native = CLAUDITOR_KEYS.get(key)
    if native is None:
        return None
    return f"{key!r} is a clauditor key (a <skill>.eval.json); a skillmake spec writes {native}"


@dataclass(frozen=True, slots=True)
class _Place:
    """A level of the spec: which keys it takes, how a person names it, and how to move a key there."""

    keys: frozenset[str]
    label: str
    move: str
    check: str | None = None  # the check type, for a check level


_PLACES = (  # (definition, label, how to move a key there), in the order a key is looked for
    ("case", "in a case", "move it into the case it is for (an item of 'cases', indented like its 'id')"),
    ("agent", "in 'agent'", "move it under 'agent:'"),
    ("judge", "in 'judge'", "move it under 'judge:'"),
    ("thresholds", "in 'thresholds'", "move it under 'thresholds:'"),
    ("variant", "in a variant", "move it into the variant it is for (an item of 'variants')"),
    ("section", "in a section", "move it into the section it is for (an item of a case's 'sections')"),
    ("criterion", "in a criterion", "move it into the criterion it is for (an item of a case's 'criteria')"),
)


@functools.cache
def _places() -> dict[int, _Place]:
    """Every object level of the spec schema, by the identity of its schema (as validation errors carry it)."""
    schema = load_schema(SPEC)
    defs = schema.get("definitions", {})
    out: dict[int, _Place] = {id(schema): _Place(frozenset(schema.get("properties", {})), "at the top level",
                                                 "move it to the top level of the spec (not indented)")}
    for key, sub in schema.get("properties", {}).items():
        if isinstance(sub, dict) and "properties" in sub:
            out[id(sub)] = _Place(frozenset(sub["properties"]), f"in {key!r}", f"move it under '{key}:'")
    for name, label, move in _PLACES:
        if name in defs:
            out[id(defs[name])] = _Place(frozenset(defs[name].get("properties", {})), label, move)
    if "agent" in defs and "agent_override" in defs:
        out[id(defs["agent_override"])] = out[id(defs["agent"])]
    for name, sub in defs.items():
        if name.startswith("check_") and isinstance(sub, dict):
            kind = name[len("check_"):]
            out[id(sub)] = _Place(frozenset(sub.get("properties", {})), f"in a {kind} check",
                                  "move it into the check it is for (an item of a case's 'checks')", check=kind)
    return out


@functools.cache
def _ordered_places() -> tuple[_Place, ...]:
    seen: list[_Place] = []
    for place in _places().values():
        if place not in seen:
            seen.append(place)
    order = {label: i for i, (_, label, _) in enumerate(_PLACES)}
    return tuple(sorted(seen, key=lambda p: (p.check is not None, order.get(p.label, -1))))


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _non_finite(value: Any, pointer: str) -> Iterable[tuple[str, float]]:
    """Every NaN and ±infinity in parsed data (YAML .nan/.inf, JSON 1e999), with its pointer.

    No field means them: a NaN timeout errs every trial, and canonical JSON writes NaN as null (one key for
    different specs). So they are refused anywhere, not only where the schema says "number"."""
    if isinstance(value, float) and not math.isfinite(value):
        yield pointer, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _non_finite(item, f"{pointer}/{escape(key)}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _non_finite(item, f"{pointer}/{i}")


def _not_finite(value: float, loc: Location) -> SpecError:
    shown = "NaN" if math.isnan(value) else "infinity" if value > 0 else "-infinity"
    return SpecError(f"{shown} is not allowed: expected a finite number", loc=loc,
                     hint="write a finite number (YAML's .nan and .inf, and JSON numbers too large for a "
                          "float, are refused)")


def _type_error(expected: list[str], instance: Any, loc: Location) -> SpecError:
    if isinstance(instance, float) and not math.isfinite(instance) and {"number", "integer"} & set(expected):
        return _not_finite(instance, loc)
    wanted = " or ".join(_article(t) for t in expected)
    got = _json_type(instance)
    got = got if got == "null" else f"{got} {_short(instance)}" if _short(instance) else _article(got)
    hint = _type_hint(expected, instance)
    return SpecError(f"expected {wanted}, got {got}", loc=loc, hint=hint)


def _closest(word: str, choices: list[str], *, cutoff: float = 0.7) -> str | None:
    """The choice `word` most likely misspells: same letters in another case, else a close match (none when
    `cutoff` is 1)."""
    folded = [c for c in choices if c.lower() == word.lower()]
    if folded:
        return folded[0]
    if cutoff >= 1.0:
        return None
    import difflib  # only for a misspelt keyword

    close = difflib.get_close_matches(word, choices, n=1, cutoff=cutoff)
    return close[0] if close else None


def _choices(choices: list[str], label: str) -> str:
    shown = ", ".join(choices[:30]) + (", …" if len(choices) > 30 else "")
    return f"{label}: {shown}"


def _enum_noun(pointer: str) -> str:
    if pointer.endswith("/type") and "/checks/" in pointer:
        return "a check type"
    if pointer.endswith("/kind"):
        return "an agent kind"
    if pointer.endswith("/provider"):
        return "a judge provider"
    return "an allowed value"


_PLACEHOLDERS = {"string": "…", "integer": "<integer>", "number": "<number>", "boolean": "true or false",
                 "array": "[…]", "object": "{…}"}


_NAMES = frozenset({"Python", "Claude", "Codex", "Anthropic", "Markdown"})  # a description may start with a name


def _required_hint(missing: str, schema: dict[str, Any], *, instead: Iterable[str] = ()) -> str:
    """A fix to copy: the key with a value it takes (the first allowed one, the others named), then what it is —
    `add kind: command (or claude-code, codex, anthropic, openai) — what executes a trial`."""
    prop = schema.get("properties", {}).get(missing, {})
    if "const" in prop:
        value = str(prop["const"])
    elif prop.get("examples"):
        example = prop["examples"][0]
        value = example if isinstance(example, str) else json.dumps(example, ensure_ascii=False)
    elif prop.get("enum"):
        first, *rest = (str(v) for v in prop["enum"])
        value = first + (f" (or {', '.join(rest)})" if rest else "")
    else:
        kind = prop.get("type")
        value = _PLACEHOLDERS.get(kind[0] if isinstance(kind, list) and kind else kind, "…")
    others = ", ".join(instead)
    desc = _first_sentence(str(prop.get("description") or ""))
    return f"add {missing}: {value}" + (f" (or {others} instead)" if others else "") + (f" — {desc}" if desc else "")


def _first_sentence(text: str) -> str:
    """A description's first sentence as a clause: no closing period, a capital lowered unless it starts a name."""
    sentence = text.strip().split(". ", 1)[0].rstrip(".")
    first = sentence.split(" ", 1)[0]
    if first[:1].isupper() and (first[1:].islower() or len(first) == 1) and first not in _NAMES:
        sentence = sentence[0].lower() + sentence[1:]
    return sentence


def _type_hint(expected: list[str], instance: Any) -> str:
    if instance is None:
        return "write a value, or remove the key"
    numeric = "integer" in expected or "number" in expected
    if "integer" in expected and "number" not in expected and isinstance(instance, float) and instance.is_integer():
        return f"write {int(instance)} (an integer, without a decimal point)"
    if numeric and isinstance(instance, str) and _NUMBER.match(instance.strip()):
        return f"write the number without quotes: {instance.strip()}"
    if "boolean" in expected and isinstance(instance, str):
        return "write true or false (without quotes)"
    if "array" in expected and isinstance(instance, str):
        return f"make it a list: [{instance!r}]"
    if "object" in expected and isinstance(instance, str):
        return "write a mapping (key: value lines), not a plain string"
    return "use " + " or ".join(_article(t) for t in expected)


def _article(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, (dict, list)) and value is not None else ""
    return text if len(text) <= 40 else text[:37] + "…"


def schema_names() -> list[str]:
    return sorted(n for n in os.listdir(schema_dir()) if n.endswith(".schema.json"))
