"""Only the skill's own files are the skill (issue 19 §1 and §3): in caliper's layout — the spec, its assertions,
the project's config and the run's `--output` file all in the skill's folder — none of them is hashed into the
skill or installed into a trial, so writing them re-runs nothing (agent calls counted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

AGENT = r'''
import json, os, sys
from pathlib import Path
with open(os.environ["CALLS"], "a") as log:
    log.write(os.environ["SKILLMAKE_CASE"] + " " + os.environ["SKILLMAKE_ARM"] + "\n")
skill = os.environ["SKILLMAKE_SKILL"]
seen = sorted(str(p.relative_to(skill)) for p in Path(skill).rglob("*") if p.is_file()) if skill else []
print(json.dumps(seen))
'''

SPEC = '''\
skill: .
agent: {kind: command, command: [python3, %s], env: {CALLS: %s}}
baseline: true
trials: 2
cases:
  - id: one
    prompt: list the skill
    checks: [{type: contains, needle: "["}, {type: python, script: assertions/check.py}]
  - id: two
    prompt: list it again
    checks: [{type: contains, needle: "["}]
'''


class Folder:
    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "skill"  # the project root is the skill's folder, as in caliper's layout
        self.calls = tmp / "calls.log"
        self.agent = tmp / "agent.py"
        self.agent.write_text(AGENT)
        self.write("SKILL.md", "---\nname: lister\ndescription: lists\n---\nList your own files.\n")
        self.write("reference.md", "part of the skill\n")
        self.write("scripts/helper.sh", "echo part of the skill too\n")
        self.write("skillmake.toml", "trials = 2\n")
        self.write("lister.eval.yaml", SPEC % (json.dumps(str(self.agent)), json.dumps(str(self.calls))))
        self.write("assertions/check.py", "assert output.startswith('[')\n")

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def run(self, *args: str) -> int:
        """Run skillmake; the number of agent calls it made."""
        before = len(self.calls.read_text().splitlines()) if self.calls.exists() else 0
        env = dict(os.environ)
        done = subprocess.run([sys.executable, "-m", "skillmake", *args], cwd=self.root, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return len(self.calls.read_text().splitlines()) - before


def test_evals_results_and_config_in_the_skill_folder_are_not_the_skill(tmp_path: Path) -> None:
    f = Folder(tmp_path)
    assert f.run() == 8  # 2 cases × 2 arms × 2 trials
    view = f.root / ".skillmake/runs/lister/one/with_skill/trial-0/output.txt"
    assert json.loads(view.read_text()) == ["SKILL.md", "reference.md", "scripts/helper.sh"]  # installed: only these

    assert f.run("--output", "out.json") == 0  # caliper's --output, written into the skill's folder
    assert json.loads((f.root / "out.json").read_text())["run_id"]
    assert f.run("--output", "out.json") == 0  # the file now exists and changed: still nothing to run
    assert f.run() == 0

    # What the tools write there, and more evals: none of it is the skill.
    f.write(".caliper/results/lister/2026-05-22T14-23-01Z.json", '{"task_results": [], "aggregate": {}}\n')
    f.write("caliper-out.json", json.dumps({"task_results": [{"id": "task-001"}], "aggregate": {"pass": 1}}))
    f.write("assertions/check2.py", "assert True\n")
    f.write("other.eval.yaml", (f.root / "lister.eval.yaml").read_text().replace("cases:", "name: other\ncases:"))
    f.write("skillmake.toml", "trials = 2\njobs = 2\n")
    f.write(".clauditor/iteration-1/lister/grading.json", "{}\n")
    f.write("schemas/spec.schema.json", '{"$id": "https://skillmake.dev/schemas/spec.schema.json"}\n')
    assert f.run() == 0  # the new spec `other` has the same inputs as lister: its trials are lister's
    keys = {json.loads((f.root / ".skillmake/runs" / s / "one/with_skill/trial-0/trial.json").read_text())["key"]
            for s in ("lister", "other")}
    assert len(keys) == 1

    # The control: a file of the skill itself re-runs the with_skill trials, and only those.
    f.write("reference.md", "part of the skill, edited\n")
    assert f.run() == 4  # 2 cases × 2 trials of with_skill; both specs share them
    assert json.loads(view.read_text()) == ["SKILL.md", "reference.md", "scripts/helper.sh"]
