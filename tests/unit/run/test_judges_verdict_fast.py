"""A verdict that fits its schema is accepted without importing jsonschema (spec/draft7.py decides; ~0.14 s of CPU a
judged run paid on its first grade), and that fast answer is jsonschema's own on every judge's schema, for valid
and broken verdicts alike."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import jsonschema
import pytest

from skillmake.run.judges import criteria, expectations, rubric, verdict
from skillmake.run.judges.base import ReplyError

CRITERION = {"id": "c1", "passed": True, "score": 0.5, "evidence": "q", "reasoning": "r"}
EXPECTATION = {"id": "E1", "passed": False, "evidence": "none"}
CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (rubric.SCHEMA, {"score": 4, "reason": "ok"}),
    (rubric.SCHEMA, {"score": 6, "reason": "ok"}),
    (rubric.SCHEMA, {"score": 4.0, "reason": "ok"}),
    (rubric.SCHEMA, {"score": True, "reason": "ok"}),
    (rubric.SCHEMA, {"score": 4}),
    (rubric.SCHEMA, {"score": 4, "reason": "ok", "extra": 1}),
    (rubric.SCHEMA, {"score": "4", "reason": "ok"}),
    (criteria.SCHEMA, {"criteria": [CRITERION]}),
    (criteria.SCHEMA, {"criteria": []}),
    (criteria.SCHEMA, {"criteria": [{**CRITERION, "score": "high"}]}),
    (criteria.SCHEMA, {"criteria": [{k: v for k, v in CRITERION.items() if k != "evidence"}]}),
    (criteria.SCHEMA, {"criteria": CRITERION}),
    (expectations.SCHEMA, {"expectations": [EXPECTATION, {**EXPECTATION, "id": "E2"}]}),
    (expectations.SCHEMA, {"expectations": [{**EXPECTATION, "passed": "yes"}]}),
    (expectations.SCHEMA, {"expectations": [{**EXPECTATION, "note": 1}]}),
]


@pytest.mark.parametrize(("schema", "data"), CASES)
def test_the_fast_answer_is_jsonschemas(schema: dict[str, Any], data: dict[str, Any]) -> None:
    assert verdict._surely_valid(data, schema) is jsonschema.Draft202012Validator(schema).is_valid(data)


def test_a_schema_draft7_cannot_decide_goes_to_jsonschema() -> None:
    odd = {"type": "object", "properties": {"n": {"type": "integer"}}, "unevaluatedProperties": False}
    assert verdict._surely_valid({"n": 1}, odd) is False  # undecided, not refused: jsonschema decides in fit
    assert verdict.fit({"n": 1}, odd) == {"n": 1}
    with pytest.raises(ReplyError, match="does not match the schema"):
        verdict.fit({"n": 1, "m": 2}, odd)


def test_a_fitting_verdict_imports_no_jsonschema() -> None:
    code = ("import sys\nsys.modules['jsonschema'] = None\n"  # `import jsonschema` now fails
            "from skillmake.run.judges import rubric, verdict\n"
            "assert verdict.fit({'score': '4', 'reason': 'fine'}, rubric.SCHEMA) == {'score': 4, 'reason': 'fine'}\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
