"""Reading a skill: its file manifest (what the skill digest covers), frontmatter, body, system prompt."""

from __future__ import annotations

import os
import threading
from typing import Any

from skillmake.core import oswalk
from skillmake.core.canonical import digest_file
from skillmake.core.errors import SkillmakeError
from skillmake.core.paths import LINK_HINT, link_problem
from skillmake.core.skillscope import not_skill
from skillmake.spec.model import Skill, Spec

_memo: dict[tuple[str, int, int, int], str] = {}
_memo_lock = threading.Lock()


def file_digest(path: str) -> str:
    """sha256 of a file's content, memoised on (path, inode, size, mtime) so a no-op run hashes nothing twice."""
    st = os.stat(path)
    sig = (path, st.st_ino, st.st_size, st.st_mtime_ns)
    cached = _memo.get(sig)
    if cached is None:
        cached = digest_file(path)
        with _memo_lock:
            _memo[sig] = cached
    return cached


def manifest(skill: Skill) -> dict[str, Any]:
    """Every file of the skill (relative path → content digest); paths are relative so moves don't matter. What
    is the skill and what is not (evals, results, caches beside it) is skillscope.not_skill's rule; a trial
    stages exactly these files (staging.stage_skill), so what is hashed is what is installed."""
    if skill.kind == "none":
        return {"kind": "none", "files": {}}
    if skill.kind in ("command", "prompt"):
        return {"kind": skill.kind, "files": {os.path.basename(skill.path): file_digest(skill.path)}}
    files: dict[str, str] = {}
    real = os.path.realpath(skill.path)
    for folder, dirs, names in oswalk.walk(str(skill.path)):  # no recursion: a deep folder must not crash
        dirs[:] = sorted(d for d in dirs if not not_skill(folder, d, top=skill.path))
        for name in [*dirs, *names]:
            if not_skill(folder, name, top=skill.path):
                continue
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, skill.path).replace(os.sep, "/")
            # Validation refuses these; a link made since must not be hashed (nor installed) all the same.
            problem = link_problem(full, real)
            if problem:
                raise SkillmakeError(f"skill {skill.name!r}: {rel!r} {problem}", hint=LINK_HINT)
            if name in names and os.path.isfile(full):
                files[rel] = file_digest(full)
    return {"kind": "folder", "files": dict(sorted(files.items()))}


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """(frontmatter mapping, body) of a SKILL.md; no frontmatter gives ({}, text)."""
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        raise SkillmakeError("SKILL.md frontmatter is not closed", hint="end the frontmatter with a '---' line")
    import yaml

    try:
        meta = yaml.safe_load(text[3:end]) or {}
    except yaml.YAMLError as exc:
        raise SkillmakeError(f"SKILL.md frontmatter is not valid YAML: {exc}", hint="fix the frontmatter") from None
    if not isinstance(meta, dict):
        raise SkillmakeError("SKILL.md frontmatter must be a mapping", hint="write 'name: …' lines")
    body = text[end + 4:]
    return meta, body[1:] if body.startswith("\n") else body


def skill_body(skill: Skill) -> str:
    with open(skill.skill_md, encoding="utf-8") as f:
        return split_frontmatter(f.read())[1]


def agents_md(skill: Skill, project_root: str) -> str | None:
    """AGENTS.md beside the skill, else at the project root (clauditor's order), if readable."""
    folder = skill.path if skill.kind == "folder" else os.path.dirname(skill.path)
    for candidate in (os.path.join(folder, "AGENTS.md"), os.path.join(project_root, "AGENTS.md")):
        if os.path.isfile(candidate):
            return candidate
    return None


def resolve_system_prompt(spec: Spec, skill: Skill | None, project_root: str) -> str | None:
    """clauditor's precedence: explicit system_prompt > AGENTS.md > SKILL.md body (frontmatter stripped).

    An arm without the skill gets only the explicit prompt: the baseline must not see the skill.
    """
    if spec.system_prompt is not None:
        return spec.system_prompt
    if skill is None:
        return None
    found = agents_md(skill, project_root)
    if found:
        with open(found, encoding="utf-8") as f:
            return f.read()
    if skill.kind == "prompt":  # the prompt file is rendered into each case's prompt, never a system prompt
        return None
    return skill_body(skill)
