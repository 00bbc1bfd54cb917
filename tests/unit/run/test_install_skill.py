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


def test_the_skill_is_copied_whole_links_inside_as_content_vcs_left_out(tmp_path: Path) -> None:
    source = _skill(tmp_path / "src" / "s")
    dest = tmp_path / "ws" / ".claude" / "skills" / "s"
    dest.mkdir(parents=True)
    (dest / "stale.md").write_text("from an earlier install\n")
    install_skill_folder(str(source), dest)
    assert (dest / "SKILL.md").read_text().endswith("body\n")
    assert (dest / "alias.md").read_text() == (dest / "SKILL.md").read_text()
    assert not (dest / "alias.md").is_symlink()
    assert os.stat(dest / "scripts" / "run.sh").st_mode & 0o777 == 0o755
    assert not (dest / ".git").exists()  # VCS folders are no part of the skill
    assert not (dest / "stale.md").exists()  # replaced, not merged


def test_a_link_out_of_the_skill_is_refused_and_nothing_is_installed(tmp_path: Path) -> None:
    source = _skill(tmp_path / "src" / "s")
    (tmp_path / "secret.txt").write_text("no\n")
    (source / "leak.md").symlink_to(tmp_path / "secret.txt")
    dest = tmp_path / "ws" / "s"
    with pytest.raises(SkillmakeError, match=r"leak\.md"):
        install_skill_folder(str(source), dest)
    assert not dest.exists()


def test_a_trial_stages_the_deep_skill_its_key_names_and_installs_it(tmp_path: Path) -> None:
    """The trial's path: staging.stage_skill copies the key's manifest (the deep leaf is hashed like any file) into
    the trial folder (Path.mkdir(parents=True) and the empty-folder prune recursed once per level), then the agent
    installs the staged copy."""
    import orjson

    from skillmake.run.staging import stage_skill
    from skillmake.spec.model import Skill
    from skillmake.spec.skillfiles import manifest

    source = _skill(tmp_path / "src" / "s")
    make_deep(source / "notes", leaf=("leaf.md", "deep\n"))
    make_deep(tmp_path / "trial" / "skill" / "old" / "notes")  # an earlier skill's emptied folders: pruned
    skill = Skill(name="s", path=str(source), kind="folder")
    deep = "notes/" + "/".join(["d"] * 1300) + "/leaf.md"
    try:
        data = orjson.dumps(manifest(skill))
        staged = stage_skill(skill, data, tmp_path / "trial" / "skill")
        assert (Path(staged.path) / deep).read_text() == "deep\n"
        assert not (tmp_path / "trial" / "skill" / "old").exists()
        dest = tmp_path / "ws" / ".agents" / "skills" / "s"
        install_skill_folder(staged.path, dest)
        assert (dest / deep).read_text() == "deep\n"
    finally:
        for top in ("src", "trial", "ws"):
            fstree.remove_tree(tmp_path / top)
