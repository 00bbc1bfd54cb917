"""`skillmake watch`: a save re-runs exactly what went stale; Ctrl-C/SIGTERM stop the run and exit 0."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tests.proclist import live

from .project import Project

IDLE = "watching for changes"
WATCH = [sys.executable, "-m", "skillmake", "watch"]


class Watch:
    """A running `skillmake watch` whose output lines are read as they come."""

    def __init__(self, root: Path, *args: str) -> None:
        self.marker = f"SKILLMAKE_WATCH_TEST={uuid.uuid4().hex}"
        name, value = self.marker.split("=")
        self.proc = subprocess.Popen([*WATCH, *args], cwd=root, env=dict(os.environ, **{name: value}),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        with self.proc.stdout:
            for line in self.proc.stdout:
                self.lines.put(line.rstrip("\n"))

    def until(self, text: str, timeout: float = 60) -> list[str]:
        """The lines up to and including the next one containing `text`."""
        got: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                so_far = "\n".join(self.seen)
                raise AssertionError(f"no {text!r} within {timeout}s; output so far:\n{so_far}") from None
            got.append(line)
            self.seen.append(line)
            if text in line:
                return got

    def quiet_for(self, seconds: float) -> list[str]:
        """Whatever it printed in the next `seconds` (nothing, when no cycle started)."""
        time.sleep(seconds)
        got = []
        while not self.lines.empty():
            got.append(self.lines.get())
        self.seen.extend(got)
        return got

    def stop(self, signum: int = signal.SIGINT) -> tuple[int, list[str]]:
        self.proc.send_signal(signum)
        code = self.proc.wait(timeout=30)
        self.reader.join(10)  # it has read everything once the pipe is closed
        rest = []
        while not self.lines.empty():
            rest.append(self.lines.get())
        self.seen.extend(rest)
        return code, rest

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(10)


def test_a_save_reruns_exactly_what_went_stale_and_ctrl_c_exits_0(tmp_path: Path) -> None:
    p = Project(tmp_path / "w")
    w = Watch(p.root)
    try:
        first = w.until(IDLE)
        assert "first run" in first[0]
        assert len(p.calls()) == 24  # every trial of both specs ran once

        # A burst of saves is one change; only alpha's with_skill trials depend on SKILL.md.
        before = len(p.calls())
        for n in range(3):
            p.replace("skills/alpha/SKILL.md", "UPPERCASE.", f"UPPERCASE.{n * ' '} ")
            time.sleep(0.05)
        cycle = w.until(IDLE)
        assert "changed skills/alpha/SKILL.md" in cycle[0]
        assert sorted(p.calls()[before:]) == sorted(f"{c} with_skill {k}" for c in ("one", "two", "three")
                                                    for k in (0, 1))
        assert w.quiet_for(1.0) == []  # the burst did not leave a second cycle behind

        # Editor temp files and the store are not watched: no cycle.
        p.write("skills/alpha/.SKILL.md.swp", "swap")
        p.write("skills/alpha/4913", "")
        p.write("skills/alpha/SKILL.md~", "backup")
        assert w.quiet_for(1.0) == []
        for name in (".SKILL.md.swp", "4913", "SKILL.md~"):  # the editor removes them again
            (p.root / "skills/alpha" / name).unlink()
        assert w.quiet_for(0.6) == []

        # A fixture: only the case that stages it, in both arms.
        before = len(p.calls())
        p.write("fixtures/only3.txt", "three's new input\n")
        cycle = w.until(IDLE)
        assert "changed fixtures/only3.txt" in cycle[0]
        assert sorted(p.calls()[before:]) == sorted(f"three {a} {k}" for a in ("with_skill", "without_skill")
                                                    for k in (0, 1))

        # A new file in the skill folder is part of the skill (beta's variant `alt` runs with it too).
        before = len(p.calls())
        p.write("skills/beta/notes.md", "new\n")
        cycle = w.until(IDLE)
        assert "added skills/beta/notes.md" in cycle[0]
        assert sorted(p.calls()[before:]) == sorted(f"{c} {a} {k}" for c in ("four", "five")
                                                    for a in ("with_skill", "alt") for k in (0, 1))

        # A spec edit: the edited case only (the spec is re-read, so its new fixture is watched from now on).
        before = len(p.calls())
        p.write("fixtures/new.txt", "new fixture\n")
        p.replace("alpha.eval.yaml", "input_files: [fixtures/only3.txt]", "input_files: [fixtures/new.txt]")
        cycle = w.until(IDLE)
        assert "changed alpha.eval.yaml" in cycle[0]
        assert sorted(p.calls()[before:]) == sorted(f"three {a} {k}" for a in ("with_skill", "without_skill")
                                                    for k in (0, 1))
        before = len(p.calls())
        p.write("fixtures/new.txt", "edited fixture\n")
        assert "changed fixtures/new.txt" in w.until(IDLE)[0]
        assert len(p.calls()) - before == 4

        code, rest = w.stop(signal.SIGINT)
        assert code == 0, w.seen
        assert rest[-1:] == ["skillmake watch: stopped"]
        assert not live(w.marker)
    finally:
        w.kill()


SLOW_AGENT = '''\
import os, time
from pathlib import Path
with open(Path(__file__).resolve().parent / "calls.log", "a") as f:
    f.write(os.environ["SKILLMAKE_CASE"] + "\\n")
time.sleep(60)
'''


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_a_signal_mid_run_stops_the_run_and_its_trials(tmp_path: Path, signum: int) -> None:
    p = Project.empty(tmp_path / "slow", {
        "agent.py": SLOW_AGENT,
        "skills/s/SKILL.md": "body\n",
        "slow.eval.yaml": "skill: skills/s\nagent: {kind: command, command: [python3, agent.py]}\n"
                          "cases: [{id: a, prompt: work, checks: [{type: contains, needle: x}]}]\n",
    })
    w = Watch(p.root)
    try:
        w.until("first run")
        deadline = time.monotonic() + 30
        while not p.calls() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert p.calls() == ["a"]  # the trial is running (and would for a minute)
        t0 = time.monotonic()
        code, rest = w.stop(signum)
        assert time.monotonic() - t0 < 15
        assert code == 0, w.seen
        assert rest[-1] == "skillmake watch: stopped"
        assert not any("Traceback" in line for line in w.seen), w.seen
        assert not live(w.marker)  # neither the run nor its trial outlived the watch
    finally:
        w.kill()


def test_help_runs_nothing(tmp_path: Path) -> None:
    done = subprocess.run([*WATCH, "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    assert "usage: skillmake watch" in done.stdout


def test_bad_run_options_exit_3_instead_of_watching(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "u", {"skills/s/SKILL.md": "body\n"})
    done = subprocess.run([*WATCH, "--no-such-option"], cwd=p.root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    assert "unknown option --no-such-option" in done.stderr
