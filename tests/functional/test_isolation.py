"""Each trial runs isolated: fresh workspace and HOME, clean environment, staged copies, group-killing timeout."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from skillmake.run.hermetic import work_root

from .project import Project

AGENT = r'''
import json, os, subprocess, sys, time
from pathlib import Path
case = os.environ["SKILLMAKE_CASE"]
if case == "env":
    print(json.dumps({"home": os.environ["HOME"], "cwd": os.getcwd(), "keys": sorted(os.environ),
                      "home_empty": not any(Path(os.environ["HOME"]).iterdir())}))
elif case == "mutate":
    data = Path("data.csv").read_text()
    Path("data.csv").write_text(data + "row added by trial " + os.environ["SKILLMAKE_TRIAL"] + "\n")
    print(data.count("\n"))
elif case == "files":
    Path("out").mkdir()
    Path("out/a.md").write_text("alpha\n")
    Path("out/b.md").write_text("beta\n")
    Path("notes.txt").write_text("not captured\n")
    print("stdout is not the output here")
elif case == "slow":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    Path(os.environ["PIDFILE"]).write_text(str(child.pid))
    time.sleep(60)
elif case == "setup":
    print(Path("prepared.txt").read_text().strip())
'''

SPEC = '''\
skill: skills/s
agent: {kind: command, command: [python3, agent.py], env: {PIDFILE: "%(pidfile)s"}}
trials: 2
cases:
  - id: env
    prompt: show env
    checks: [{type: contains, needle: home}]
  - id: mutate
    prompt: mutate the input
    input_files: [fixtures/data.csv]
    checks: [{type: equals, value: "2"}]
  - id: files
    prompt: write files
    output_files: ["out/*.md"]
    checks: [{type: contains, needle: beta}, {type: file_exists, file: out/a.md}]
  - id: slow
    prompt: hang
    timeout: 1
    checks: [{type: contains, needle: never}]
  - id: setup
    prompt: read what setup made
    setup: echo prepared-by-setup > prepared.txt
    cleanup: rm prepared.txt; echo cleaned > %(pidfile)s.cleanup
    checks:
      - {type: contains, needle: prepared-by-setup}
      - {type: python, code: "import os\\nassert os.path.exists('prepared.txt'), 'cleanup ran first'"}
'''


def test_trials_are_isolated(tmp_path: Path) -> None:
    root = tmp_path / "iso"
    p = Project.empty(root)
    pidfile = tmp_path / "child.pid"
    p.write("agent.py", AGENT)
    p.write("skills/s/SKILL.md", "---\nname: s\ndescription: d\n---\nbody\n")
    p.write("fixtures/data.csv", "a,b\n1,2\n")
    p.write("iso.eval.yaml", SPEC % {"pidfile": pidfile})
    env = {"ANTHROPIC_API_KEY": "sk-secret-should-not-leak", "SOME_USER_VAR": "x"}
    run = p.run(env=env)
    runs = root / ".skillmake" / "runs" / "iso"

    # env: fresh, empty HOME beside a fresh workspace, in a folder of this trial key and this run only
    # (removed afterwards); no API keys or stray variables.
    seen = json.loads((runs / "env" / "with_skill" / "trial-0" / "output.txt").read_text())
    work = work_root(root / ".skillmake", root)  # outside the project (hermetic.py), not under .skillmake/
    scratch = Path(seen["cwd"]).parent
    assert scratch.parent == work and Path(seen["home"]) == scratch / "home"
    assert not str(scratch).startswith(str(root))
    assert seen["cwd"] == str(scratch / "workspace")
    assert not scratch.exists()  # the view under runs/ is a checkout of the store, not the place it ran
    assert seen["home_empty"]
    assert "ANTHROPIC_API_KEY" not in seen["keys"] and "SOME_USER_VAR" not in seen["keys"]
    assert "SKILLMAKE_PROMPT" in seen["keys"] and "PIDFILE" in seen["keys"]

    # mutate: each trial got its own fresh copy; the fixture itself is untouched.
    for k in (0, 1):
        assert (runs / "mutate" / "with_skill" / f"trial-{k}" / "output.txt").read_text().strip() == "2"
    assert (root / "fixtures" / "data.csv").read_text() == "a,b\n1,2\n"

    # files: output_files globs are captured and become the output text (clauditor semantics).
    record = json.loads((runs / "files" / "with_skill" / "trial-0" / "trial.json").read_text())
    assert sorted(record["outputs"]["files"]) == ["out/a.md", "out/b.md"]
    assert (runs / "files" / "with_skill" / "trial-0" / "output.txt").read_text() == "alpha\n\nbeta\n"

    # slow: the timeout killed the whole process group, grandchild included; recorded, not cached.
    slow = json.loads((runs / "slow" / "with_skill" / "trial-0" / "trial.json").read_text())
    assert slow["outcome"] == "timeout"
    child = int(pidfile.read_text())
    time.sleep(0.2)
    assert not _alive(child)

    # setup ran before the agent, cleanup after it — and after the workspace was kept, as caliper runs a task's
    # assert before its cleanup: the kept workspace (which python checks read) is what the task left.
    assert (runs / "setup" / "with_skill" / "trial-0" / "output.txt").read_text().strip() == "prepared-by-setup"
    assert (runs / "setup" / "with_skill" / "trial-0" / "workspace" / "prepared.txt").exists()
    assert Path(f"{pidfile}.cleanup").read_text() == "cleaned\n"
    assert json.loads((runs / "setup" / "with_skill" / "trial-0" / "grade.json").read_text())["outcome"] == "pass"

    # the timeout is an error-class outcome: the run is red, and the next run retries only those trials.
    assert run.code == 1, run.out + run.err
    again = p.run()
    assert again.trials == 2  # slow × 2 trials; everything else came from the store


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); check its state
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_command_not_found_is_an_error_outcome(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "nf")
    p.write("skills/s/SKILL.md", "body\n")
    p.write("nf.eval.yaml", "skill: skills/s\nagent: {kind: command, command: [no-such-agent-xyz]}\n"
                            "cases: [{id: a, prompt: hi, checks: [{type: contains, needle: x}]}]\n")
    # Refused before any trial (issue 20 §5: `validate` passed it, then every trial erred).
    run = p.run()
    assert run.code == 2, run.out + run.err
    assert "nf.eval.yaml:2:34 /agent/command/0: the agent's program 'no-such-agent-xyz' is not found" in run.err
    assert not (p.root / ".skillmake/runs/nf").exists()
    assert "Traceback" not in run.err
