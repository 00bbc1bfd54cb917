"""schemas/spec.schema.json against its example files, with plain jsonschema: good ones pass, bad ones fail."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from skillmake.spec.source import read_source

REPO = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((REPO / "schemas" / "spec.schema.json").read_text())
EXAMPLES = REPO / "tests" / "data" / "schemas" / "spec"
GOOD = sorted((EXAMPLES / "good").iterdir())
BAD = sorted((EXAMPLES / "bad").iterdir())


def load(path: Path) -> object:
    # YAML as skillmake (and the YAML 1.2 editors) read it: `yes` is a string, not a boolean.
    return read_source(str(path)).data


def test_the_schema_is_valid_draft_07() -> None:
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(SCHEMA)


def test_there_are_examples() -> None:
    assert len(GOOD) >= 3
    assert len(BAD) >= 10


@pytest.mark.parametrize("path", GOOD, ids=[p.name for p in GOOD])
def test_good_examples_validate(path: Path) -> None:
    errors = [e.message for e in Draft7Validator(SCHEMA).iter_errors(load(path))]
    assert errors == []


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_bad_examples_fail(path: Path) -> None:
    assert list(Draft7Validator(SCHEMA).iter_errors(load(path)))


def test_check_jsonschema_accepts_the_schema_and_the_good_examples() -> None:
    """What docs/editors.md promises: the real check-jsonschema CLI loads the schema and passes good specs."""
    meta = subprocess.run([sys.executable, "-m", "check_jsonschema", "--check-metaschema",
                           str(REPO / "schemas" / "spec.schema.json")], capture_output=True, text=True, timeout=120)
    assert meta.returncode == 0, meta.stdout + meta.stderr
    good = subprocess.run([sys.executable, "-m", "check_jsonschema", "--schemafile",
                           str(REPO / "schemas" / "spec.schema.json"), *map(str, GOOD)],
                          capture_output=True, text=True, timeout=120)
    assert good.returncode == 0, good.stdout + good.stderr
