"""Hermetic trials with the command agent: a trial's working folder has none of the project's agent setup above
it, and a trial runs against exactly the content its key names, whatever happens to the files during the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from .project import Project

WHERE = r'''
import json, os
from pathlib import Path
from typing import Any
names = [".claude", "CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md", ".agents", ".codex", ".git"]
cwd = Path.cwd().resolve()
found = [str(a / n) for a in (cwd, *cwd.parents) for n in names if os.path.lexists(a / n)]
print(json.dumps({"cwd": str(cwd), "found": found, "skill": os.environ["SKILLMAKE_SKILL"],
                  "home": os.environ["HOME"]}))
'''

DECOYS = {".claude/skills/decoy/SKILL.md": "---\nname: decoy\ndescription: decoy\n---\nDECOY\n",
          ".claude/commands/decoy.md": "DECOY\n", "CLAUDE.md": "DECOY\n", "AGENTS.md": "DECOY\n",
          ".agents/skills/decoy/SKILL.md": "DECOY\n", ".codex/config.toml": "# DECOY\n", ".git/HEAD": "x\n"}


def test_no_agent_setup_is_visible_from_a_trials_folder(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    spec = ("skill: skills/s\nagent: {kind: command, command: [python3, where.py]}\nbaseline: true\n"
            "cases:\n  - id: where\n    prompt: where am I\n    checks: [{type: contains, needle: cwd}]\n")
    p = Project.empty(root, {**DECOYS, "where.py": WHERE, "where.eval.yaml": spec,
                             "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n"})
    run = p.run()
    assert run.code == 0, run.out + run.err
    for arm in ("with_skill", "without_skill"):
        seen = json.loads((root / ".skillmake/runs/where/where" / arm / "trial-0/output.txt").read_text())
        assert seen["found"] == [], f"{arm}: the agent can see {seen['found']}"
        for name in ("cwd", "home", "skill"):
            assert not seen[name].startswith(str(root)), f"{arm}: its {name} is inside the project: {seen[name]}"
    with_skill = json.loads((root / ".skillmake/runs/where/where/with_skill/trial-0/output.txt").read_text())
    assert Path(with_skill["skill"]).parent.parent == Path(with_skill["cwd"]).parent  # staged in its own folder


# -- the content its key names (issue 20 §2) ------------------------------------------------------------------------

SLOW = r'''
import os, sys, time
from pathlib import Path
from typing import Any
with open(Path(__file__).resolve().parent / "calls.log", "a") as log:
    env = os.environ
    log.write(env["SKILLMAKE_CASE"] + " " + env["SKILLMAKE_ARM"] + " " + env["SKILLMAKE_TRIAL"] + "\n")
time.sleep(float(os.environ.get("NAP", "0.6")))
text = Path(os.environ["SKILLMAKE_SKILL"], "SKILL.md").read_text() if os.environ["SKILLMAKE_SKILL"] else ""
line = [l for l in text.splitlines() if l.startswith("ITER=")]
print(line[0] if line else "ITER=none", open("fixture.txt").read().strip())
'''

SPEC = '''\
skill: skills/iter
agent: {kind: command, command: [python3, slow.py]}
trials: 6
cases:
  - id: a
    prompt: say it
    input_files: [fixture.txt]
    checks: [{type: contains, needle: "ITER="}]
  - id: b
    prompt: say it again
    input_files: [fixture.txt]
    checks: [{type: contains, needle: "ITER="}]
'''


def _wait_for_calls(p: Project, n: int, proc: subprocess.Popen[str], limit: float = 60) -> None:
    end = time.monotonic() + limit
    while len(p.calls()) < n:
        assert proc.poll() is None, "the run ended before the edit"
        assert time.monotonic() < end, "the run did not start its trials"
        time.sleep(0.05)


def _outputs(root: Path) -> list[str]:
    """The output of every trial result in the store's action cache."""
    store = root / ".skillmake"
    out = []
    for path in (store / "actions").rglob("*.json"):
        record = orjson.loads(path.read_bytes())
        if record.get("kind") != "trial":
            continue
        digest = record["outputs"]["output"][7:]
        out.append((store / "objects" / digest[:2] / digest[2:]).read_text())
    return out


