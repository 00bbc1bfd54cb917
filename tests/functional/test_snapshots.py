"""caliper's result snapshots: a run that changes a report saves reports/<spec>/snapshots/<ts>-<run id>.json with
the report's digest and verdict, the skill's files and referenced files by digest, and the project's git commit."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from .project import AGENT, Project

REPO = Path(__file__).resolve().parents[2]
SPEC = '''\
skill: skills/alpha
agent: {kind: command, command: [python3, agent.py]}
cases:
  - id: one
    prompt: say one
    input_files: [fixtures/shared.txt]
    checks: [{type: contains, needle: ONE}, {type: python, script: checks/ok.py}]
'''
FILES = {"agent.py": AGENT, "alpha.eval.yaml": SPEC, "fixtures/shared.txt": "shared input\n",
         "checks/ok.py": "def check(output, workspace):\n    return True\n",
         "skills/alpha/SKILL.md": "---\nname: alpha\ndescription: shouts\n---\nAnswer in UPPERCASE.\n",
         "skills/alpha/notes.md": "extra\n"}


def snapshots(project: Project) -> list[dict[str, Any]]:
    folder = project.root / ".skillmake" / "reports" / "alpha" / "snapshots"
    schema = json.loads((REPO / "schemas" / "snapshot.schema.json").read_text())
    out = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        assert list(Draft7Validator(schema).iter_errors(data)) == []
        assert path.name.endswith(f"-{data['run_id']}.json")
        out.append(data)
    return out


def git(root: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(root), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@needs_git
def test_two_runs_with_a_skill_edit_give_two_snapshots_with_the_repos_commit(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "proj", FILES)
    git(project.root, "init", "-q")
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", "first")
    first_sha = git(project.root, "rev-parse", "HEAD").strip()
    assert project.run().code == 0
    [one] = snapshots(project)
    assert one["git"] == {"sha": first_sha}
    assert one["skill"]["path"] == "skills/alpha" and set(one["skill"]["files"]) == {"SKILL.md", "notes.md"}
    assert set(one["referenced"]) == {"fixtures/shared.txt", "checks/ok.py"}
    assert one["report"]["passed"] is True and one["spec_file"] == "alpha.eval.yaml"

    project.replace("skills/alpha/SKILL.md", "UPPERCASE", "UPPERCASE, always")
    git(project.root, "commit", "-q", "-am", "second")
    second_sha = git(project.root, "rev-parse", "HEAD").strip()
    assert project.run().code == 0
    first, second = snapshots(project)
    assert first == one
    assert second["skill"]["digest"] != first["skill"]["digest"]
    assert second["skill"]["files"]["SKILL.md"] != first["skill"]["files"]["SKILL.md"]
    assert second["skill"]["files"]["notes.md"] == first["skill"]["files"]["notes.md"]
    assert second["report"]["digest"] != first["report"]["digest"]
    assert second["run_id"] != first["run_id"] and second["git"] == {"sha": second_sha}


def test_a_run_that_changes_nothing_adds_no_snapshot(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "proj", FILES)
    assert project.run().code == 0
    assert project.run("report").code == 0
    assert project.run().code == 0
    [only] = snapshots(project)
    history = (project.root / ".skillmake" / "reports" / "alpha" / "history.jsonl").read_text().splitlines()
    assert len(history) == 1 and json.loads(history[0])["digest"] == only["report"]["digest"]


def test_outside_a_git_repository_the_snapshot_has_no_commit(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "proj", FILES)
    assert project.run().code == 0
    [only] = snapshots(project)
    assert only["git"] is None


@needs_git
def test_a_repository_with_no_commit_yet_gives_no_commit_and_a_packed_ref_is_read(tmp_path: Path) -> None:
    from skillmake.results.snapshot import _git

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    assert _git(str(root)) is None  # HEAD names a branch with no commit: no SHA, no failure
    (root / "f").write_text("x")
    git(root, "add", "f")
    git(root, "commit", "-q", "-m", "one")
    sha = git(root, "rev-parse", "HEAD").strip()
    git(root, "pack-refs", "--all")  # the branch now lives in packed-refs only
    assert _git(str(root / "sub" if (root / "sub").mkdir() is None else root)) == {"sha": sha}


def test_every_file_a_snapshot_names_is_kept_in_the_store_by_content(tmp_path: Path) -> None:
    """caliper's snapshot holds the skill's content: here each digest resolves to the bytes in the store, after the
    files themselves have changed or gone."""
    project = Project.empty(tmp_path / "proj", FILES)
    assert project.run().code == 0
    [snap] = snapshots(project)
    project.replace("skills/alpha/SKILL.md", "UPPERCASE", "lowercase")
    (project.root / "fixtures" / "shared.txt").unlink()
    objects = project.root / ".skillmake" / "objects"
    wanted = {**{f"skills/alpha/{rel}": d for rel, d in snap["skill"]["files"].items()}, **snap["referenced"]}
    for rel, digest in wanted.items():
        hexd = digest.removeprefix("sha256:")
        stored = (objects / hexd[:2] / hexd[2:]).read_bytes()
        assert stored == FILES[rel].encode(), rel
