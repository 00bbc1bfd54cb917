"""The sections judge (clauditor L2): the model extracts entries per section and tier; the checks are ours.

The model only copies values out of the output. Entry counts (min/max), required fields and field formats
(a registered format name or an inline regex, matched in full) are checked here, deterministically.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from skillmake.run.judges.base import JudgeRequest
from skillmake.run.judges.render import SYSTEM, task_block
from skillmake.spec.formats import FORMATS, compile_format
from skillmake.spec.model import Case, Spec

NAME = "sections"
PROMPT_VERSION = 1
_SHOWN_BAD_VALUES = 5

TEMPLATE = """Extract structured data from the output below, section by section. For each section and tier \
listed, return every entry the output gives (all of them, in order), with each field's value copied as it \
appears. Do not interpret, reformat, complete or invent values: use null for a field that is missing or \
unclear, and an empty list for a tier with no entries.

<sections>
{sections}
</sections>

{task}{material}"""


@dataclass(frozen=True, slots=True, kw_only=True)
class Tier:
    section: str  # unique key of the section in the reply
    label: str  # unique key of the tier within its section
    min_entries: int | None
    max_entries: int | None
    fields: tuple[dict[str, Any], ...]

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(f["name"] for f in self.fields))


def applies(case: Case) -> bool:
    return bool(case.sections)


def tiers(case: Case) -> Iterator[Tier]:
    """The case's tiers with unique section and tier keys (a repeated name gets ' #2', ' #3' …)."""
    for section_key, section in _unique((s["name"] for s in case.sections), case.sections):
        raw_tiers = section["tiers"]
        labels = (t.get("label") or "default" for t in raw_tiers)
        for label, tier in _unique(labels, raw_tiers):
            yield Tier(section=section_key, label=label, min_entries=tier.get("min_entries"),
                       max_entries=tier.get("max_entries"), fields=tuple(tier["fields"]))


def _unique(names: Iterator[str], items: Any) -> Iterator[tuple[str, Any]]:
    seen: dict[str, int] = {}
    for name, item in zip(names, items, strict=True):
        seen[name] = seen.get(name, 0) + 1
        yield (name if seen[name] == 1 else f"{name} #{seen[name]}"), item


def schema(case: Case) -> dict[str, Any]:
    """The reply's shape: {section: {tier: [{field: value|null}]}}, every key required (strict-mode ready)."""
    sections: dict[str, dict[str, Any]] = {}
    for tier in tiers(case):
        entry = {"type": "object", "properties": {n: {"type": ["string", "number", "null"]} for n in tier.names},
                 "required": tier.names, "additionalProperties": False}
        sections.setdefault(tier.section, {})[tier.label] = {"type": "array", "items": entry}
    return {"type": "object",
            "properties": {s: {"type": "object", "properties": t, "required": list(t), "additionalProperties": False}
                           for s, t in sections.items()},
            "required": list(sections), "additionalProperties": False}


def request(spec: Spec, case: Case, material: str) -> JudgeRequest:
    lines = []
    for tier in tiers(case):
        lines.append(f'- section "{tier.section}", tier "{tier.label}": fields {", ".join(tier.names)}')
    user = TEMPLATE.format(sections="\n".join(lines), task=task_block(case), material=material)
    return JudgeRequest(judge=NAME, system=SYSTEM, user=user, schema=schema(case), shared=len(user) - len(material))


def verdicts(spec: Spec, case: Case, data: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tier in tiers(case):
        entries: list[dict[str, Any]] = data[tier.section][tier.label]
        where = f"{tier.section}/{tier.label}"
        n = len(entries)
        if tier.min_entries is not None:
            out.append(_entry(f"{where}:count", f"section '{tier.section}' tier '{tier.label}' has at least "
                              f"{tier.min_entries} entries", n >= tier.min_entries, f"{n} entries extracted"))
        if tier.max_entries is not None:
            out.append(_entry(f"{where}:count_max", f"section '{tier.section}' tier '{tier.label}' has at most "
                              f"{tier.max_entries} entries", n <= tier.max_entries, f"{n} entries extracted"))
        for field in tier.fields:
            out.extend(_field_checks(tier, field, entries))
    return out


def _field_checks(tier: Tier, field: dict[str, Any], entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    name = field["name"]
    fid = field.get("id") or f"{tier.section}/{tier.label}.{name}"
    values = [(i, _value(e.get(name))) for i, e in enumerate(entries, 1)]
    present = [(i, v) for i, v in values if v is not None]
    out = []
    if field.get("required"):
        missing = [i for i, v in values if v is None]
        text = f"every entry of '{tier.section}/{tier.label}' has '{name}'"
        if not entries:
            out.append(_entry(fid, text, True, "no entries extracted", score=None))
        else:
            evidence = (f"all {len(entries)} entries have it" if not missing else
                        f"missing in entr{'y' if len(missing) == 1 else 'ies'} "
                        f"{', '.join(map(str, missing))} of {len(entries)}")
            out.append(_entry(fid, text, not missing, evidence, score=(len(entries) - len(missing)) / len(entries)))
    fmt = field.get("format")
    if fmt:
        kind = "format" if fmt in FORMATS else "regex"
        text = f"'{name}' values in '{tier.section}/{tier.label}' match {kind} {fmt!r}"
        try:
            pattern = compile_format(fmt)
        except re.error as err:  # the spec validator rejects these first; kept as a value, not a crash
            out.append(_entry(f"{fid}:format", text, False, f"invalid regex: {err}"))
            return out
        if not present:
            out.append(_entry(f"{fid}:format", text, True, "no values to check", score=None))
        else:
            bad = [(i, v) for i, v in present if pattern.fullmatch(v.strip()) is None]
            shown = "; ".join(f"entry {i}: {v!r}" for i, v in bad[:_SHOWN_BAD_VALUES])
            more = f" (and {len(bad) - _SHOWN_BAD_VALUES} more)" if len(bad) > _SHOWN_BAD_VALUES else ""
            evidence = f"all {len(present)} values match" if not bad else f"no match: {shown}{more}"
            out.append(_entry(f"{fid}:format", text, not bad, evidence, score=(len(present) - len(bad)) / len(present)))
    return out


def _value(raw: Any) -> str | None:
    if raw is None or isinstance(raw, bool):
        return None
    text = str(raw) if not isinstance(raw, str) else raw
    return text if text.strip() else None


def _entry(eid: str, text: str, passed: bool, evidence: str, *, score: float | None = -1.0) -> dict[str, Any]:
    """A grading.json entry; the score defaults to 1/0 from `passed`, None means nothing was there to score."""
    value = (1.0 if passed else 0.0) if score == -1.0 else score
    return {"text": text, "passed": passed, "evidence": evidence, "source": "judge", "id": eid, "score": value}
