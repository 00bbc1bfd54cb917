"""The skill's manifest and the system prompt precedence (clauditor: explicit > AGENTS.md > SKILL.md body)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillmake.core.errors import SkillmakeError
from skillmake.spec.loader import load_spec
from skillmake.spec.model import Skill
from skillmake.spec.skillfiles import manifest, resolve_system_prompt, split_frontmatter


def make(root: Path, system_prompt: str | None = None) -> Path:
    (root / "skills/s/scripts").mkdir(parents=True)
    (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\n# Body\nDo the thing.\n")
    (root / "skills/s/scripts/run.sh").write_text("echo hi\n")
    (root / "skills/s/__pycache__").mkdir()
    (root / "skills/s/__pycache__/x.pyc").write_bytes(b"\0")
    extra = f"system_prompt: {system_prompt}\n" if system_prompt else ""
    (root / "p.eval.yaml").write_text("skill: skills/s\nagent: {kind: anthropic}\n" + extra +
                                      "cases: [{id: a, prompt: hi, checks: [{type: contains, needle: hi}]}]\n")
    return root / "p.eval.yaml"


def test_manifest_has_every_file_by_relative_path_and_skips_caches(tmp_path: Path) -> None:
    make(tmp_path)
    files = manifest(Skill(name="s", path=str(tmp_path / "skills/s"), kind="folder"))["files"]
    assert sorted(files) == ["SKILL.md", "scripts/run.sh"]


def test_system_prompt_precedence(tmp_path: Path) -> None:
    path = make(tmp_path)
    spec = load_spec(str(path), root=str(tmp_path))
    assert resolve_system_prompt(spec, spec.skill, str(tmp_path)) == "# Body\nDo the thing.\n"
    (tmp_path / "AGENTS.md").write_text("project agents\n")
    assert resolve_system_prompt(spec, spec.skill, str(tmp_path)) == "project agents\n"
    (tmp_path / "skills/s/AGENTS.md").write_text("skill agents\n")
    assert resolve_system_prompt(spec, spec.skill, str(tmp_path)) == "skill agents\n"
    assert resolve_system_prompt(spec, None, str(tmp_path)) is None  # the baseline never sees the skill
    explicit = load_spec(str(make(tmp_path / "x", "Be terse.")), root=str(tmp_path / "x"))
    assert resolve_system_prompt(explicit, explicit.skill, str(tmp_path / "x")) == "Be terse."
    assert resolve_system_prompt(explicit, None, str(tmp_path / "x")) == "Be terse."


def test_frontmatter() -> None:
    assert split_frontmatter("---\nname: s\n---\nbody\n") == ({"name": "s"}, "body\n")
    assert split_frontmatter("---\nname: s\n---\n") == ({"name": "s"}, "")
    assert split_frontmatter("no frontmatter\n") == ({}, "no frontmatter\n")
    with pytest.raises(SkillmakeError, match="not closed"):
        split_frontmatter("---\nname: s\n")
    with pytest.raises(SkillmakeError, match="must be a mapping"):
        split_frontmatter("---\n- a\n---\nbody")


def test_a_folder_1300_deep_inside_a_skill_is_hashed_without_recursion(tmp_path: Path) -> None:
    """os.walk recursed once per level (RecursionError past ~1,000): planning a spec whose skill holds an
    agent's deep leftover crashed. The deepest file is hashed like any other."""
    from skillmake.core import fstree
    from tests.deepfolder import make_deep

    make(tmp_path)
    top = make_deep(tmp_path / "skills/s/notes", leaf=("leaf.md", "deep\n"))
    try:
        files = manifest(Skill(name="s", path=str(tmp_path / "skills/s"), kind="folder"))["files"]
        assert sorted(files)[-1] == "scripts/run.sh"
        assert any(name.endswith("/d/leaf.md") and name.count("/") == 1301 for name in files)
    finally:
        fstree.remove_tree(top)  # pytest's own clean-up recurses
