"""Reporter benchmark: skillmake's doit reporter driven alone (no doit, no trials) through N trial and grade
tasks, four running at a time as under `-j 4`: each task's start and finish, the progress line it prints, and
the ticker's scan every 0.25 s. Paired with the same driver over an older checkout of skillmake (`--before DIR`,
e.g. a `git worktree add /tmp/h-before <commit>`), in one run.

    python bench/reporter.py [--sizes 600,6000,30000] [--before DIR] [--runs 1]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from common import table  # noqa: E402

JOBS = 4


def drive(size: int) -> float:
    """Seconds the reporter spends on `size` tasks (half trials, half grades), from initialize to complete_run."""
    from skillmake.engine import reporter as reporter_module

    names = [f"{'trial' if i % 2 == 0 else 'grade'}:s/c{i // 4}/with_skill/{i % 4 // 2}" for i in range(size)]
    tasks = {name: SimpleNamespace(name=name, task_dep=[], setup_tasks=[], uptodate=[], file_dep=set(),
                                   values={"outcome": "pass", "ran": True, "why": "new"}) for name in names}
    rep = reporter_module.SkillmakeReporter(io.StringIO(), {})
    start = time.perf_counter()
    rep.initialize(tasks, list(names))
    window: list[SimpleNamespace] = []
    for name in names:
        task = tasks[name]
        rep.execute_task(task)
        window.append(task)
        if len(window) == JOBS:
            rep.add_success(window.pop(0))
    for task in window:
        rep.add_success(task)
    rep.complete_run()
    return time.perf_counter() - start


def child(tree: Path, size: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, __file__, "--child", str(size)], cwd=str(tree), env=env, check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="600,6000,30000")
    parser.add_argument("--before", help="a checkout of the skillmake to compare against")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(f"{drive(args.child):.6f}")
        return 0
    sides = [("this tree", REPO)] + ([("before", Path(args.before).resolve())] if args.before else [])
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        times = {label: statistics.median(child(tree, size) for _ in range(args.runs)) for label, tree in sides}
        after = times["this tree"]
        row: list[object] = [f"{size:,}", f"{after:.3f} s", f"{after / size * 1e6:.1f} µs"]
        if args.before:
            before = times["before"]
            row += [f"{before:.3f} s", f"{before / size * 1e6:.1f} µs", f"{before / after:.1f}×"]
        rows.append(row)
    headers = ["tasks", "this tree", "per task"]
    if args.before:
        headers += ["before", "per task", "before / this tree"]
    print(f"the reporter alone, {JOBS} tasks running at a time, median of {args.runs} run(s)\n")
    print(table(headers, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
