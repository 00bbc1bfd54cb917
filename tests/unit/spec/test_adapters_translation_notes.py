"""What a translation from another tool's format did not carry over (adapters' Translation.notes) rides on the
Spec and is shown by `skillmake validate -v` and `--format json`; it is never a key input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from skillmake.run.keys import KeyMaker, grade_part
from skillmake.spec.loader import load_spec
from skillmake.spec.model import Spec

EVALS = {"skill_name": "x", "version": "1.0",
         "evals": [{"id": 0, "prompt": "p", "expected_output": "done",
                    "assertions": [{"name": "a", "description": "says done", "type": "custom"}]}]}
NATIVE = "skill: skills/x\nagent: {kind: command, command: [python3, a.py]}\ncases:\n  - {id: c, prompt: p, " \
         "checks: [{type: contains, needle: p}]}\n"
FILE = "skills/x/evals/evals.json"
AGENT = {"kind": "command", "command": ["python3", "a.py"]}
VERSION_NOTE = "version: kept in the seed only (no native twin)"


def _project(root: Path, evals: dict | None = None) -> Path:
    (root / "skills/x/evals").mkdir(parents=True)
    (root / "skills/x/SKILL.md").write_text("---\nname: x\ndescription: d\n---\nbody\n")
    (root / FILE).write_text(json.dumps(evals or EVALS))
    (root / "skillmake.toml").write_text('agent = {kind = "command", command = ["python3", "a.py"]}\n')
    (root / "a.py").write_text("print(1)\n")
    (root / "n.eval.yaml").write_text(NATIVE)
    return root


def _validate(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillmake", "validate", *args], cwd=root, capture_output=True,
                          text=True, timeout=60)


def _load(root: Path, rel: str = FILE) -> Spec:
    return load_spec(str(root / rel), root=str(root), default_agent=AGENT)


def test_a_seed_spec_carries_its_translation_notes_and_a_native_one_none(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert VERSION_NOTE in _load(root).notes
    assert _load(root, "n.eval.yaml").notes == ()


def test_notes_are_not_key_inputs(tmp_path: Path) -> None:
    """Dropping `version` (a noted field) removes a note and changes no key."""
    noted = _project(tmp_path / "a")
    plain = _project(tmp_path / "b", {k: v for k, v in EVALS.items() if k != "version"})
    keys = []
    for root in (noted, plain):
        spec = _load(root)
        case = spec.cases[0]
        keys.append((grade_part(spec, case).digest,
                     [KeyMaker(str(root)).trial_key(spec, case, arm, 0).inputs() for arm in spec.arms]))
    assert VERSION_NOTE in _load(noted).notes and VERSION_NOTE not in _load(plain).notes
    assert keys[0] == keys[1]


def test_validate_verbose_prints_one_line_per_note_under_the_file(tmp_path: Path) -> None:
    root = _project(tmp_path)
    done = _validate(root, "-v")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"note: {FILE}: {VERSION_NOTE}" in lines
    assert all(line.startswith(f"note: {FILE}: ") for line in lines[:-1]) and lines[-1] == "2 spec(s) valid"
    assert _validate(root, "--verbose", "n.eval.yaml").stdout == "1 spec(s) valid\n"  # a native spec has none


def test_validate_without_verbose_prints_no_notes(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert _validate(root).stdout == "2 spec(s) valid\n"
    assert _validate(root, "-q", "-v").stdout == ""


def test_validate_json_lists_the_notes(tmp_path: Path) -> None:
    root = _project(tmp_path)
    payload = json.loads(_validate(root, "--format", "json").stdout)
    assert {"file": FILE, "note": VERSION_NOTE} in payload["notes"]
    assert {n["file"] for n in payload["notes"]} == {FILE}
    native = json.loads(_validate(root, "--format", "json", "n.eval.yaml").stdout)
    assert native == {"valid": True, "files": 1, "errors": []}  # unchanged when no spec has a note
