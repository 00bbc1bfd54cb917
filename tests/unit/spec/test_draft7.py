"""skillmake.spec.draft7 agrees with jsonschema's Draft7Validator: same errors, messages and paths, on every spec."""

from __future__ import annotations

import copy
import random
import tomllib
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from skillmake.core.errors import SpecError
from skillmake.spec import draft7, draft7code
from skillmake.spec.schema import SPEC, load_schema, validator
from skillmake.spec.source import read_source

REPO = Path(__file__).resolve().parents[3]


def _parsed(path: Path) -> Any:
    if path.suffix == ".toml":  # the config schema's examples: a skillmake.toml's top level
        return tomllib.loads(path.read_text())
    return read_source(str(path)).data


def _parseable(paths: list[Path]) -> list[Path]:
    """The files that parse (the corpus's syntax-error cases never reach a validator)."""
    out = []
    for path in paths:
        try:
            _parsed(path)
        except SpecError:
            continue
        out.append(path)
    return out


CORPUS = _parseable([*sorted((REPO / "tests/data").rglob("*.eval.yaml")),
                     *sorted((REPO / "tests/data").rglob("*.eval.json")),
                     *sorted((REPO / "tests/data/schemas/spec").glob("*/*")),
                     *sorted((REPO / "examples").glob("*.eval.*"))])



@pytest.fixture(autouse=True)
def _compiled_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here checks the compiled fast path (draft7code.py) from the first call: by default a schema is
    walked (its error form) for its first calls, and compiled only after (test_the_cold_walk_… below)."""
    monkeypatch.setattr(draft7code, "COLD_CALLS", 0)


def test_the_cold_walk_and_the_compiled_test_agree_and_a_schema_is_compiled_after_its_cold_calls(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(draft7code, "COLD_CALLS", 10**9)
    cold = draft7.Validator(load_schema(SPEC))
    verdicts = [cold.is_valid(_parsed(path)) for path in CORPUS]
    assert all(isinstance(test, draft7code.Lazy) and test.fn is None for test in cold._tests.values())  # walked
    monkeypatch.setattr(draft7code, "COLD_CALLS", 0)
    assert [draft7.Validator(load_schema(SPEC)).is_valid(_parsed(path)) for path in CORPUS] == verdicts
    assert False in verdicts and True in verdicts
    monkeypatch.setattr(draft7code, "COLD_CALLS", 2)
    warm = draft7.Validator(load_schema(SPEC))
    for _ in range(3):
        warm.is_valid(_parsed(CORPUS[0]))
    assert not isinstance(warm._tests[id(warm.root)], draft7code.Lazy)  # compiled, and called directly now


def test_the_corpus_reaches_the_validator() -> None:
    assert len(CORPUS) >= 80


def _key(error: Any) -> tuple[Any, ...]:
    context = tuple(sorted((_key(e) for e in error.context), key=repr))
    return (tuple(error.absolute_path), error.validator, repr(error.validator_value), error.message,
            repr(error.instance), context)


class _Reference:
    """jsonschema's errors (sorted keys) for a schema, each distinct instance validated once. Random edits repeat
    themselves (of the 600 edits of the spec below, 405 differ) and jsonschema spends ~15 ms on an instance of the
    spec, ours under 1 ms: ours still validates every edit; a repeat's reference errors come from memory."""

    def __init__(self, schema: Any) -> None:
        self.validator = Draft7Validator(schema)
        self.known: dict[str, list[tuple[Any, ...]]] = {}

    def keys(self, instance: Any) -> list[tuple[Any, ...]]:
        exact = repr(instance)  # the same repr: the same types, values and key order
        if exact not in self.known:
            self.known[exact] = sorted((_key(e) for e in self.validator.iter_errors(instance)), key=repr)
        return self.known[exact]


def _agree(instance: Any, fast: draft7.Validator | None = None, reference: _Reference | None = None) -> int:
    fast = draft7.Validator(load_schema(SPEC)) if fast is None else fast
    ours = sorted((_key(e) for e in fast.iter_errors(instance)), key=repr)
    assert fast.is_valid(instance) == (not ours)
    theirs = (_Reference(load_schema(SPEC)) if reference is None else reference).keys(instance)
    assert ours == theirs
    return len(ours)


def test_the_spec_schema_uses_the_fast_validator() -> None:
    assert isinstance(validator(SPEC), draft7.Validator)


@pytest.mark.parametrize("path", CORPUS, ids=[str(p.relative_to(REPO)) for p in CORPUS])
def test_agrees_with_jsonschema_on_the_corpus(path: Path) -> None:
    _agree(_parsed(path))


def _mutations(data: Any, rng: random.Random) -> Any:
    """One random edit deep inside `data`: drop, retype or add a key; retype or empty a list item."""
    out = copy.deepcopy(data)
    node = out
    for _ in range(rng.randint(0, 6)):
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        children = [(k, v) for k, v in children if isinstance(v, (dict, list)) and v]
        if not children:
            break
        node = rng.choice(children)[1]
    keys = list(node) if isinstance(node, dict) else list(range(len(node)))
    if not keys:
        return out
    key = rng.choice(keys)
    swaps = [None, True, 0, 1.0, -3, 2.5, "", " ", "x", "5", [], ["x"], {}, {"type": "regex"}, "with_skill", 99]
    action = rng.randrange(3)
    if action == 0 and isinstance(node, dict):
        del node[key]
    elif action == 1 and isinstance(node, dict):
        node[rng.choice(["tirals", "Skill", "promt", "needel", "extra", "type"])] = rng.choice(swaps)
    else:
        node[key] = rng.choice(swaps)
    return out


