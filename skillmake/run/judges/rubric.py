"""The rubric judge (eva): a score from 1 to 5 with a one-sentence reason; passes at the threshold."""

from __future__ import annotations

import re
from typing import Any

from skillmake.run.judges.base import JudgeRequest, ReplyError
from skillmake.run.judges.render import judge_request
from skillmake.spec.model import Case, Spec

NAME = "rubric"
PROMPT_VERSION = 1
DEFAULT_THRESHOLD = 4

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "enum": [1, 2, 3, 4, 5],
                  "description": "1 = fails the rubric, 3 = partly meets it, 5 = fully meets it"},
        "reason": {"type": "string", "description": "one sentence: why this score, citing the output"},
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}

# eva's plain-text verdict, accepted when a model answers in text instead of calling the tool.
_EVA = re.compile(r"SCORE\s*=\s*(\d+)\s*,?\s*REASON\s*=\s*(.+)", re.DOTALL)

TEMPLATE = """Score the output below against this rubric, on an integer scale from 1 (does not meet it at all) \
to 5 (meets it fully). Use the whole scale; a 4 means good with minor flaws.

<rubric>
{rubric}
</rubric>

{expected}{task}{material}"""


def applies(case: Case) -> bool:
    return bool(case.rubric)


def threshold(spec: Spec, case: Case) -> int:
    """The case's pass_threshold, else the spec judge's, else 4."""
    if case.pass_threshold is not None:
        return case.pass_threshold
    return spec.judge.pass_threshold if spec.judge.pass_threshold is not None else DEFAULT_THRESHOLD


def request(spec: Spec, case: Case, material: str) -> JudgeRequest:
    return judge_request(NAME, TEMPLATE, case, material, schema=SCHEMA, rubric=str(case.rubric))


def from_text(text: str) -> dict[str, Any] | None:
    match = _EVA.search(text)
    if not match:
        return None
    return {"score": int(match.group(1)), "reason": " ".join(match.group(2).split())}


def verdicts(spec: Spec, case: Case, data: dict[str, Any]) -> list[dict[str, Any]]:
    score = data["score"]
    if not 1 <= score <= 5:
        raise ReplyError(f"rubric score {score} is outside 1-5")
    need = threshold(spec, case)
    reason = data["reason"].strip() or "(no reason given)"
    return [{"text": case.rubric, "passed": score >= need, "evidence": f"SCORE={score} (needs {need}) REASON={reason}",
             "source": "judge", "id": "rubric", "score": (score - 1) / 4}]
