"""A spec's `trigger_tests`, from validated data: the queries with their ids, the distractor skills, the agent and
the skill's own name and description, which are all a trigger trial's key may depend on (never the SKILL.md body).
The rules the schema cannot express live here too, called from rules.Rules."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from skillmake.core.errors import SkillmakeError
from skillmake.core.paths import ALLOWED_ROOTS_VAR, allowed_roots, within
from skillmake.spec.model import AgentConfig, Distractor, Skill, TriggerQuery, TriggerTests

Report = Callable[[str, str, str], None]  # (pointer, message, hint)
LISTS = ("should_trigger", "should_not_trigger")
# Frontmatter keys that decide whether (and how) a model may invoke a skill: they are offered with the description.
INVOCATION_KEYS = ("disable-model-invocation",)
_ID_WORDS = 6
_ID_LENGTH = 48


def query_items(data: Mapping[str, Any]) -> list[tuple[str, int, str, str | None]]:
    """(list name, position, text, id written) of every query, should_trigger first."""
    out: list[tuple[str, int, str, str | None]] = []
    for which in LISTS:
        for i, item in enumerate(data.get(which) or ()):
            if isinstance(item, str):
                out.append((which, i, item, None))
            elif isinstance(item, dict) and isinstance(item.get("query"), str):
                out.append((which, i, item["query"], item.get("id")))
    return out


def slug(text: str) -> str:
    """A readable id from a query's first words: "Find kid activities in Cupertino!" → find-kid-activities-in-cu…"""
    words = re.findall(r"[a-z0-9]+", text.lower())[:_ID_WORDS]
    return "-".join(words)[:_ID_LENGTH].strip("-") or "query"


def query_ids(items: list[tuple[str, int, str, str | None]]) -> list[str]:
    """Each query's id: the one written, else a slug of its text made unique with -2, -3… in order."""
    taken = {given for *_, given in items if given}
    out = []
    for _, _, text, given in items:
        if given:
            out.append(given)
            continue
        base = candidate = slug(text)
        n = 2
        while candidate in taken:
            candidate, n = f"{base}-{n}", n + 1
        taken.add(candidate)
        out.append(candidate)
    return out


def skill_identity(skill: Skill) -> tuple[str, str | None, dict[str, Any]]:
    """(name, description, invocation settings) the agent is offered for `skill`: the frontmatter's, a command
    file's first line as its description when it has none (as the codex agent installs it)."""
    # only here: the editor-save path (validate) must not load orjson
    from skillmake.spec.skillfiles import split_frontmatter  # only here: validate must not load orjson

    with open(skill.skill_md, encoding="utf-8") as f:
        text = f.read()
    meta, body = split_frontmatter(text)
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        description = None
        if skill.kind == "command":
            first = next((line.strip("# ").strip() for line in body.splitlines() if line.strip()), "")
            description = first[:200] or None
    settings = {k: meta[k] for k in INVOCATION_KEYS if k in meta}
    return skill.name, description, settings


def check(data: Mapping[str, Any], *, skill: Skill | None, folder: str, report: Report,
          clean: Callable[[str], bool], root: str | None = None) -> None:
    """Rules over a schema-valid `trigger_tests`: one query in both lists, duplicate ids, unreadable distractors,
    a skill with no description to measure."""
    seen: dict[str, str] = {}
    items = query_items(data)
    for which, i, text, _ in items:
        pointer = f"/trigger_tests/{which}/{i}"
        if not clean(pointer):
            continue
        norm = " ".join(text.split()).lower()
        if norm in seen:
            report(pointer, f"the query {text[:60]!r} is listed twice (also at {seen[norm]})",
                   "a query is either should_trigger or should_not_trigger, once; remove one")
        seen.setdefault(norm, pointer)
    ids: dict[str, str] = {}
    for (which, i, _, given), qid in zip(items, query_ids(items), strict=True):
        pointer = f"/trigger_tests/{which}/{i}"
        if given and qid in ids and clean(pointer):
            report(f"{pointer}/id", f"duplicate query id {qid!r} (also at {ids[qid]})", "give each query its own id")
        ids.setdefault(qid, pointer)
    names: dict[str, str] = {}
    own = skill.name if skill else None
    for i, raw in enumerate(data.get("distractors") or ()):
        pointer = f"/trigger_tests/distractors/{i}"
        if not clean(pointer):
            continue
        try:
            found = distractor(raw, folder=folder, root=root)
        except SkillmakeError as exc:
            report(pointer, exc.message, exc.hint or "point it at a skill folder holding SKILL.md, or a command .md")
            continue
        if found.name == own:
            report(pointer, f"the distractor {found.name!r} has the name of the skill under test",
                   "a distractor is another skill: give it another name")
        elif found.name in names:
            report(pointer, f"two distractors are named {found.name!r} (also at {names[found.name]})",
                   "installed skills need distinct names; remove or rename one")
        names.setdefault(found.name, pointer)
    if skill is not None and skill.kind in ("folder", "command") and items:
        try:
            _, description, _ = skill_identity(skill)
        except (OSError, UnicodeDecodeError, SkillmakeError) as exc:
            report("/trigger_tests", f"cannot read the skill's description: {exc}", "fix the skill's frontmatter")
            return
        if description is None:
            report("/trigger_tests", f"skill {skill.name!r} has no description in its frontmatter; trigger tests "
                   "measure whether the description makes the agent pick the skill",
                   "add `description: …` to the frontmatter of its SKILL.md")