def _edit_during_run(p: Project, rel: str, old: str, new: str) -> None:
    """Start `skillmake -j 2`, change `rel` once two trials have started, wait for the end, change it back."""
    proc = subprocess.Popen([sys.executable, "-m", "skillmake", "-j", "2"], cwd=p.root, env=dict(os.environ),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_calls(p, 2, proc)
        p.replace(rel, old, new)
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode in (0, 1), out + err
    p.replace(rel, new, old)


def test_a_skill_edited_during_a_run_never_caches_its_results_under_the_old_key(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "proj", {"slow.py": SLOW, "fixture.txt": "F1\n", "iter.eval.yaml": SPEC,
                                          "skills/iter/SKILL.md": "---\nname: iter\ndescription: d\n---\nITER=AAA\n"})
    _edit_during_run(p, "skills/iter/SKILL.md", "ITER=AAA", "ITER=BBB")
    outputs = _outputs(p.root)
    assert outputs and all("ITER=AAA" in o for o in outputs), outputs
    again = p.run()  # the trials that met BBB were not recorded: they run now, against AAA
    assert again.code == 0, again.out + again.err
    assert again.agent_calls == 12 - len(outputs)
    outputs = _outputs(p.root)
    assert len(outputs) == 12 and all("ITER=AAA" in o and "BBB" not in o for o in outputs), outputs
    assert p.run().agent_calls == 0


def test_an_input_file_edited_during_a_run_never_caches_its_results_under_the_old_key(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "proj", {"slow.py": SLOW, "fixture.txt": "F1\n", "iter.eval.yaml": SPEC,
                                          "skills/iter/SKILL.md": "---\nname: iter\ndescription: d\n---\nITER=AAA\n"})
    _edit_during_run(p, "fixture.txt", "F1", "F2")
    outputs = _outputs(p.root)
    assert outputs and all(o.strip().endswith("F1") for o in outputs), outputs
    again = p.run()
    assert again.agent_calls == 12 - len(outputs)
    assert all("F2" not in o for o in _outputs(p.root))


def test_an_agent_program_edited_during_a_run_never_caches_its_results_under_the_old_key(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "proj", {"slow.py": SLOW, "fixture.txt": "F1\n", "iter.eval.yaml": SPEC,
                                          "skills/iter/SKILL.md": "---\nname: iter\ndescription: d\n---\nITER=AAA\n"})
    _edit_during_run(p, "slow.py", "print(line[0]", "print('EDITED', line[0]")
    outputs = _outputs(p.root)
    assert all("EDITED" not in o for o in outputs), outputs
    again = p.run()
    assert again.agent_calls == 12 - len(outputs)
    assert all("EDITED" not in o for o in _outputs(p.root))


CHECKED = '''\
skill: skills/iter
agent: {kind: command, command: [python3, slow.py]}
trials: 6
cases:
  - id: a
    prompt: say it
    input_files: [fixture.txt]
    cleanup: rm -f fixture.txt
    checks: [{type: python, script: checks/c.py}]
'''


def test_a_check_script_edited_during_a_run_never_caches_its_verdict_under_the_old_key(tmp_path: Path) -> None:
    # A case with a cleanup runs its python checks inside the trial (caliper's order): they are part of the trial key.
    p = Project.empty(tmp_path / "proj", {"slow.py": SLOW, "fixture.txt": "F1\n", "iter.eval.yaml": CHECKED,
                                          "checks/c.py": "assert True, 'V1'\n",
                                          "skills/iter/SKILL.md": "---\nname: iter\ndescription: d\n---\nITER=AAA\n"})
    _edit_during_run(p, "checks/c.py", "assert True, 'V1'", "assert False, 'V2'")
    trials = _trial_records(p.root)
    assert all(v["passed"] for r in trials for v in r["checks_before_cleanup"]), trials  # none judged by V2
    again = p.run()
    assert again.code == 0, again.out + again.err
    assert again.agent_calls == 6 - len(trials)
    trials = _trial_records(p.root)
    assert len(trials) == 6 and all(v["passed"] for r in trials for v in r["checks_before_cleanup"])


def _trial_records(root: Path) -> list[dict[str, Any]]:
    records = [orjson.loads(f.read_bytes()) for f in (root / ".skillmake" / "actions").rglob("*.json")]
    return [r for r in records if r.get("kind") == "trial"]


def test_a_check_script_that_changes_while_the_grade_runs_is_not_cached(tmp_path: Path) -> None:
    # Stands in for an edit between the grade key and the check's read: the script rewrites itself as it runs.
    spec = ("skill: skills/iter\nagent: {kind: command, command: [python3, slow.py], env: {NAP: '0'}}\n"
            "cases:\n  - id: a\n    prompt: say it\n    input_files: [fixture.txt]\n"
            "    checks: [{type: python, script: checks/c.py}]\n")
    selfish = "import pathlib\nhere = pathlib.Path(__file__)\nhere.write_text(here.read_text() + '# ran\\n')\n"
    p = Project.empty(tmp_path / "proj", {"slow.py": SLOW, "fixture.txt": "F1\n", "iter.eval.yaml": spec,
                                          "checks/c.py": selfish,
                                          "skills/iter/SKILL.md": "---\nname: iter\ndescription: d\n---\nITER=AAA\n"})
    run = p.run()
    assert run.code == 1
    assert not (p.root / ".skillmake/runs/iter/a/with_skill/trial-0/grade.json").exists()  # no result
    attempts = [orjson.loads(f.read_bytes()) for f in (p.root / ".skillmake/attempts").rglob("*.json")]
    grades = [r for r in attempts if r["kind"] == "grade"]
    assert len(grades) == 1 and grades[0]["outcome"] == "error", attempts
    assert "checks/c.py changed while the grade ran" in grades[0]["error"]
