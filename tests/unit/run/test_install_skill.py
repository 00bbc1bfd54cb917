"""Installing a skill folder into a CLI agent's workspace (claude-code's .claude/skills/, codex's .agents/skills/):
a folder ~1,300 levels deep is copied whole, without recursion (shutil.copytree and rmtree recurse once per level:
RecursionError past ~1,000), and what is left out or refused stays as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillmake.core import fstree
from skillmake.core.errors import SkillmakeError
from skillmake.run.agents.cli_common import install_skill_folder
from tests.deepfolder import make_deep


def _skill(root: Path) -> Path:
    (root / "scripts").mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (root / "scripts" / "run.sh").write_text("echo hi\n")
    os.chmod(root / "scripts" / "run.sh", 0o755)
    (root / "alias.md").symlink_to("SKILL.md")  # a link to a file inside: installed as its content
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref\n")
    return root


def test_a_1300_level_deep_skill_folder_is_installed_whole(tmp_path: Path) -> None:
    source = _skill(tmp_path / "src" / "s")
    make_deep(source / "notes", leaf=("leaf.md", "deep\n"))
    dest = tmp_path / "ws" / ".claude" / "skills" / "s"
    try:
        install_skill_folder(str(source), dest)
        leaf = dest / "notes" / "/".join(["d"] * 1300) / "leaf.md"
        assert leaf.read_text() == "deep\n"
        assert (dest / "SKILL.md").read_text().endswith("body\n")
        assert (dest / "alias.md").read_text() == (dest / "SKILL.md").read_text()
        assert not (dest / "alias.md").is_symlink()
        assert os.stat(dest / "scripts" / "run.sh").st_mode & 0o777 == 0o755
        assert not (dest / ".git").exists()  # VCS folders are no part of the skill
        install_skill_folder(str(source), dest)  # again over the deep copy: replaced, not a RecursionError
        assert leaf.read_text() == "deep\n"
    finally:
        fstree.remove_tree(tmp_path / "src")  # pytest's own clean-up recurses
        fstree.remove_tree(tmp_path / "ws")


def test_a_link_out_of_the_skill_is_refused_and_nothing_is_installed(tmp_path: Path) -> None:
    source = _skill(tmp_path / "src" / "s")
    (tmp_path / "secret.txt").write_text("no\n")
    (source / "leak.md").symlink_to(tmp_path / "secret.txt")
    dest = tmp_path / "ws" / "s"
    with pytest.raises(SkillmakeError, match=r"leak\.md"):
        install_skill_folder(str(source), dest)
    assert not dest.exists()
