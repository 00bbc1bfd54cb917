"""The result-file schemas against their example files: every good one validates, every bad one fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from skillmake.spec.schema import validator

REPO = Path(__file__).resolve().parents[3]
NAMES = ("report", "benchmark", "grading", "timing", "history", "trial-record", "grade-record", "eval-metadata",
         "eva-history", "promotion", "snapshot", "run-output", "feedback", "comparison", "comparison-record",
         "judge-noise", "rejudge-record", "description-optimization", "description-proposal")
EXAMPLES = REPO / "tests" / "data" / "schemas"


def schema(name: str) -> dict[str, object]:
    return dict(json.loads((REPO / "schemas" / f"{name}.schema.json").read_text()))


def examples(kind: str) -> list[tuple[str, Path]]:
    return [(name, path) for name in NAMES for path in sorted((EXAMPLES / name / kind).glob("*.json"))]


@pytest.mark.parametrize("name", NAMES)
def test_schema_is_draft_07_with_examples(name: str) -> None:
    s = schema(name)
    assert s["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert s["$id"] == f"https://skillmake.dev/schemas/{name}.schema.json"
    Draft7Validator.check_schema(s)
    assert list((EXAMPLES / name / "good").glob("*.json")), f"no good examples for {name}"
    assert len(list((EXAMPLES / name / "bad").glob("*.json"))) >= 3, f"too few bad examples for {name}"


@pytest.mark.parametrize(("name", "path"), examples("good"), ids=[f"{n}/{p.stem}" for n, p in examples("good")])
def test_good_example_validates(name: str, path: Path) -> None:
    data = json.loads(path.read_text())
    assert [e.message for e in Draft7Validator(schema(name)).iter_errors(data)] == []
    assert validator(f"{name}.schema.json").is_valid(data)  # skillmake's own validator (draft7.py) agrees


@pytest.mark.parametrize(("name", "path"), examples("bad"), ids=[f"{n}/{p.stem}" for n, p in examples("bad")])
def test_bad_example_fails(name: str, path: Path) -> None:
    data = json.loads(path.read_text())
    assert list(Draft7Validator(schema(name)).iter_errors(data)), f"{path.name} should not validate against {name}"
    assert not validator(f"{name}.schema.json").is_valid(data)


@pytest.mark.parametrize("name", ["report", "history", "snapshot", "run-output", "feedback", "comparison",
                                  "comparison-record", "judge-noise", "rejudge-record", "description-optimization",
                                  "description-proposal"])
def test_our_formats_are_closed(name: str) -> None:
    """Formats skillmake owns reject unknown keys at the top level (skill-creator's stay open)."""
    assert schema(name)["additionalProperties"] is False
