"""The optimiser's schemas (the result file and the proposal record) against their example files: every good one
validates, every bad one fails, and both are closed, draft-07, with a stable id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from skillmake.canonical import digest_json
from skillmake.schema import validator

REPO = Path(__file__).resolve().parents[2]
NAMES = ("description-optimization", "description-proposal")
EXAMPLES = REPO / "tests" / "data" / "schemas"


def schema(name: str) -> dict[str, object]:
    return dict(json.loads((REPO / "schemas" / f"{name}.schema.json").read_text()))


def examples(kind: str) -> list[tuple[str, Path]]:
    return [(name, path) for name in NAMES for path in sorted((EXAMPLES / name / kind).glob("*.json"))]


@pytest.mark.parametrize("name", NAMES)
def test_schema_is_closed_draft_07_with_examples(name: str) -> None:
    s = schema(name)
    assert s["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert s["$id"] == f"https://skillmake.dev/schemas/{name}.schema.json"
    assert s["additionalProperties"] is False
    Draft7Validator.check_schema(s)
    assert list((EXAMPLES / name / "good").glob("*.json"))
    assert len(list((EXAMPLES / name / "bad").glob("*.json"))) >= 3


@pytest.mark.parametrize(("name", "path"), examples("good"), ids=[f"{n}/{p.stem}" for n, p in examples("good")])
def test_good_example_validates(name: str, path: Path) -> None:
    data = json.loads(path.read_text())
    assert [e.message for e in Draft7Validator(schema(name)).iter_errors(data)] == []
    assert validator(f"{name}.schema.json").is_valid(data)  # skillmake's own fast validator agrees


@pytest.mark.parametrize(("name", "path"), examples("bad"), ids=[f"{n}/{p.stem}" for n, p in examples("bad")])
def test_bad_example_fails(name: str, path: Path) -> None:
    data = json.loads(path.read_text())
    assert list(Draft7Validator(schema(name)).iter_errors(data)), f"{path.name} should not validate"
    assert not validator(f"{name}.schema.json").is_valid(data)


def test_the_proposal_example_is_stored_under_the_digest_of_its_inputs() -> None:
    record = json.loads((EXAMPLES / "description-proposal" / "good" / "proposal.json").read_text())
    assert record["key"] == digest_json(record["inputs"])
