"""The expectations judge (skill-creator expectations, caliper `expect`): each one passed or not, with evidence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from skillmake.run.judges.base import JudgeRequest, ReplyError
from skillmake.run.judges.render import judge_request, verdict_list
from skillmake.spec.model import Case, Spec

NAME = "expectations"
PROMPT_VERSION = 1

SCHEMA: dict[str, Any] = verdict_list("expectations", {
    "id": {"type": "string", "description": "the expectation's id (E1, E2, …), exactly as given"},
    "passed": {"type": "boolean"},
    "evidence": {"type": "string", "description": "what in the output or files shows it holds, or why it does not"},
})

TEMPLATE = """Decide, for each expectation below, whether the agent's output and files satisfy it. An \
expectation passes only when there is concrete evidence for it; a vague or partial match fails. Give the \
evidence for each verdict: a short quote, a file name and what it holds, or what is missing. Answer for every \
expectation, once, by its id.

<expectations>
{expectations}
</expectations>

{expected}{task}{material}"""


def applies(case: Case) -> bool:
    return bool(case.expectations)


def ids(case: Case) -> list[str]:
    return [f"E{i}" for i in range(1, len(case.expectations) + 1)]


def entry_id(i: int) -> str:
    """The id a grade record gives the i-th expectation's verdict."""
    return f"expectation-{i}"


def named(case: Case, entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A grade's entries with each named expectation's verdict under its name (skill-creator's assertion name).

    Names are applied here, to the records a cell shows, not by the judge: the judge never sees them, a grade
    record is shared by every case with the same statements whatever they call them, and renaming one must not
    re-grade (the grade key holds only the texts)."""
    names = {entry_id(i): name for i, name in enumerate(case.expectation_names) if name}
    if not names:
        return list(entries)
    return [dict(e, id=names[e["id"]]) if e.get("source") == "judge" and e.get("id") in names else e
            for e in entries]


def request(spec: Spec, case: Case, material: str) -> JudgeRequest:
    listed = "\n".join(f"- {eid}: {text}" for eid, text in zip(ids(case), case.expectations, strict=True))
    return judge_request(NAME, TEMPLATE, case, material, schema=SCHEMA, expectations=listed)


def verdicts(spec: Spec, case: Case, data: dict[str, Any]) -> list[dict[str, Any]]:
    by_id: dict[str, dict[str, Any]] = {}
    for item in data["expectations"]:
        key = item["id"].strip().upper()
        if key in by_id:
            raise ReplyError(f"expectation {item['id']!r} was judged twice")
        by_id[key] = item
    missing = [eid for eid in ids(case) if eid not in by_id]
    if missing:
        raise ReplyError(f"the judge gave no verdict for expectations {', '.join(missing)}")
    out = []
    for i, (eid, text) in enumerate(zip(ids(case), case.expectations, strict=True)):
        item = by_id[eid]
        passed = bool(item["passed"])
        out.append({"text": text, "passed": passed, "evidence": item["evidence"].strip() or "(no evidence given)",
                    "source": "judge", "id": entry_id(i), "score": 1.0 if passed else 0.0})
    return out
