"""An interrupted run keeps what finished and never leaves a half-written result that is later trusted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .project import Project

AGENT = '''\
import os, time
from pathlib import Path
here = Path(__file__).resolve().parent
env = os.environ
with open(here / "calls.log", "a") as f:
    f.write(env["SKILLMAKE_CASE"] + " " + env["SKILLMAKE_ARM"] + " " + env["SKILLMAKE_TRIAL"] + "\\n")
if (here / "slow").exists():  # the interrupted run: trials in flight when SIGTERM comes
    time.sleep(0.6)
print("done " + os.environ["SKILLMAKE_TRIAL"])
'''

SPEC = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
trials: 8
cases: [{id: a, prompt: work, checks: [{type: contains, needle: done}]}]
"""


@pytest.mark.parametrize("jobs", [[], ["-n", "3", "-P", "thread"], ["-n", "3", "-P", "process"]],
                         ids=["serial", "thread", "process"])
def test_sigterm_keeps_finished_trials_and_reruns_only_the_rest(tmp_path: Path, jobs: list[str]) -> None:
    p = Project.empty(tmp_path / "int")
    p.write("agent.py", AGENT)
    p.write("skills/s/SKILL.md", "body\n")
    p.write("int.eval.yaml", SPEC)
    p.write("slow", "")  # not part of any key (the agent script is; this file beside it is not)
    proc = subprocess.Popen([sys.executable, "-m", "skillmake", *jobs], cwd=p.root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    actions = p.root / ".skillmake" / "actions"
    deadline = time.monotonic() + 60
    while finished_trials(list(actions.rglob("*.json"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGTERM)
    t0 = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - t0 < 5, err  # trials in flight are stopped, not waited for
    assert proc.returncode == 130
    assert "Traceback" not in err
    started = len(p.calls())
    records = list(actions.rglob("*.json"))
    finished = len(records)
    assert 2 <= finished < 8  # the trials that completed are in the action cache …
    assert not list((p.root / ".skillmake").rglob("*.tmp"))  # … and no temp file was left behind
    (p.root / "slow").unlink()  # the re-run need not wait on its trials: what it runs is what is counted
    run = p.run()
    assert run.code == 0, run.err
    # only the trials without a cached record run again (an in-flight one is simply redone)
    assert run.agent_calls == 8 - finished_trials(records)
    assert started <= 8


def finished_trials(records: list[Path]) -> int:
    import orjson

    try:
        return sum(1 for r in records if orjson.loads(r.read_bytes())["kind"] == "trial")
    except (OSError, ValueError):  # a record being replaced while the run writes it
        return 0
