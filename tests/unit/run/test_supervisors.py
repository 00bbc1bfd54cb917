"""Supervisors serve one command after another (supervisors.py): what one command did or was sent never reaches
the next, a command holds nothing of its supervisor's, and none outlives the process that started it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from skillmake.run import process, supervisors

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PROCESS_TEST_MARKER": str(tmp_path)}


def test_a_stop_sent_after_a_command_ended_does_not_stop_the_next(tmp_path: Path, env: dict[str, str]) -> None:
    done = process.run(["true"], cwd=str(tmp_path), env=env, timeout=30)
    assert done.returncode == 0
    idle = list(supervisors._IDLE)
    assert idle  # given back after a command it saw to its end
    for sup in idle:
        sup.stop()  # as a timeout or an interrupt that came a moment too late would
    time.sleep(0.2)
    again = process.run(["sh", "-c", "sleep 0.3; echo second"], cwd=str(tmp_path), env=env, timeout=30)
    assert (again.returncode, again.stdout, again.error) == (0, b"second\n", None)


def test_a_command_holds_only_its_stdin_stdout_and_stderr(tmp_path: Path, env: dict[str, str]) -> None:
    done = process.run(["python3", "-c", "import os; print(sorted(int(f) for f in os.listdir('/proc/self/fd')))"],
                       cwd=str(tmp_path), env=env, timeout=30)
    fds = json.loads(done.stdout)
    assert set(fds) - {0, 1, 2} <= {3}, fds  # 3: the listing's own handle on the folder


def test_a_supervisor_killed_while_idle_is_replaced(tmp_path: Path, env: dict[str, str]) -> None:
    process.run(["true"], cwd=str(tmp_path), env=env, timeout=30)
    for sup in list(supervisors._IDLE):
        os.kill(sup.pid, signal.SIGKILL)
        sup.proc.wait()
    done = process.run(["echo", "fine"], cwd=str(tmp_path), env=env, timeout=30)
    assert (done.returncode, done.stdout, done.error) == (0, b"fine\n", None)


def test_a_supervisor_serves_again_after_a_timeout(tmp_path: Path, env: dict[str, str]) -> None:
    slow = process.run(["sleep", "30"], cwd=str(tmp_path), env=env, timeout=0.5)
    assert slow.timed_out and slow.returncode is None
    done = process.run(["echo", "next"], cwd=str(tmp_path), env=env, timeout=30)
    assert (done.returncode, done.stdout, done.timed_out) == (0, b"next\n", False)


def test_many_commands_at_once_keep_their_own_input_and_output(tmp_path: Path, env: dict[str, str]) -> None:
    # 1 MiB each way: stdin written while stdout is read, or a full pipe would block both sides.
    results: dict[int, bytes] = {}

    def one(i: int) -> None:
        data = (f"{i:04d}".encode() * (1 << 18))
        done = process.run(["cat"], cwd=str(tmp_path), env=env, timeout=60, stdin=data)
        results[i] = done.stdout if done.returncode == 0 else b"failed"

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: f"{i:04d}".encode() * (1 << 18) for i in range(6)}


EXITING = textwrap.dedent("""\
    import os, sys
    from skillmake.run import process, supervisors
    process.run(["true"], cwd=".", env=dict(os.environ), timeout=30)
    print(*supervisors.ALL, flush=True)
""")


def test_no_supervisor_outlives_the_process_that_started_it(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", EXITING], cwd=Path(__file__).parents[3], capture_output=True,
                          text=True, timeout=60)
    pids = [int(p) for p in done.stdout.split()]
    assert pids, done.stderr
    for pid in pids:  # gone when the process has exited, not merely soon after
        assert not Path(f"/proc/{pid}").exists() or b"Z" in Path(f"/proc/{pid}/stat").read_bytes().split(b")")[-1][:3]


def test_a_command_that_ended_before_a_stop_keeps_its_own_result(tmp_path: Path, env: dict[str, str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # The stop (an interrupt, a timeout) and the command's exit reach the supervisor together: its result is the
    # command's, not "stopped by a signal". The supervisor is held stopped so that both are pending at once.
    monkeypatch.setattr(supervisors, "_resume_if_stopped", lambda pid: None)
    process.run(["true"], cwd=str(tmp_path), env=env, timeout=30)
    sup = supervisors._IDLE[-1]
    out: list[process.Completed] = []
    thread = threading.Thread(target=lambda: out.append(
        process.run(["sh", "-c", "sleep 0.5; echo ok"], cwd=str(tmp_path), env=env, timeout=30)))
    thread.start()
    time.sleep(0.2)
    os.kill(sup.pid, signal.SIGSTOP)
    time.sleep(1.0)  # the command has exited meanwhile, unreaped
    sup.stop()  # SIGTERM, then SIGCONT: the supervisor finds both
    thread.join(30)
    assert (out[0].returncode, out[0].stdout, out[0].error) == (0, b"ok\n", None)
