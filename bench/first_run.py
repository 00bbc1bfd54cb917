"""First run: N trials of an instant command agent at -j 4, paired in one run with bare doit running the same
command as N tasks (a dodo.py of its own, -n 4 -P thread). What is left between the two is skillmake's
per-trial overhead: the process chain a trial starts, keys, workspaces, records, grades, views and reports.

Each size runs on a fresh store, both sides interleaved `--runs` times (median wall time; peak RSS of the
largest run). Issue 22's goal: skillmake ≤ 2× bare doit.

    python bench/first_run.py [--sizes 200] [--runs 1]      # a minute on a 2-core machine
    python bench/first_run.py --sizes 600,6000               # the issue's sizes
    python bench/first_run.py --against /tmp/before          # and another checkout (git worktree), same run
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import measure, table

COMMAND = "echo done"

BARE = """\
DOIT_CONFIG = {{"dep_file": ".doit-bare.db", "backend": "sqlite3", "verbosity": 0}}

def task_instant():
    for i in range({n}):
        yield {{"name": str(i), "actions": [{command!r}]}}
"""


def spec(n: int) -> str:
    """n trials as n // per cases of `per` trials each (a spec allows at most 1,000 trials per case)."""
    per = min(n, 100)
    if n % per:
        raise SystemExit(f"--sizes: {n} is not a multiple of {per}")
    cases = "".join(f"  - {{id: c{i}, prompt: go {i}, checks: [{{type: contains, needle: done}}]}}\n"
                    for i in range(n // per))
    return (f"skill: skills/instant\nagent: {{kind: command, command: [sh, -c, {COMMAND!r}]}}\n"
            f"trials: {per}\ncases:\n{cases}")


def skillmake_side(base: Path, n: int, run: int, checkout: str | None = None) -> tuple[float, int]:
    root = base / f"sm{n}-{run}-{bool(checkout)}"
    (root / "skills" / "instant").mkdir(parents=True)
    (root / "skills" / "instant" / "SKILL.md").write_text("---\nname: instant\ndescription: answers\n---\nGo.\n")
    (root / "instant.eval.yaml").write_text(spec(n))
    env = {**os.environ, "SKILLMAKE_TMPDIR": str(base / "trials")}
    if checkout:
        env["PYTHONPATH"] = checkout
    wall, rss, code = measure([sys.executable, "-m", "skillmake", "-j", "4", "-q"], cwd=str(root), env=env)
    if code != 0:
        raise SystemExit(f"skillmake exited {code} in {root}")
    shutil.rmtree(root, ignore_errors=True)
    return wall, rss


def bare_side(base: Path, n: int, run: int) -> tuple[float, int]:
    root = base / f"bare{n}-{run}"
    root.mkdir()
    (root / "dodo.py").write_text(BARE.format(n=n, command=COMMAND))
    wall, rss, code = measure([sys.executable, "-m", "doit", "-n", "4", "-P", "thread"], cwd=str(root))
    if code != 0:
        raise SystemExit(f"bare doit exited {code} in {root}")
    shutil.rmtree(root, ignore_errors=True)
    return wall, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="200", help="comma-separated trial counts (multiples of 100)")
    parser.add_argument("--runs", type=int, default=1, help="interleaved runs per side and size")
    parser.add_argument("--against", metavar="DIR", help="also time skillmake from this checkout (a git worktree)")
    args = parser.parse_args()
    # Each tree's bytecode before the clock starts: with PYTHONDONTWRITEBYTECODE set (as on the team's machine) a
    # worktree without __pycache__ would compile every module at every run (~0.2 CPU-s a run).
    for tree in (Path(__file__).resolve().parents[1], *([Path(args.against)] if args.against else [])):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "skillmake")], check=True,
                       stdout=subprocess.DEVNULL)
    base = Path(tempfile.mkdtemp(prefix="skillmake-first-run-"))
    (base / "trials").mkdir()
    rows = []
    try:
        for n in (int(x) for x in args.sizes.split(",")):
            ours, bare, other, rss_ours, rss_bare, rss_other = [], [], [], 0, 0, 0
            for run in range(args.runs):
                wall, rss = bare_side(base, n, run)
                bare.append(wall)
                rss_bare = max(rss_bare, rss)
                wall, rss = skillmake_side(base, n, run)
                ours.append(wall)
                rss_ours = max(rss_ours, rss)
                if args.against:
                    wall, rss = skillmake_side(base, n, run, args.against)
                    other.append(wall)
                    rss_other = max(rss_other, rss)
            a, b = statistics.median(ours), statistics.median(bare)
            row = [n, f"{a:.2f}", f"{b:.2f}", f"{a / b:.1f}", f"{(a - b) / n * 1000:.1f}", f"{rss_ours / 1024:.0f}",
                   f"{rss_bare / 1024:.0f}", f"{rss_ours / rss_bare:.2f}"]
            if args.against:
                c = statistics.median(other)
                row += [f"{c:.2f}", f"{c / b:.1f}", f"{rss_other / 1024:.0f}", f"{rss_other / rss_bare:.2f}"]
            rows.append(row)
            print(f"{n} trials: skillmake {a:.2f}s, bare doit {b:.2f}s", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"\nfirst run of an instant command agent ({COMMAND!r}), -j 4 / -n 4 -P thread\n")
    headers = ["trials", "skillmake s", "bare doit s", "× bare doit", "overhead ms/trial", "skillmake MiB",
               "bare doit MiB", "MiB × bare"]
    if args.against:
        headers += [f"{args.against} s", "× bare doit", f"{args.against} MiB", "MiB × bare"]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
