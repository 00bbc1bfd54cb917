"""Spec loading benchmark: `Project.open` over 100 specs of 50 cases each (what every run, no-op and `report` pays
before planning), unchanged since the last load, paired with an older checkout of skillmake (`--before DIR`, e.g.
a `git worktree add /tmp/h-before <commit>`) in one run, interleaved. Each side loads once first (its caches warm).

    python bench/spec_load.py [--specs 100 --cases 50] [--runs 5] [--before DIR]
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

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from common import table  # noqa: E402
from noop import build_suite  # noqa: E402

CHILD = """\
import sys, time
from skillmake.run.project import Project
wall, cpu = time.perf_counter(), time.process_time()
project = Project.open(sys.argv[1])
print(time.perf_counter() - wall, time.process_time() - cpu, len(project.specs))
"""


def load(tree: Path, root: Path) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", CHILD, str(root)], cwd=str(root), env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=100)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", help="a checkout of the skillmake to compare against")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="skillmake-bench-load-"))
    try:
        sides = [("this tree", REPO)] + ([("before", Path(args.before).resolve())] if args.before else [])
        roots = {}
        for label, tree in sides:  # a project each: one side's caches never serve the other
            root = base / label.replace(" ", "-")
            root.mkdir()
            build_suite(root, specs=args.specs, cases=args.cases, trials=1)
            (root / ".skillmake").mkdir()
            roots[label] = root
            load(tree, root)  # first load: parses, schema checks, and fills the caches
        times: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in sides}
        for _ in range(args.runs):
            for label, tree in sides:
                times[label].append(load(tree, roots[label]))
        rows = []
        after_cpu = statistics.median(c for _, c in times["this tree"])
        for label, _ in sides:
            wall = statistics.median(w for w, _ in times[label])
            cpu = statistics.median(c for _, c in times[label])
            rows.append([label, f"{wall:.3f} s", f"{cpu:.3f} s", f"{cpu / args.specs * 1000:.2f} ms",
                         f"{cpu / after_cpu:.2f}"])
        print(f"Project.open over {args.specs} unchanged specs × {args.cases} cases, median of {args.runs}\n")
        print(table(["skillmake", "wall", "CPU", "CPU per spec", "× this tree"], rows))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