def distractor(raw: Any, *, folder: str, root: str | None = None) -> Distractor:
    """A distractor written inline ({name, description}) or as a path to a skill folder or command .md. A path
    stays where a `skill:` may (under the project `root` or an allowed root, links resolved): its description
    is shown to the agent, so a spec must not read one from anywhere on the machine."""
    if isinstance(raw, dict):
        return Distractor(name=str(raw["name"]), description=str(raw["description"]))
    path = os.path.normpath(os.path.join(folder, os.path.expanduser(str(raw))))
    if root is not None and os.path.exists(path):
        _contained(raw, path, root)
    if os.path.isdir(path):
        kind, md = "folder", os.path.join(path, "SKILL.md")
        name = os.path.basename(path)
    elif os.path.isfile(path) and path.endswith(".md"):
        kind, md = "command", path
        name = os.path.basename(path)[:-3]
        if name == "SKILL":
            kind, name = "folder", os.path.basename(os.path.dirname(path))
    else:
        raise SkillmakeError(f"distractor {raw!r}: there is no skill folder or command .md file there",
                             hint="the path is relative to the spec's folder (or write {name, description})")
    if not os.path.isfile(md):
        raise SkillmakeError(f"distractor {raw!r} is a folder without SKILL.md", hint="point it at a skill folder")
    if root is not None:
        _contained(raw, md, root)  # SKILL.md itself may be a link out of an allowed folder
    try:
        _, description, _ = skill_identity(Skill(name=name, path=path if kind == "command" else os.path.dirname(md),
                                                 kind=kind))
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillmakeError(f"cannot read distractor {raw!r}: {exc}", hint="check the file") from None
    if description is None:
        raise SkillmakeError(f"distractor {raw!r} has no description in its frontmatter",
                             hint="a distractor competes through its description: add one")
    return Distractor(name=name, description=description, source=md)


def _contained(raw: Any, path: str, root: str) -> None:
    roots, _ = allowed_roots(root)
    resolved = os.path.realpath(path)
    if any(within(resolved, r) for r in roots):
        return
    shown = resolved if os.path.isabs(os.path.expanduser(str(raw))) else os.path.relpath(resolved,
                                                                                         os.path.realpath(root))
    raise SkillmakeError(f"distractor {raw!r} is outside the project root (it resolves to {shown})",
                         hint=f"keep distractor skills inside the project (or write {{name, description}} inline), "
                              f"or allow their folder: {ALLOWED_ROOTS_VAR}=/abs/folder (see docs/paths.md)")


def build(data: Mapping[str, Any] | None, *, agent: AgentConfig, folder: str,
          make_agent: Callable[[dict[str, Any]], AgentConfig], base_agent: Mapping[str, Any],
          root: str | None = None) -> TriggerTests | None:
    """The model of a schema- and rule-valid `trigger_tests` (None when the spec has no query)."""
    if not data:
        return None
    items = query_items(data)
    if not items:
        return None
    queries = tuple(TriggerQuery(id=qid, query=text, should_trigger=which == "should_trigger", index=n)
                    for n, ((which, _, text, _), qid) in enumerate(zip(items, query_ids(items), strict=True)))
    override = data.get("agent")
    trigger_agent = make_agent({**base_agent, **override}) if override else agent
    return TriggerTests(queries=queries, agent=trigger_agent, runs=int(data.get("runs", 3)),
                        threshold=float(data.get("threshold", 0.5)),
                        timeout=float(data["timeout"]) if "timeout" in data else None,
                        distractors=tuple(distractor(d, folder=folder, root=root)
                                                        for d in data.get("distractors") or ()))
