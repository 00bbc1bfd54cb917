"""A trial folder emptied and reused by the next trial of the same process (workspace.release) is as clean as a new
one: each trial sees only its staged inputs, an empty HOME, its own skill exactly as the key names it (or no
skill folder at all for the baseline), whatever the trial before it left, changed or locked."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .project import Project

# Lists what it can see (the trial folder above its workspace, HOME, the staged skill), then litters all of it.
AGENT = '''\
import json, os, stat, sys
from pathlib import Path

def tree(top):
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            rel = os.path.relpath(path, top)
            kind = "dir" if stat.S_ISDIR(st.st_mode) else "link" if stat.S_ISLNK(st.st_mode) else "file"
            out[rel] = [kind, oct(stat.S_IMODE(st.st_mode))] + ([Path(path).read_text()] if kind == "file" else [])
    return out

root = Path.cwd().parent
skill = os.environ["SKILLMAKE_SKILL"]
seen = {"root": sorted(os.listdir(root)), "workspace": tree("."), "home": tree(os.environ["HOME"]),
        "skill": tree(skill) if skill else None,
        "modes": [oct(stat.S_IMODE(os.lstat(p).st_mode)) for p in (root, ".", os.environ["HOME"])]}
print(json.dumps(seen, sort_keys=True))
for base in (Path("."), Path(os.environ["HOME"]), *([Path(skill)] if skill else [])):
    (base / "left.txt").write_text("left behind")
    (base / "deep" / "er").mkdir(parents=True)
    (base / "deep" / "er" / "file.txt").write_text("deeper")
    os.symlink("/etc/passwd", base / "link")
    os.chmod(base / "deep", 0o500)
if skill:
    Path(skill, "SKILL.md").write_text("changed by the agent")
    os.chmod(skill, 0o500)
os.chmod(".", 0o700)
os.chmod(os.environ["HOME"], 0o500)
if os.environ["SKILLMAKE_TRIAL"] == "2":  # beside the workspace: this folder cannot be reused
    (root / ".claude").mkdir()
'''

SPEC = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
trials: 4
baseline: true
cases:
  - {id: a, prompt: look, input_files: [fixtures/in.txt], checks: [{type: contains, needle: workspace}]}
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="modes and links as Linux has them")
def test_each_trial_sees_a_folder_as_clean_as_a_new_one(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "folders", {
        "agent.py": AGENT, "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n",
        "skills/s/sub/notes.md": "notes\n", "fixtures/in.txt": "input\n", "f.eval.yaml": SPEC})
    (tmp_path / "trials").mkdir()
    run = p.run("-j", "1", env={"SKILLMAKE_TMPDIR": str(tmp_path / "trials")})
    assert run.code == 0, run.err + run.out
    runs = p.root / ".skillmake" / "runs" / "f" / "a"
    seen = {(arm, k): json.loads((runs / arm / f"trial-{k}" / "output.txt").read_text())
            for arm in ("with_skill", "without_skill") for k in range(4)}
    first = seen["with_skill", 0]
    assert first["workspace"] == {"in.txt": ["file", first["workspace"]["in.txt"][1], "input\n"]}
    assert first["home"] == {}
    assert set(first["skill"]) == {"SKILL.md", "sub", "sub/notes.md"}
    assert first["skill"]["SKILL.md"][2] == "---\nname: s\ndescription: d\n---\nbody\n"
    assert first["root"] == ["home", "skill", "workspace"]
    for (arm, k), shown in seen.items():
        if arm == "with_skill":
            assert shown == first, (arm, k)
        else:  # no skill folder, not even an emptied one from a trial before
            assert shown == dict(first, skill=None, root=["home", "workspace"]), (arm, k)
    # Nothing is left where trials ran once the run is over: no file, no spare folder.
    assert [path for path in (tmp_path / "trials").rglob("*") if not path.is_dir()] == []
    assert list((tmp_path / "trials").rglob(".spare-*")) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="modes and links as Linux has them")
def test_doit_workers_leave_no_spare_folder_behind(tmp_path: Path) -> None:
    # A `-P process` worker leaves through os._exit (no atexit): its spare trial folders go with its supervisors.
    p = Project.empty(tmp_path / "workers", {
        "agent.py": AGENT, "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n",
        "skills/s/sub/notes.md": "notes\n", "fixtures/in.txt": "input\n", "f.eval.yaml": SPEC})
    (tmp_path / "trials").mkdir()
    run = p.run("-j", "2", "-P", "process", env={"SKILLMAKE_TMPDIR": str(tmp_path / "trials")})
    assert run.code == 0, run.err + run.out
    assert list((tmp_path / "trials").rglob(".spare-*")) == []
    assert [path for path in (tmp_path / "trials").rglob("*") if not path.is_dir()] == []
