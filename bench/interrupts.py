"""Crash harness: interrupt real runs at random moments and count what went wrong.

Each run starts `skillmake` or plain `doit` (a dodo.py importing skillmake.dodo) on a fresh project of 12 trials
whose agent logs its start, leaves a double-forked daemon behind, works 0.2–1.2 s and logs its end. At a random
moment (fixed seed) the run's process group gets SIGINT or SIGTERM, as a terminal's Ctrl-C or a CI runner's stop
would send it. Counted per front end, mode and signal:

- hangs: the run had not exited 20 s after the signal (it is then SIGKILLed);
- bad exits: an exit status other than 130, a traceback, or not exactly one "interrupted" line;
- late starts: trials whose agent started after the signal was sent;
- orphans: processes of the run (agents, daemons, supervisors, doit workers) alive 3 s after it exited;
- unrecorded: trials whose agent finished but whose result was not recorded (work thrown away).

    python bench/interrupts.py [--runs 5] [--seed 20] [--fronts skillmake,doit] [--modes thread,process]
                               [--signals INT,TERM] [--delay 0.0-3.0]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import table

from tests.proclist import live
from tests.procproject import daemon_lines, one_case_spec, write_project

AGENT = '''\
import os, random, sys, time
from pathlib import Path
here = Path(__file__).resolve().parent
with open(here / "calls.log", "a") as f:
    f.write(f"{time.time():.6f}\\n")
''' + daemon_lines(30) + '''time.sleep(random.uniform(0.2, 1.2))
with open(here / "finished.log", "a") as f:
    f.write(os.environ["SKILLMAKE_TRIAL"] + "\\n")
print("done")
'''

MESSAGE = "interrupted; finished trials are kept"


@dataclass
class Tally:
    runs: int = 0
    hangs: int = 0
    bad_exits: int = 0
    late_starts: int = 0
    orphans: int = 0
    unrecorded: int = 0
    seconds: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def project(base: Path) -> Path:
    return write_project(base / "p", agent=AGENT, spec=one_case_spec(12))


def recorded_trials(root: Path) -> int:
    import orjson

    count = 0
    for path in (root / ".skillmake" / "actions").rglob("*.json"):
        try:
            count += orjson.loads(path.read_bytes()).get("kind") == "trial"
        except (OSError, ValueError):
            pass
    return count


def lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def one_run(front: str, mode: str, signum: int, delay: float, tally: Tally) -> None:
    with tempfile.TemporaryDirectory(prefix="interrupts-") as tmp:
        base = Path(tmp)
        root = project(base)
        marker = str(base / "trials")
        env = {**os.environ, "SKILLMAKE_TMPDIR": marker, "RUN_MARKER": marker}
        (base / "trials").mkdir()
        jobs = [] if mode == "serial" else ["-n", "4", "-P", mode]
        argv = [sys.executable, "-m", front, *jobs]
        proc = subprocess.Popen(argv, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        time.sleep(delay)
        sent = time.time()
        os.killpg(proc.pid, signum)
        t0 = time.monotonic()
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            tally.hangs += 1
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
            tally.notes.append(f"hang after {delay:.2f}s")
        took = time.monotonic() - t0
        tally.runs += 1
        tally.seconds.append(took)
        finished = len(lines(root / "finished.log"))
        if proc.returncode == 0 and finished == 12:
            pass  # the signal came after the run ended: nothing to judge
        elif proc.returncode != 130 or "Traceback" in err or err.count(MESSAGE) != 1:
            tally.bad_exits += 1
            tail = err.strip().splitlines()[-1:] if err.strip() else [""]
            tally.notes.append(f"exit {proc.returncode} after {delay:.2f}s: {tail[0][:100]}")
        tally.late_starts += sum(1 for t in lines(root / "calls.log") if float(t) > sent + 0.005)
        deadline = time.monotonic() + 3
        while (left := live(marker)) and time.monotonic() < deadline:
            time.sleep(0.05)
        tally.orphans += len(left)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        tally.unrecorded += max(0, finished - recorded_trials(root))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="interrupts per front end, mode and signal")
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--fronts", default="skillmake,doit")
    parser.add_argument("--modes", default="thread,process")
    parser.add_argument("--signals", default="INT,TERM")
    parser.add_argument("--delay", default="0.0-3.0", help="range of seconds after start to send the signal")
    parser.add_argument("-v", "--verbose", action="store_true", help="print a note per bad run")
    args = parser.parse_args()
    low, high = (float(x) for x in args.delay.split("-"))
    rng = random.Random(args.seed)
    rows = []
    for front in args.fronts.split(","):
        for mode in args.modes.split(","):
            for name in args.signals.split(","):
                signum = getattr(signal, f"SIG{name}")
                tally = Tally()
                for _ in range(args.runs):
                    one_run(front, mode, signum, rng.uniform(low, high), tally)
                rows.append([front, mode, f"SIG{name}", tally.runs, tally.hangs, tally.bad_exits, tally.late_starts,
                             tally.orphans, tally.unrecorded, f"{max(tally.seconds):.1f}"])
                if args.verbose:
                    for note in tally.notes:
                        print(f"  {front} {mode} SIG{name}: {note}", flush=True)
    print(table(["front end", "mode", "signal", "runs", "hangs", "bad exits", "late starts", "orphans",
                 "unrecorded", "max s to exit"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
