"""Anthropic skill-creator's `<skill>/evals/evals.json` (and `trigger-eval-set.json` beside it) as a native spec.

The mapping (docs/formats.md): the skill is the folder holding `evals/`; eval `id` 3 is case `eval-3` (the name
skill-creator gives the eval's run folder, `eval-3/with_skill/`) with `eval_id: 3` (the id its results carry);
`assertions[]` are expectations named by their `name`; `files` are relative to the skill's folder;
`expectations` and `assertions[].description` are both statements a judge marks passed or failed; every eval runs
with and without the skill, as skill-creator's benchmark does. No agent is named: skill-creator always runs
`claude -p`, so the agent is claude-code by default, and the project's `[tool.skillmake] agent`, when it names a
kind, runs it instead (spec.load_spec lends it).
"""

from __future__ import annotations

import os
from typing import Any

from skillmake.core.errors import SpecError, SpecErrors
from skillmake.spec.adapters import Translation
from skillmake.spec.adapters.detect import seed_spec_name
from skillmake.spec.source import Source, read_source

FORMAT = "skill-creator"
DEFAULT_AGENT = "claude-code"  # skill-creator's run_eval.py always runs `claude -p`
SCHEMA = "skill-creator.schema.json"
TRIGGERS_SCHEMA = "skill-creator-trigger-eval-set.schema.json"
TRIGGERS_FILE = "trigger-eval-set.json"  # read when it sits beside evals.json


def case_id(eval_id: int) -> str:
    """The native case id of an eval: lossless both ways (eval_id_of), and the name skill-creator's own run
    folders carry (`eval-0/with_skill/`, feedback.json's `eval-0-with_skill`)."""
    return f"eval-{eval_id}"


def eval_id_of(case: str) -> int | None:
    """The integer id of a case translated from evals.json (None for any other case id)."""
    head, _, tail = case.partition("-")
    try:
        return int(tail) if head == "eval" and tail and case == case_id(int(tail)) else None
    except ValueError:
        return None


def skill_folder(path: str) -> str:
    """The skill an evals.json tests: the parent of its `evals/` folder (else, the file's own folder)."""
    folder = os.path.dirname(os.path.abspath(path))
    return os.path.dirname(folder) if os.path.basename(folder) == "evals" else folder


class SkillCreatorAdapter:
    format = FORMAT
    schema = SCHEMA

    def translate(self, src: Source, *, path: str, root: str) -> Translation:
        data: dict[str, Any] = src.data
        spec_dir = os.path.dirname(path)
        skill = skill_folder(path)
        errors: list[SpecError] = []
        if not os.path.isfile(os.path.join(skill, "SKILL.md")):
            shown = os.path.relpath(skill, root) if root else skill
            errors.append(SpecError(f"the skill folder {shown!r} has no SKILL.md", loc=src.locate(""),
                                    hint="keep evals.json at <skill>/evals/evals.json, beside the skill's SKILL.md"))
        name = seed_spec_name(FORMAT, path) or _stem(path)
        out: dict[str, Any] = {"name": name, "skill": _rel(skill, spec_dir), "agent": {"kind": DEFAULT_AGENT},
                               "baseline": True, "cases": []}
        origin: dict[str, str] = {"": "", "/name": "/skill_name", "/skill": "/skill_name", "/cases": "/evals",
                                  "/baseline": "/evals", "/agent": ""}
        notes: list[str] = ["skill-creator runs every eval with and without the skill: baseline: true"]
        if "description" in data:
            out["description"] = data["description"]
            origin["/description"] = "/description"
        if "version" in data:
            notes.append("version: kept in the seed only (no native twin)")
        seen: dict[int, int] = {}
        for i, raw in enumerate(data["evals"]):
            case, case_origin, case_notes = _case(raw, i, src=src, skill=skill, spec_dir=spec_dir,
                                                  errors=errors, seen=seen)
            out["cases"].append(case)
            origin.update(case_origin)
            notes.extend(n for n in case_notes if n not in notes)
        triggers = _triggers(os.path.join(os.path.dirname(path), TRIGGERS_FILE), root=root, errors=errors)
        if triggers is not None:
            out["trigger_tests"] = triggers
            origin["/trigger_tests"] = ""
            notes.append(f"{TRIGGERS_FILE}: read into trigger_tests (should_trigger true/false)")
        if errors:
            raise SpecErrors(errors)
        return Translation(data=out, origin=origin, notes=tuple(notes), agent_is_default=True)


