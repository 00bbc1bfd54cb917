"""The stand-in skills a trigger trial installs: the real name, description and invocation settings, a fixed body."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STUB_VERSION = 1  # part of every trigger key: bump when the stand-in's text changes on purpose
# Where each CLI agent looks for project skills; a stand-in goes to both (each CLI ignores the other's folder).
SKILL_FOLDERS = (".claude/skills", ".agents/skills")


def stub_text(name: str, description: str, settings: dict[str, Any] | None = None) -> str:
    """A SKILL.md offering `name` with `description` (JSON strings are valid YAML, so any text survives)."""
    lines = ["---", f"name: {name}", f"description: {json.dumps(description, ensure_ascii=False)}"]
    lines += [f"{key}: {json.dumps(value)}" for key, value in sorted((settings or {}).items())]
    return "\n".join([*lines, "---", "", f"# {name}", "", f"This skill handles: {description}", "",
                      "(A stand-in written by skillmake for a trigger eval: only the name and the description are "
                      "under test.)", ""])


def write_stub(folder: Path, name: str, description: str, settings: dict[str, Any] | None = None) -> Path:
    """`folder/<name>/SKILL.md`; the skill folder."""
    skill = folder / name
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(stub_text(name, description, settings), encoding="utf-8")
    return skill


def install_distractors(workspace: Path, distractors: list[dict[str, str]]) -> None:
    """Every distractor's stand-in where both CLI agents find project skills."""
    for folder in SKILL_FOLDERS:
        for d in distractors:
            write_stub(workspace / folder, d["name"], d["description"])
