"""An interrupted run keeps what finished and never leaves a half-written result that is later trusted."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.proclist import live
from tests.procproject import write_project

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


# --- an interrupt at any moment: exit 130, one line, no traceback, no trial started after it ---------------------

TIMED_AGENT = '''\
import os, sys, time
from pathlib import Path
here = Path(__file__).resolve().parent
with open(here / "calls.log", "a") as f:
    f.write(f"{time.time():.6f}\\n")
time.sleep(float(os.environ.get("SKILLMAKE_ARGS") or 3))
with open(here / "finished.log", "a") as f:
    f.write(os.environ["SKILLMAKE_TRIAL"] + "\\n")
print("done")
'''

# Three cases of 300 trials: a signal soon after start comes during start-up or planning (or just after it).
LARGE_SPEC = "skill: skills/s\nagent: {kind: command, command: [python3, agent.py]}\ntrials: 300\ncases:\n" + "".join(
    f"  - {{id: c{i}, prompt: work, checks: [{{type: contains, needle: done}}]}}\n" for i in range(3))
# The dodo.py says when doit has loaded it: until then only doit's own start-up runs, which no dodo can reach.
DODO = ('"""Evals of this project."""\nopen("dodo.loading", "w").close()\n'
        'from skillmake.dodo import *  # noqa: E402, F403\n')
MESSAGE = "interrupted; finished trials are kept in the store"


def _timed_project(tmp_path: Path) -> Project:
    p = Project.empty(write_project(tmp_path / "early", agent=TIMED_AGENT, spec=LARGE_SPEC, name="early", dodo=DODO))
    (tmp_path / "trials").mkdir()
    return p


def _catches(pid: int, signum: int = signal.SIGINT) -> bool:
    """Whether `pid` has a handler for `signum`. The interpreter installs its SIGINT handler once it has
    initialised, and before that a SIGINT simply ends it (exit status -2, nothing printed); nothing catches SIGTERM
    before skillmake's handlers are in place (interrupts.install)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return bool(caught & (1 << (signum - 1)))


def _starts(p: Project) -> list[float]:
    log = p.root / "calls.log"
    return [float(t) for t in log.read_text().split()] if log.exists() else []


def _interrupt_at(p: Project, argv: list[str], moment: str, *, ignored: bool = False) -> tuple[int, str, float]:
    """Start `argv` in its own process group, send SIGINT to the group at `moment`; (exit status, stderr, when
    the signal was sent). `ignored`: started with SIGINT ignored, as a script's background job is."""
    env = {**os.environ, "SKILLMAKE_TMPDIR": str(p.root.parent / "trials")}
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if ignored else None
    try:
        proc = subprocess.Popen(argv, cwd=p.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    deadline = time.monotonic() + 60
    if moment == "middle":  # trials are running
        while len(_starts(p)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    else:  # `moment` s after the interpreter is up (skillmake) or doit has started loading the dodo.py (doit)
        def ready() -> bool:
            if argv[2] == "doit":
                return (p.root / "dodo.loading").exists()
            return ignored or _catches(proc.pid)

        while not ready() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(float(moment))
    sent = time.time()
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    return proc.returncode, err, sent


FRONTS = {"skillmake": [sys.executable, "-m", "skillmake"], "doit": [sys.executable, "-m", "doit"]}
EARLY = [(front, mode, moment) for front in FRONTS for mode, moments in
         (("thread", ["0.05", "0.3", "1.0", "middle"]), ("process", ["1.0", "middle"])) for moment in moments]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(("front", "mode", "moment"), EARLY, ids=["-".join(e) for e in EARLY])
def test_an_interrupt_at_any_moment_exits_130_in_one_line(tmp_path: Path, front: str, mode: str,
                                                          moment: str) -> None:
    # Before: a Ctrl-C during start-up or planning printed a KeyboardInterrupt traceback (both front ends).
    p = _timed_project(tmp_path)
    code, err, sent = _interrupt_at(p, [*FRONTS[front], "-n", "4", "-P", mode], moment)
    assert code == 130, err
    assert "Traceback" not in err and err.count(MESSAGE) == 1 and len(err.strip().splitlines()) == 1, err
    # A trial whose supervisor had started may log a moment later; none starts after the signal.
    assert [t for t in _starts(p) if t > sent + 0.1] == []
    assert not (p.root / "finished.log").exists()  # running agents were stopped, not waited for (each takes 3 s)
    assert live(str(tmp_path / "trials")) == []


def test_an_interrupt_is_not_lost_when_sigint_was_ignored_at_start(tmp_path: Path) -> None:
    # Before: started as a script's background job (SIGINT ignored), a Ctrl-C in the first second was dropped
    # and the run went on to the end with exit 0; a later one stopped it. Now the run is stoppable throughout.
    p = _timed_project(tmp_path)
    code, err, sent = _interrupt_at(p, [*FRONTS["skillmake"], "-n", "4", "-P", "thread"], "0.3", ignored=True)
    assert code == 130 and err.count(MESSAGE) == 1, err
    # A first trial may have started by 0.3 s (a run starts in ~0.25 s now); none starts after the signal, and
    # those running were stopped, not waited for (each takes 3 s).
    assert [t for t in _starts(p) if t > sent + 0.1] == []
    assert not (p.root / "finished.log").exists()
    assert live(str(tmp_path / "trials")) == []


# --- repeated interrupts of plain `doit -n 4 -P process`: every run ends, in bounded time ----------------------

SHORT_AGENT = '''\
import os, random, time
from pathlib import Path
here = Path(__file__).resolve().parent
time.sleep(random.uniform(0.1, 0.8))
with open(here / "finished.log", "a") as f:
    f.write(os.environ["SKILLMAKE_TRIAL"] + "\\n")
print("done")
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts processes through /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_repeated_interrupts_never_hang_a_process_pool(tmp_path: Path, signum: int) -> None:
    # Before: 5 of 21 SIGINTs and 1 of 22 SIGTERMs left doit's main process joining a worker forever (a worker
    # blocked on a lock inside a signal handler, another waiting for work that never came).
    import random

    rng = random.Random(20 + signum)
    template = tmp_path / "template"
    for rel, text in {"agent.py": SHORT_AGENT, "skills/s/SKILL.md": "body\n", "dodo.py": DODO,
                      "r.eval.yaml": SPEC.replace("trials: 8", "trials: 12")}.items():
        (template / rel).parent.mkdir(parents=True, exist_ok=True)
        (template / rel).write_text(text)
    (tmp_path / "trials").mkdir()
    env = {**os.environ, "SKILLMAKE_TMPDIR": str(tmp_path / "trials")}
    outcomes = []
    for i in range(10):
        root = tmp_path / f"run{i}"
        shutil.copytree(template, root)
        proc = subprocess.Popen([sys.executable, "-m", "doit", "-n", "4", "-P", "process"], cwd=root, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        # Until the dodo.py's import of skillmake installs the handlers, a signal takes its default action
        # (doit's own start-up, and the first lines of the dodo.py): that is no run of skillmake's yet.
        deadline = time.monotonic() + 60
        while not _catches(proc.pid, signal.SIGTERM) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 2.0))
        os.killpg(proc.pid, signum)
        try:
            _, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"run {i} hung after the signal")
        outcomes.append(proc.returncode)
        assert proc.returncode in (0, 130), err  # 0: it had finished before the signal came
        assert "Traceback" not in err, err
        if proc.returncode == 130:
            assert err.count(MESSAGE) == 1, err
    assert outcomes.count(130) >= 5, outcomes  # most signals came while the run ran
    assert live(str(tmp_path / "trials")) == []
