"""What clauditor 0.1.3's own loader (EvalSpec.from_dict) refuses beyond what its JSON Schema here says, and what it
accepts that is surely a mistake (a warning, never a refusal). tests/differential/test_clauditor_loader.py holds
clauditor's loader and skillmake's side by side over a corpus of specs."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any

from skillmake.core.errors import SpecError
from skillmake.spec.adapters.clauditor_assertions import regex_problem
from skillmake.spec.source import Source

# The top-level keys clauditor reads (schemas.py, EvalSpec.from_dict); any other is ignored by it.
KNOWN_KEYS = ("$schema", "skill_name", "description", "test_args", "user_prompt", "system_prompt", "input_files",
              "assertions", "sections", "grading_criteria", "grading_model", "output_file", "output_files",
              "trigger_tests", "variance", "grade_thresholds", "allow_hang_heuristic", "timeout", "transport",
              "harness", "sync_tasks", "grading_provider")
WARNING = "warning: "


def _ids(data: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(pointer of the id, the id) in clauditor's order: assertions, section fields, then criteria."""
    for i, a in enumerate(data.get("assertions") or ()):
        yield f"/assertions/{i}/id", a.get("id")
    for s, section in enumerate(data.get("sections") or ()):
        for t, tier in enumerate(section.get("tiers") or ()):
            for f, fld in enumerate(tier.get("fields") or ()):
                yield f"/sections/{s}/tiers/{t}/fields/{f}/id", fld.get("id")
    for c, criterion in enumerate(data.get("grading_criteria") or ()):
        yield f"/grading_criteria/{c}/id", criterion.get("id")


def errors(src: Source, data: dict[str, Any]) -> list[SpecError]:
    """clauditor's refusals the schema cannot state: an id used twice (across assertions, fields and criteria), and
    an output_files pattern named like a staged input file."""
    out: list[SpecError] = []
    seen: dict[str, str] = {}
    for pointer, value in _ids(data):
        if not isinstance(value, str):
            continue
        if value in seen:
            out.append(SpecError(f"duplicate id {value!r}: {seen[value]} has it already", loc=src.locate(pointer),
                                 hint="ids are unique across a clauditor spec's assertions, fields and criteria"))
        seen.setdefault(value, pointer)
    inputs = {str(p).replace("\\", "/").rsplit("/", 1)[-1] for p in data.get("input_files") or ()}
    for j, pattern in enumerate(data.get("output_files") or ()):
        base = str(pattern).replace("\\", "/").rsplit("/", 1)[-1]
        if base in inputs:
            out.append(SpecError(f"output_files pattern {pattern!r} has the basename of an input file ({base!r})",
                                 loc=src.locate(f"/output_files/{j}"),
                                 hint="capture the result under another name (clauditor refuses this too)"))
    return out


def warnings(data: dict[str, Any]) -> list[str]:
    """What clauditor accepts but surely is a mistake: each line starts with 'warning: '."""
    out = []
    for key in data:
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            guess = f"; did you mean {close[0]!r}?" if close else ""
            out.append(f"{WARNING}{key!r} is not a clauditor key: ignored, as clauditor ignores it{guess}")
    for pointer, key in (("/grade_thresholds/min_pass_rate", "min_pass_rate"),
                         ("/grade_thresholds/min_mean_score", "min_mean_score"),
                         ("/variance/min_stability", "min_stability")):
        block = data.get(pointer.split("/")[1]) or {}
        value = block.get(key)
        if isinstance(value, (int, float)) and not 0 <= value <= 1:
            out.append(f"{WARNING}{pointer} is {value}, outside 0..1: under clauditor "
                       f"{'no run can pass it' if value > 1 else 'it can never fail'}; skillmake reads it as "
                       f"{1 if value > 1 else 0}")
    n_runs = (data.get("variance") or {}).get("n_runs")
    if isinstance(n_runs, int) and n_runs < 1:
        out.append(f"{WARNING}/variance/n_runs is {n_runs}: clauditor's grade and validate do not read it "
                   "(--variance N sets the extra runs)")
    bounds: dict[str, list[int]] = {"min_length": [], "max_length": []}
    for i, a in enumerate(data.get("assertions") or ()):
        if a.get("type") in bounds and isinstance(a.get("length"), int):
            bounds[a["type"]].append(a["length"])
        pattern = a.get("pattern")
        if a.get("type") in ("regex", "min_count") and isinstance(pattern, str):
            problem = regex_problem(pattern)
            if problem:
                out.append(f"{WARNING}/assertions/{i}/pattern {pattern!r} is not a valid regular expression "
                           f"({problem}): it fails every run")
    if bounds["min_length"] and bounds["max_length"] and max(bounds["min_length"]) > min(bounds["max_length"]):
        out.append(f"{WARNING}min_length {max(bounds['min_length'])} is above max_length "
                   f"{min(bounds['max_length'])}: no output can pass both")
    for c, criterion in enumerate(data.get("grading_criteria") or ()):
        if isinstance(criterion.get("criterion"), str) and not criterion["criterion"].strip():
            out.append(f"{WARNING}/grading_criteria/{c}/criterion is blank: the judge has nothing to grade it on")
    if not (data.get("assertions") or data.get("sections") or data.get("grading_criteria")):
        out.append(f"{WARNING}nothing to grade: no assertions, sections or grading_criteria (clauditor's grade "
                   "refuses such a spec; its validate passes every run)")
    return out


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def case_id(name: str, fallback: str) -> str:
    """A clauditor skill_name as a case id (a folder and task name): unsafe characters become '-'."""
    cleaned = _UNSAFE.sub("-", name).strip("-._")
    return cleaned[:100] or fallback
