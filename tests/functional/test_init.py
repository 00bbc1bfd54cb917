"""`skillmake init` writes a spec that validates and runs; `skillmake schema` gives editors a stable schema."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from skillmake.commands.scaffold import SCHEMA_URL

from .project import Project

REPO = Path(__file__).resolve().parents[2]
SKILL = "---\nname: shout\ndescription: answers loudly\n---\nAnswer in UPPERCASE.\n"


def sm(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillmake", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def modeline_target(spec: Path) -> Path:
    first = spec.read_text().splitlines()[0]
    m = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
    assert m, first
    return (spec.parent / m.group(1)).resolve()


def test_init_writes_a_spec_beside_the_skill_that_validates_and_runs(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "i", {"skills/shout/SKILL.md": SKILL})
    done = sm(p.root, "init")
    assert done.returncode == 0, done.stderr
    spec = p.root / "skills" / "shout.eval.yaml"
    assert done.stdout.splitlines() == ["wrote schemas/spec.schema.json", "wrote skills/shout.eval.yaml",
                                        "next: skillmake validate skills/shout.eval.yaml && skillmake"]
    schema = modeline_target(spec)
    assert schema == p.root / "schemas" / "spec.schema.json"
    assert schema.read_bytes() == (REPO / "schemas" / "spec.schema.json").read_bytes()
    assert "kind: command" in spec.read_text() and "skill: shout\n" in spec.read_text()
    assert sm(p.root, "validate", "skills/shout.eval.yaml").returncode == 0
    run = sm(p.root)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ran 1 trial and 1 grade" in run.stdout  # offline, no key: the example case passes as written


def test_init_refuses_to_overwrite(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "i", {"skills/shout/SKILL.md": SKILL, "skills/shout.eval.yaml": "mine\n"})
    done = sm(p.root, "init", "skills/shout")
    assert done.returncode == 3  # a usage error; 1 is a spec's failed verdict (issue 20 §5)
    assert "skills/shout.eval.yaml already exists; not overwriting it" in done.stderr
    assert "hint:" in done.stderr and "Traceback" not in done.stderr
    assert p.read("skills/shout.eval.yaml") == "mine\n"
    assert not (p.root / "schemas").exists()  # nothing written at all


@pytest.mark.parametrize("given", ["skills/shout", "skills/shout/SKILL.md"])
def test_init_for_claude_code(tmp_path: Path, given: str) -> None:
    p = Project.empty(tmp_path / "i", {"skills/shout/SKILL.md": SKILL, "skills/other/SKILL.md": SKILL})
    done = sm(p.root, "init", "--agent", "claude-code", given)
    assert done.returncode == 0, done.stderr
    text = p.read("skills/shout.eval.yaml")
    assert "kind: claude-code" in text and "CLAUDE_CODE_OAUTH_TOKEN" in text
    checked = sm(p.root, "validate", "--format", "json", "skills/shout.eval.yaml")
    assert json.loads(checked.stdout)["valid"] is True, checked.stdout


def test_init_for_a_command_file(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "i", {".claude/commands/fix.md": "Fix the bug.\n"})
    done = sm(p.root, "init")
    assert done.returncode == 0, done.stderr
    spec = p.root / ".claude" / "commands" / "fix.eval.yaml"
    assert "skill: fix.md\n" in spec.read_text()
    assert modeline_target(spec).is_file()
    assert sm(p.root, "validate").returncode == 0


def test_init_in_an_empty_folder_starts_a_skill(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    done = sm(root, "init")
    assert done.returncode == 0, done.stderr
    assert "wrote skills/example/SKILL.md" in done.stdout
    checked = sm(root, "validate")
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.strip() == "1 spec(s) valid"


def test_init_with_several_skills_asks_which(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "i", {"skills/a/SKILL.md": SKILL, "skills/b/SKILL.md": SKILL})
    done = sm(p.root, "init")
    assert done.returncode == 3
    assert "2 skills here: skills/a, skills/b" in done.stderr
    assert "skillmake init skills/a" in done.stderr
    assert not list(p.root.rglob("*.eval.yaml"))


def test_init_keeps_an_existing_schema_copy_and_points_at_it(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "i", {"skills/a/SKILL.md": SKILL, "skills/b/SKILL.md": SKILL})
    assert sm(p.root, "init", "skills/a").returncode == 0
    second = sm(p.root, "init", "skills/b")
    assert second.returncode == 0
    assert "schemas/spec.schema.json" not in second.stdout
    assert modeline_target(p.root / "skills" / "b.eval.yaml") == p.root / "schemas" / "spec.schema.json"


def test_init_with_a_missing_path_says_so(tmp_path: Path) -> None:
    done = sm(tmp_path, "init", "skills/nope")
    assert done.returncode == 3
    assert "no skill at skills/nope" in done.stderr and "Traceback" not in done.stderr


# ---- skillmake schema ----------------------------------------------------------------------------------------


def test_schema_prints_the_shipped_schema_and_its_path(tmp_path: Path) -> None:
    printed = sm(tmp_path, "schema")
    assert printed.returncode == 0
    assert json.loads(printed.stdout) == json.loads((REPO / "schemas" / "spec.schema.json").read_text())
    path = sm(tmp_path, "schema", "config", "--path")
    assert path.returncode == 0
    assert Path(path.stdout.strip()).read_bytes() == (REPO / "schemas" / "config.schema.json").read_bytes()
    assert sm(tmp_path, "schema", "nope").returncode == 3


def test_schema_write_copies_it_and_prints_the_modeline(tmp_path: Path) -> None:
    done = sm(tmp_path, "schema", "--write", ".vscode/schemas")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "# yaml-language-server: $schema=.vscode/schemas/spec.schema.json\n"
    copy = tmp_path / ".vscode" / "schemas" / "spec.schema.json"
    assert copy.read_bytes() == (REPO / "schemas" / "spec.schema.json").read_bytes()
    # The printed line is a working modeline for a spec in that folder.
    p = Project.empty(tmp_path, {"skills/s/SKILL.md": SKILL, "s.eval.yaml": done.stdout + "skill: skills/s\n"
                                 "agent: {kind: command, command: [cat]}\n"
                                 "cases: [{id: a, prompt: hi, checks: [{type: contains, needle: hi}]}]\n"})
    assert modeline_target(p.root / "s.eval.yaml") == copy.resolve()
    assert sm(p.root, "validate").returncode == 0
    # Writing again replaces an older copy (after an upgrade).
    copy.write_text("{}")
    assert sm(tmp_path, "schema", "--write", ".vscode/schemas").returncode == 0
    assert copy.read_bytes() == (REPO / "schemas" / "spec.schema.json").read_bytes()


def test_every_schema_has_a_stable_id_named_after_its_file() -> None:
    for path in sorted((REPO / "schemas").glob("*.schema.json")):
        assert json.loads(path.read_text())["$id"] == SCHEMA_URL + path.name, path
