"""A run never leaves a process behind: after SIGINT, SIGTERM or SIGKILL of `skillmake` (threads or processes)
or of plain `doit`, no agent, daemon it started, supervisor or doit worker is alive, and nothing was recorded
as a result of the interrupted trials."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.proclist import live
from tests.procproject import daemon_lines, one_case_spec, write_project

from .project import Project

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts processes through /proc")

# Leaves a classic daemon (fork, setsid, fork) and a setsid'd child holding stdout, logs that it started, waits.
AGENT = '''\
import os, subprocess, time
from pathlib import Path
''' + daemon_lines(60) + '''subprocess.Popen(["sleep", "61"], start_new_session=True)
with open(Path(__file__).resolve().parent / "calls.log", "a") as log:
    log.write(os.environ["SKILLMAKE_TRIAL"] + "\\n")
time.sleep(60)
print("done")
'''



def _project(tmp_path: Path) -> Project:
    return Project.empty(write_project(tmp_path / "procs", agent=AGENT, spec=one_case_spec(3), name="procs"))


def _trials(p: Project) -> str:
    """Where the project's trials run (outside it, hermetic.py): a path every agent's environment names."""
    folder = p.root.parent / "trials"
    folder.mkdir(exist_ok=True)
    return str(folder)


def _env(p: Project, marker: str) -> dict[str, str]:
    # RUN_MARKER reaches the run and its doit workers, not the agents; the trials' folder reaches the agents.
    return {**os.environ, "RUN_MARKER": marker, "SKILLMAKE_TMPDIR": _trials(p)}


def _start(p: Project, argv: list[str], marker: str) -> subprocess.Popen[str]:
    env = _env(p, marker)
    proc = subprocess.Popen(argv, cwd=p.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(p.calls()) < 3:  # every agent has started its daemons
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the agents never started"
        time.sleep(0.05)
    return proc


def _settle(*markers: str, within: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within
    while (left := live(*markers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def _no_result_recorded(p: Project) -> None:
    assert not list((p.root / ".skillmake" / "actions").rglob("*.json"))  # nothing cached …
    for kept in (p.root / ".skillmake").rglob("trial.json"):  # … and no kept record says it completed
        assert '"completed"' not in kept.read_text()


MODES = {"thread": ["-n", "3", "-P", "thread"], "process": ["-n", "3", "-P", "process"]}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_stops_every_process_and_exits_130(tmp_path: Path, mode: str, signum: int) -> None:
    p = _project(tmp_path)
    workspace, marker = _trials(p), uuid.uuid4().hex
    proc = _start(p, [sys.executable, "-m", "skillmake", *MODES[mode]], marker)
    assert len(live(workspace)) >= 12  # per trial: supervisor, agent, daemon, setsid'd sleep
    t0 = time.monotonic()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 10  # no trial is waited for (each would take 60 s)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.count("skillmake: interrupted; finished trials are kept") == 1
    # Gone when the run has exited (on a quiet machine, at once; a loaded CI box gets a few seconds).
    assert _settle(workspace, marker) == []
    _no_result_recorded(p)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_killed_run_leaves_no_process_behind(tmp_path: Path, mode: str) -> None:
    p = _project(tmp_path)
    workspace, marker = _trials(p), uuid.uuid4().hex
    proc = _start(p, [sys.executable, "-m", "skillmake", *MODES[mode]], marker)
    assert len(live(workspace)) >= 12  # the agents and their daemons are there to be found
    proc.kill()
    proc.communicate(timeout=30)
    assert _settle(workspace, marker) == []  # agents, their daemons, supervisors and doit workers alike
    _no_result_recorded(p)


@pytest.mark.parametrize("mode", ["serial", "thread"])
def test_plain_doit_interrupted_exits_130_with_one_line(tmp_path: Path, mode: str) -> None:
    p = _project(tmp_path)
    workspace, marker = _trials(p), uuid.uuid4().hex
    if mode == "serial":
        p.replace("procs.eval.yaml", "trials: 3", "trials: 1")
    argv = [sys.executable, "-m", "doit", *([] if mode == "serial" else MODES["thread"])]
    env = _env(p, marker)
    proc = subprocess.Popen(argv, cwd=p.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(p.calls()) < (1 if mode == "serial" else 3):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the agents never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.count("interrupted; finished trials are kept") == 1
    assert live(workspace, marker) == []
    _no_result_recorded(p)


# Double-forks a daemon, then kills (or stops) its own supervisor: the daemon is left with no supervisor.
ESCAPING_AGENT = '''\
import os, signal, time
''' + daemon_lines(60) + '''time.sleep(0.2)
os.kill(os.getppid(), signal.SIG{how})
print("done")
'''


@pytest.mark.parametrize("how", ["KILL", "STOP"])
@pytest.mark.parametrize("argv", [["skillmake", "-n", "2", "-P", "thread"], ["skillmake", "-n", "2", "-P", "process"],
                                  ["doit"]], ids=["thread", "process", "doit"])
def test_a_daemon_whose_supervisor_was_killed_does_not_outlive_the_run(tmp_path: Path, argv: list[str],
                                                                      how: str) -> None:
    # Before: the daemon lived on under PID 1 after the run had ended.
    p = _project(tmp_path)
    p.write("agent.py", ESCAPING_AGENT.replace("{how}", how))
    p.replace("procs.eval.yaml", "trials: 3", "trials: 2\ntimeout: 20")
    marker = uuid.uuid4().hex
    done = subprocess.run([sys.executable, "-m", *argv], cwd=p.root, env=_env(p, marker), capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert live(_trials(p), marker) == []  # at once: the run ended what its trials left