def test_agrees_with_jsonschema_on_random_edits() -> None:
    rng = random.Random(20261122)
    bases = [read_source(str(REPO / "tests/data/valid" / n)).data
             for n in ("full.eval.yaml", "minimal.eval.yaml", "command_skill.eval.json")]
    fast, reference = draft7.Validator(load_schema(SPEC)), _Reference(load_schema(SPEC))
    failing = 0
    for i in range(600):
        failing += bool(_agree(_mutations(bases[i % len(bases)], rng), fast, reference))
    assert failing > 300  # the edits really break things


@pytest.mark.parametrize("schema", [
    {"items": [{"type": "string"}]},
    {"$ref": "other.json#/x"},
    {"uniqueItems": True},
    {"dependencies": {"a": ["b"]}},
    {"type": "decimal"},
    {"properties": {"a": False}},
])
def test_refuses_what_it_does_not_implement(schema: dict[str, Any]) -> None:
    with pytest.raises(draft7.Unsupported):
        draft7.Validator(schema)


@pytest.mark.parametrize(("schema", "instance"), [
    ({"type": "integer"}, 1.0),
    ({"type": "integer"}, True),
    ({"enum": [1]}, True),
    ({"const": False}, 0),
    ({"const": [1, {"a": True}]}, [1, {"a": 1}]),
    ({"minimum": 0}, False),
    ({"oneOf": [{"type": "string"}, {"minLength": 1}]}, "x"),
    ({"anyOf": [{"type": "string"}, {"type": "null"}]}, 3),
    ({"not": {"type": "string"}}, "x"),
    ({"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "null"}}, 5),
    ({"additionalProperties": False, "patternProperties": {"^x": {}}}, {"y": 1, "z": 2}),
    ({"additionalProperties": {"type": "string"}}, {"y": 1}),
    ({"propertyNames": {"pattern": "^[a-z]+$"}, "maxProperties": 1, "minProperties": 3}, {"A": 1, "b": 2}),
    ({"maxItems": 0, "maxLength": 0}, [1]),
    ({"minItems": 2, "minLength": 2}, "x"),
    (False, {"a": 1}),
    ({"exclusiveMaximum": 3, "maximum": 2}, 3),
])
def test_agrees_on_edge_cases(schema: Any, instance: Any) -> None:
    fast = draft7.Validator(schema)
    ours = sorted((_key(e) for e in fast.iter_errors(instance)), key=repr)
    theirs = sorted((_key(e) for e in Draft7Validator(schema).iter_errors(instance)), key=repr)
    assert ours == theirs
    assert fast.is_valid(instance) == (not ours) == Draft7Validator(schema).is_valid(instance)


SCHEMAS = REPO / "schemas"
EXAMPLES = _parseable(sorted(p for p in (REPO / "tests/data/schemas").glob("*/*/*")
                             if (SCHEMAS / f"{p.parts[-3]}.schema.json").is_file()))


@pytest.mark.parametrize("name", sorted(p.name for p in SCHEMAS.glob("*.schema.json")))
def test_every_shipped_schema_gets_the_fast_validator(name: str) -> None:
    assert isinstance(validator(name), draft7.Validator)


@pytest.mark.parametrize("path", EXAMPLES, ids=[str(p.relative_to(REPO)) for p in EXAMPLES])
def test_agrees_with_jsonschema_on_every_schema_example(path: Path) -> None:
    """The other schemas' good/bad examples (tests/data/schemas/<name>/…): same verdict and errors."""
    schema = load_schema(f"{path.parts[-3]}.schema.json")
    instance = _parsed(path)
    fast = draft7.Validator(schema)
    ours = sorted((_key(e) for e in fast.iter_errors(instance)), key=repr)
    theirs = sorted((_key(e) for e in Draft7Validator(schema).iter_errors(instance)), key=repr)
    assert ours == theirs
    assert fast.is_valid(instance) == (not ours)


@pytest.mark.parametrize("name", sorted({p.parts[-3] for p in EXAMPLES if p.parts[-2] == "good"}))
def test_agrees_with_jsonschema_on_random_edits_of_every_schema(name: str) -> None:
    schema = load_schema(f"{name}.schema.json")
    fast, reference = draft7.Validator(schema), _Reference(schema)
    bases = [_parsed(p) for p in EXAMPLES if p.parts[-3] == name and p.parts[-2] == "good"]
    rng = random.Random(name)
    for i in range(300):
        instance = _mutations(bases[i % len(bases)], rng)
        ours = sorted((_key(e) for e in fast.iter_errors(instance)), key=repr)
        assert ours == reference.keys(instance)
        assert fast.is_valid(instance) == (not ours)