def _case(raw: dict[str, Any], i: int, *, src: Source, skill: str, spec_dir: str, errors: list[SpecError],
          seen: dict[int, int]) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    seed, base = f"/evals/{i}", f"/cases/{i}"
    eval_id: int = raw["id"]
    if eval_id in seen:
        errors.append(SpecError(f"duplicate eval id {eval_id}", loc=src.locate(f"{seed}/id"),
                                hint=f"it is already used by /evals/{seen[eval_id]}; ids must be unique"))
    seen.setdefault(eval_id, i)
    case: dict[str, Any] = {"id": case_id(eval_id), "eval_id": eval_id, "prompt": raw["prompt"]}
    origin = {base: seed, f"{base}/id": f"{seed}/id", f"{base}/eval_id": f"{seed}/id",
              f"{base}/prompt": f"{seed}/prompt"}
    notes: list[str] = []
    if "expected_output" in raw:
        case["expected_output"] = raw["expected_output"]
        origin[f"{base}/expected_output"] = f"{seed}/expected_output"
    if "category" in raw:
        case["tags"] = [raw["category"]]
        origin[f"{base}/tags"] = f"{seed}/category"
    files = _files(raw.get("files", []), seed, src=src, skill=skill, spec_dir=spec_dir, errors=errors)
    if files:
        case["input_files"] = files
        origin[f"{base}/input_files"] = f"{seed}/files"
    statements: list[str | dict[str, str]] = []
    for k, text in enumerate(raw.get("expectations", [])):
        origin[f"{base}/expectations/{len(statements)}"] = f"{seed}/expectations/{k}"
        statements.append(text)
    for k, assertion in enumerate(raw.get("assertions", [])):
        at = f"{base}/expectations/{len(statements)}"
        origin.update({at: f"{seed}/assertions/{k}", f"{at}/text": f"{seed}/assertions/{k}/description",
                       f"{at}/name": f"{seed}/assertions/{k}/name"})
        # Named, so grading.json, benchmark.json and eval_metadata.json call it what skill-creator does.
        statement = {"text": assertion["description"], "name": assertion["name"]}
        if "type" in assertion:  # a label for eval_metadata.json: the judge grades the description
            statement["type"] = assertion["type"]
            origin[f"{at}/type"] = f"{seed}/assertions/{k}/type"
        statements.append(statement)
    if not statements and raw.get("expected_output", "").strip():
        # skill-creator's grader has nothing else to go on: success as the eval describes it is the statement.
        origin[f"{base}/expectations/0"] = f"{seed}/expected_output"
        statements.append(raw["expected_output"])
        notes.append("an eval with no expectations or assertions is graded on its expected_output")
    if statements:
        case["expectations"] = statements
        origin[f"{base}/expectations"] = f"{seed}/expectations" if "expectations" in raw else f"{seed}/assertions"
    else:
        errors.append(SpecError(f"eval {eval_id} has nothing to grade", loc=src.locate(seed),
                                hint="add 'expectations' (statements a grader marks passed or failed), "
                                     "'assertions', or an 'expected_output'"))
    return case, origin, notes


def _files(entries: list[str], seed: str, *, src: Source, skill: str, spec_dir: str,
           errors: list[SpecError]) -> list[str]:
    """`files` are relative to the skill's folder; native input_files to the spec's (evals/). Here, in the seed's
    words, what the native rules would word in translated paths: absolute, missing, two staged under one name.
    (Outside the project root and links are the native rules', located at the same entry.)"""
    out = []
    staged: dict[str, str] = {}
    for j, rel in enumerate(entries):
        pointer = f"{seed}/files/{j}"
        dest = os.path.basename(rel.rstrip("/"))
        if dest in staged:
            errors.append(SpecError(f"files {staged[dest]!r} and {rel!r} both stage as {dest!r}",
                                    loc=src.locate(pointer),
                                    hint="a trial's workspace gets each file under its own name; rename one"))
        staged.setdefault(dest, rel)
        if os.path.isabs(rel) or rel.startswith("~"):
            errors.append(SpecError(f"absolute input file path {rel!r}", loc=src.locate(pointer),
                                    hint="use a path relative to the skill's folder (e.g. evals/files/input.csv)"))
            continue
        full = os.path.normpath(os.path.join(skill, rel))
        if not os.path.lexists(full):
            errors.append(SpecError(f"input file {rel!r} does not exist", loc=src.locate(pointer),
                                    hint=f"create it, or fix the path (relative to the skill's folder, "
                                         f"{os.path.basename(skill)}/)"))
        out.append(_rel(full, spec_dir))
    return out


def _triggers(path: str, *, root: str, errors: list[SpecError]) -> dict[str, list[str]] | None:
    """trigger-eval-set.json beside evals.json, checked against its own schema, as trigger_tests."""
    if not os.path.isfile(path):
        return None
    from skillmake.spec.schema import spec_errors

    shown = os.path.relpath(path, root) if root else path
    try:
        src = read_source(path)
    except SpecError as exc:
        errors.append(SpecError(exc.message, hint=exc.hint,
                                loc=exc.loc and _at(exc.loc, shown)))
        return None
    src.path = shown
    found = spec_errors(src, TRIGGERS_SCHEMA)
    if found:
        errors.extend(found)
        return None
    out: dict[str, list[str]] = {"should_trigger": [], "should_not_trigger": []}
    for item in src.data:
        out["should_trigger" if item["should_trigger"] else "should_not_trigger"].append(item["query"])
    return out


def _at(loc: Any, shown: str) -> Any:
    import dataclasses

    return dataclasses.replace(loc, path=shown)


def _rel(path: str, start: str) -> str:
    return os.path.relpath(path, start).replace(os.sep, "/")


def _stem(path: str) -> str:
    base = os.path.basename(path)
    for suffix in (".eval.json", ".json"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


ADAPTER = SkillCreatorAdapter()
