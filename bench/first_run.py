"""First run: N trials of an instant command agent at -j 4, paired in one run with bare doit running the same
command as N tasks (a dodo.py of its own, -n 4 -P thread). What is left between the two is skillmake's
per-trial overhead: the process chain a trial starts, keys, workspaces, records, grades, views and reports.

Each size runs on a fresh store, both sides interleaved `--runs` times (median wall time, median CPU time of the
run and every process it waited for; peak RSS of the largest run). Issue 22's goal: skillmake ≤ 2× bare doit.

Where the projects live matters on some disks, and the bench keeps that out of the comparison:
- They are made in a folder of the checkout (`.bench/`, git-ignored), as a user's project is, not under /tmp
  (`--where` moves them). On the team's machine (ext4 without a journal) creating a file scans past every inode of
  its block group deleted in the last minutes; /tmp's groups are churned by every test run on the machine, so a
  create there cost 150–250 µs of kernel time against ~12 µs in /work. Bare doit creates no file per task, so the
  churn of the folder charged skillmake's side alone.
- Every run's tree is kept until the bench ends, for the same reason: removing one side's 6,000 views right before
  the next side starts made that side's creates the slow ones.
- Other processes deleting files on the same disk still raise that cost (the team's machine: 12 µs to 105 µs a
  create in one morning), so the table's title says what a create cost when the bench began. Compare ratios taken
  at similar costs.

    python bench/first_run.py [--sizes 200] [--runs 1]      # a minute on a 2-core machine
    python bench/first_run.py --sizes 600,6000               # the issue's sizes
    python bench/first_run.py --against /tmp/before          # and another checkout (git worktree), same run
                                                             # (the two take turns going first: use an even --runs)
    python bench/first_run.py --where /tmp                   # the projects somewhere else
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import measure_cpu, table

HERE = Path(__file__).resolve().parent

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


def skillmake_side(base: Path, trials: Path, n: int, run: int, checkout: str | None = None
                   ) -> tuple[float, float, int]:
    root = base / f"sm{n}-{run}-{bool(checkout)}"
    (root / "skills" / "instant").mkdir(parents=True)
    (root / "skills" / "instant" / "SKILL.md").write_text("---\nname: instant\ndescription: answers\n---\nGo.\n")
    (root / "instant.eval.yaml").write_text(spec(n))
    (root / "skillmake.toml").write_text("")  # its own root: .bench/ is inside the checkout, a project of its own
    env = {**os.environ, "SKILLMAKE_TMPDIR": str(trials)}
    if checkout:
        env["PYTHONPATH"] = checkout
    wall, cpu, rss, code = measure_cpu([sys.executable, "-m", "skillmake", "-j", "4", "-q"], cwd=str(root), env=env)
    if code != 0:
        raise SystemExit(f"skillmake exited {code} in {root}")
    return wall, cpu, rss


def bare_side(base: Path, n: int, run: int) -> tuple[float, float, int]:
    root = base / f"bare{n}-{run}"
    root.mkdir()
    (root / "dodo.py").write_text(BARE.format(n=n, command=COMMAND))
    wall, cpu, rss, code = measure_cpu([sys.executable, "-m", "doit", "-n", "4", "-P", "thread"], cwd=str(root))
    if code != 0:
        raise SystemExit(f"bare doit exited {code} in {root}")
    return wall, cpu, rss


def create_cost(base: Path, files: int = 2_000) -> float:
    """Microseconds of CPU to create an empty file in a new folder of `base` now (kept until the bench ends): what a
    view's files cost on this disk at this moment, printed beside the table (see the module's docstring)."""
    folder = base / "probe"
    folder.mkdir()
    start = time.process_time()
    for i in range(files):
        os.close(os.open(folder / str(i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    return (time.process_time() - start) / files * 1e6


def medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """The median wall time and the median CPU time of a side's runs."""
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="200", help="comma-separated trial counts (multiples of 100)")
    parser.add_argument("--runs", type=int, default=1, help="interleaved runs per side and size")
    parser.add_argument("--against", metavar="DIR", help="also time skillmake from this checkout (a git worktree)")
    parser.add_argument("--where", metavar="DIR", default=str(HERE.parent / ".bench"),
                        help="where the projects are made (default: .bench/ in the checkout)")
    args = parser.parse_args()
    # Each tree's bytecode before the clock starts: with PYTHONDONTWRITEBYTECODE set (as on the team's machine) a
    # worktree without __pycache__ would compile every module at every run (~0.2 CPU-s a run).
    for tree in (HERE.parent, *([Path(args.against)] if args.against else [])):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "skillmake")], check=True,
                       stdout=subprocess.DEVNULL)
        if (tree / "skillmake" / "core" / "dataclass_code.py").is_file():  # as an install's first run leaves it
            subprocess.run([sys.executable, "-c", "from skillmake.core import dataclass_code; dataclass_code.warm()"],
                           check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(tree)})
    Path(args.where).mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="skillmake-first-run-", dir=args.where))
    # Trials run where a user's do: in the system's temporary folder, outside every project (the checkout is one).
    trials = Path(tempfile.mkdtemp(prefix="skillmake-first-run-trials-"))
    rows = []
    probe = create_cost(base)
    try:
        for n in (int(x) for x in args.sizes.split(",")):
            ours: list[tuple[float, float]] = []
            bare: list[tuple[float, float]] = []
            other: list[tuple[float, float]] = []
            rss_ours = rss_bare = rss_other = 0
            for run in range(args.runs):
                wall, cpu, rss = bare_side(base, n, run)
                bare.append((wall, cpu))
                rss_bare = max(rss_bare, rss)
                # With --against, the two checkouts take turns going first: on a disk whose cost of a create falls
                # as the minutes since a removal pass (see above), the first side of a run pays more.
                for checkout in ([None, args.against] if run % 2 == 0 else [args.against, None]):
                    if checkout is None:
                        wall, cpu, rss = skillmake_side(base, trials, n, run)
                        ours.append((wall, cpu))
                        rss_ours = max(rss_ours, rss)
                    elif args.against:
                        wall, cpu, rss = skillmake_side(base, trials, n, run, args.against)
                        other.append((wall, cpu))
                        rss_other = max(rss_other, rss)
            (a, a_cpu), (b, b_cpu) = medians(ours), medians(bare)
            row = [n, f"{a:.2f}", f"{b:.2f}", f"{a / b:.2f}", f"{(a - b) / n * 1000:.2f}",
                   f"{a_cpu:.2f}", f"{b_cpu:.2f}", f"{a_cpu / b_cpu:.2f}",
                   f"{rss_ours / 1024:.0f}", f"{rss_bare / 1024:.0f}", f"{rss_ours / rss_bare:.2f}"]
            if args.against:
                c, c_cpu = medians(other)
                row += [f"{c:.2f}", f"{c / b:.2f}", f"{c_cpu / b_cpu:.2f}", f"{rss_other / rss_bare:.2f}"]
            rows.append(row)
            print(f"{n} trials: skillmake {a:.2f}s, bare doit {b:.2f}s", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(trials, ignore_errors=True)
    print(f"\nfirst run of an instant command agent ({COMMAND!r}), -j 4 / -n 4 -P thread, in {args.where}, "
          f"medians of {args.runs}; a file create there cost {probe:.0f} µs of CPU when the bench began\n")
    headers = ["trials", "skillmake s", "bare doit s", "× bare doit", "overhead ms/trial", "skillmake CPU-s",
               "bare CPU-s", "CPU × bare", "skillmake MiB", "bare doit MiB", "MiB × bare"]
    if args.against:
        headers += [f"{args.against} s", "× bare doit", "CPU × bare", "MiB × bare"]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
