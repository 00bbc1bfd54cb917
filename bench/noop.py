"""No-op benchmark: a suite of 6,000 trials (+ 6,000 grades), everything up to date.

Measures `skillmake` (and `doit` with the three-line dodo.py) deciding that nothing is stale, side
by side with bare doit deciding the same for the same number of empty tasks with file_dep, in one
run on this machine. Prints a table with medians, the ratio, and peak RSS.

Two more rows show the plan's index (.skillmake/index): the first no-op right after the first run (which
leaves the index), and a no-op whose index was lost (each run reads and parses every record, as the first
no-op did before the first run wrote it).

    python bench/noop.py [--specs 20 --cases 50 --trials 3] [--runs 3] [--keep DIR]
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
from common import measure, repeat, table

SPEC_HEAD = """\
skill: skills/s{n}
agent: {{kind: command, command: "echo done"}}
trials: {trials}
baseline: true
cases:
"""
CASE = """\
  - id: c{i}
    prompt: task number {i} of spec {n}
    checks: [{{type: contains, needle: done}}]
"""

BARE_DODO = """\
DOIT_CONFIG = {{"dep_file": ".doit-bare.db", "backend": "sqlite3", "verbosity": 0}}
N, FILES = {tasks}, {files}

def task_empty():
    for i in range(N):
        yield {{"name": str(i), "actions": None, "file_dep": [f"deps/{{i % FILES}}.txt"]}}
"""


def build_suite(root: Path, *, specs: int, cases: int, trials: int) -> int:
    for n in range(specs):
        skill = root / "skills" / f"s{n}"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"---\nname: s{n}\ndescription: bench\n---\nSkill {n}.\n")
        body = SPEC_HEAD.format(n=n, trials=trials) + "".join(CASE.format(i=i, n=n) for i in range(cases))
        (root / f"s{n}.eval.yaml").write_text(body)
    (root / "dodo.py").write_text("from skillmake.dodo import *  # noqa: F403\n")
    return specs * cases * 2 * trials


def build_bare(root: Path, tasks: int, files: int = 100) -> None:
    (root / "deps").mkdir(parents=True)
    for i in range(files):
        (root / "deps" / f"{i}.txt").write_text(str(i))
    (root / "dodo.py").write_text(BARE_DODO.format(tasks=tasks, files=files))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", type=int, default=20)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=4, help="threads for the initial full run")
    parser.add_argument("--keep", help="build the suite here and keep it (default: a temporary folder)")
    args = parser.parse_args()

    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="skillmake-bench-"))
    suite, bare = base / "suite", base / "bare"
    try:
        first_noop = None
        if not (suite / ".skillmake").exists():
            shutil.rmtree(suite, ignore_errors=True)
            suite.mkdir(parents=True)
            n = build_suite(suite, specs=args.specs, cases=args.cases, trials=args.trials)
            print(f"populating the store: {n} trials with -n {args.jobs} …", flush=True)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "skillmake", "-n", str(args.jobs), "-P", "thread"], cwd=suite,
                           check=True, stdout=subprocess.DEVNULL)
            print(f"  first run: {time.perf_counter() - t0:.1f}s", flush=True)
            first_noop = measure([sys.executable, "-m", "skillmake"], cwd=str(suite))
        trials = args.specs * args.cases * 2 * args.trials
        tasks = 2 * trials + args.specs * 2 + 4  # trials, grades, reports, validates, group tasks
        if not bare.exists():
            build_bare(bare, 2 * trials)
            subprocess.run([sys.executable, "-m", "doit"], cwd=bare, check=True, stdout=subprocess.DEVNULL)

        rows = []
        sk = repeat([sys.executable, "-m", "skillmake"], cwd=str(suite), runs=args.runs)
        dd = repeat([sys.executable, "-m", "doit"], cwd=str(suite), runs=args.runs)
        bd = repeat([sys.executable, "-m", "doit"], cwd=str(bare), runs=args.runs)
        lost = []
        for _ in range(args.runs):
            shutil.rmtree(suite / ".skillmake" / "index", ignore_errors=True)
            lost.append(measure([sys.executable, "-m", "skillmake"], cwd=str(suite)))
        lo = (statistics.median(t for t, _, _ in lost), min(t for t, _, _ in lost), max(r for _, r, _ in lost))
        measured = [("skillmake (no-op)", sk), ("doit + skillmake dodo.py (no-op)", dd)]
        if first_noop is not None:
            measured.append(("skillmake, first no-op after the first run", (first_noop[0],) * 2 + first_noop[1:2]))
        measured += [("skillmake (no-op), its index lost", lo),
                     (f"bare doit, {2 * trials} empty tasks with file_dep", bd)]
        for name, (med, low, rss) in measured:
            rows.append((name, f"{med:.3f}", f"{low:.3f}", f"{med / bd[0]:.2f}", f"{rss / 1024:.0f}"))
        print(f"\nno-op over {trials} trials + {trials} grades ({tasks} doit tasks), median of {args.runs} runs\n")
        print(table(["command", "median s", "min s", "× bare doit", "peak RSS MiB"], rows))
        print(f"\ngoal: skillmake no-op ≤ 1.0 s → {'met' if sk[0] <= 1.0 else 'NOT met'} ({sk[0]:.3f} s)")
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
