"""The criteria judge (clauditor L3): each criterion passed or failed, a 0–1 score, and evidence."""

from __future__ import annotations

from typing import Any

from skillmake.run.judges.base import JudgeRequest, ReplyError
from skillmake.run.judges.render import judge_request, verdict_list
from skillmake.spec.model import Case, Spec

NAME = "criteria"
PROMPT_VERSION = 1

SCHEMA: dict[str, Any] = verdict_list("criteria", {
    "id": {"type": "string", "description": "the criterion's id, exactly as given"},
    "passed": {"type": "boolean"},
    "score": {"type": "number", "description": "0.0 (not met at all) to 1.0 (fully met)"},
    "evidence": {"type": "string", "description": "a quote from the output, or what is missing"},
    "reasoning": {"type": "string", "description": "one or two sentences"},
})

TEMPLATE = """Grade the output below against each criterion. For every criterion give: passed (true only when \
the output clearly meets it), a score from 0.0 to 1.0 for how well it is met, the evidence (a short quote \
from the output, or what is missing), and a brief reasoning. Answer for every criterion, once, by its id.

<criteria>
{criteria}
</criteria>

{expected}{task}{material}"""


def applies(case: Case) -> bool:
    return bool(case.criteria)


def request(spec: Spec, case: Case, material: str) -> JudgeRequest:
    listed = "\n".join(f"- id: {c.id}\n  criterion: {c.criterion}" for c in case.criteria)
    return judge_request(NAME, TEMPLATE, case, material, schema=SCHEMA, criteria=listed)


def verdicts(spec: Spec, case: Case, data: dict[str, Any]) -> list[dict[str, Any]]:
    by_id: dict[str, dict[str, Any]] = {}
    for item in data["criteria"]:
        if item["id"] in by_id:
            raise ReplyError(f"criterion {item['id']!r} was graded twice")
        by_id[item["id"]] = item
    missing = [c.id for c in case.criteria if c.id not in by_id]
    if missing:
        raise ReplyError(f"the judge did not grade criteria {', '.join(map(repr, missing))}")
    out = []
    for c in case.criteria:
        item = by_id[c.id]
        score = float(item["score"])
        if not 0.0 <= score <= 1.0:
            raise ReplyError(f"criterion {c.id!r} score {score} is outside 0-1")
        evidence = item["evidence"].strip()
        if item["reasoning"].strip():
            evidence = f"{evidence} — {item['reasoning'].strip()}" if evidence else item["reasoning"].strip()
        out.append({"text": c.criterion, "passed": bool(item["passed"]), "evidence": evidence,
                    "source": "judge", "id": c.id, "score": score})
    return out
