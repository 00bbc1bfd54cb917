"""The cells' views alone: what checking out N cell folders costs, as a run pays it (issue 22: the view checkout
was ~44% of a cell task's CPU). One project of N instant trials is run once; then, for this checkout and another
(`--against`, a git worktree), each in a process of its own and interleaved `--runs` times:

- early: every cell's folder checked out by its grade task (check_out_early, from the records it holds), on a
  runs/ with no views;
- final: the report's checkout right after (it should find every folder it reads current);
- cold: the report's checkout with no views and no views.json (`skillmake report` after `rm -r runs`).
The records are read (engine/report.py's cells_of) before each phase's clock starts.

User and system CPU (this process, all threads) and wall time per phase, in ms per cell, median of the runs, and
the ratios. System time is mostly the kernel making files and folders (a view is eight of them).

Where the project lives matters on some disks (bench/first_run.py says why): it is made in `.bench/` of the checkout
(`--where` moves it), and no view is removed before the bench ends: each phase starts from a runs/ set aside by a
rename (no inode freed), else each side's creates would scan past the inodes the side before it just freed.

    python bench/checkout.py [--cells 600] [--runs 3] [--against /tmp/before] [--where DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table
from first_run import spec

HERE = Path(__file__).resolve().parent

PHASES = ("early", "final", "cold")

# Run in a process of its own with PYTHONPATH naming the checkout under test: prints {phase: [cpu, wall]}.
PROBE = """\
import json, os, resource, sys, time
from skillmake.engine.plan import plan_spec
from skillmake.engine.report import cells_of
from skillmake.results import checkout as co
from skillmake.run.project import Project

project = Project.open(sys.argv[1])
aside = sys.argv[2]  # where a phase sets the views before it aside (removed when the bench ends)
plan = plan_spec(project, project.specs[0])


def set_aside():
    if project.runs_dir.exists():
        os.rename(project.runs_dir, f"{aside}/{time.monotonic_ns()}")
    (project.state_dir / "index" / co.VIEWS.format(plan.spec.name)).unlink(missing_ok=True)


set_aside()
cells = cells_of(project, plan)
out = {}

def timed(name, fn):
    t0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()  # µs, where os.times() counts ticks
    fn()
    t1 = resource.getrusage(resource.RUSAGE_SELF)
    out[name] = [t1.ru_utime - t0.ru_utime, t1.ru_stime - t0.ru_stime, time.perf_counter() - w0]

timed("early", lambda: [co.check_out_early(project, rec) for rec in cells])
again = cells_of(project, plan)  # the report's reading of the records (not the checkout's): left out of the times
timed("final", lambda: co.checkout(project, again))
set_aside()
timed("cold", lambda: co.checkout(project, again))
print(json.dumps(out))
"""


def populate(base: Path, n: int) -> Path:
    root = base / "project"
    (root / "skills" / "instant").mkdir(parents=True)
    (root / "skills" / "instant" / "SKILL.md").write_text("---\nname: instant\ndescription: answers\n---\nGo.\n")
    (root / "instant.eval.yaml").write_text(spec(n))
    (root / "skillmake.toml").write_text("")  # its own root: .bench/ is inside the checkout
    trials = tempfile.mkdtemp(prefix="skillmake-checkout-trials-")  # where a user's trials run: not beside the views
    try:
        subprocess.run([sys.executable, "-m", "skillmake", "-j", "4", "-q"], cwd=root,
                       env={**os.environ, "SKILLMAKE_TMPDIR": trials}, check=True, stdout=subprocess.DEVNULL)
    finally:
        shutil.rmtree(trials, ignore_errors=True)
    return root


def probe(root: Path, checkout: str | None, aside: Path) -> dict[str, list[float]]:
    env = dict(os.environ)
    if checkout:
        env["PYTHONPATH"] = checkout
    else:
        env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "-c", PROBE, str(root), str(aside)], env=env, check=True,
                          capture_output=True, text=True, cwd=checkout or str(Path(__file__).resolve().parent.parent))
    result: dict[str, list[float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", type=int, default=600, help="trials of the project (a multiple of 100)")
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs per side")
    parser.add_argument("--against", metavar="DIR", help="also time the checkout from this checkout (a git worktree)")
    parser.add_argument("--where", metavar="DIR", default=str(HERE.parent / ".bench"),
                        help="where the project is made (default: .bench/ in the checkout)")
    args = parser.parse_args()
    for tree in (HERE.parent, *([Path(args.against)] if args.against else [])):  # bytecode before the clock starts
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "skillmake")], check=True,
                       stdout=subprocess.DEVNULL)
    Path(args.where).mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="skillmake-checkout-", dir=args.where))
    try:
        root = populate(base, args.cells)
        aside = base / "aside"
        aside.mkdir()
        sides: dict[str, list[dict[str, list[float]]]] = {"this": [], "against": []}
        for _ in range(args.runs):
            sides["this"].append(probe(root, None, aside))
            if args.against:
                sides["against"].append(probe(root, args.against, aside))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    n = args.cells
    rows = []
    for phase in PHASES:
        ours = [statistics.median(r[phase][i] for r in sides["this"]) for i in (0, 1, 2)]
        row: list[object] = [phase, *(f"{x * 1000 / n:.3f}" for x in ours)]
        if args.against:
            other = [statistics.median(r[phase][i] for r in sides["against"]) for i in (0, 1, 2)]
            row += [*(f"{x * 1000 / n:.3f}" for x in other),
                    *(f"{a / b:.2f}" if b else "-" for a, b in zip(ours, other, strict=True))]
        rows.append(row)
    print(f"\nview checkout of {n} cells (ms per cell, median of {args.runs})\n")
    headers = ["phase", "user ms", "sys ms", "wall ms"]
    if args.against:
        headers += [f"{args.against}: user ms", "sys ms", "wall ms", "user ×", "sys ×", "wall ×"]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
