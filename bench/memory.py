"""Memory benchmark: peak RSS of a first run (command agent `echo done`, `-j 4`) at two suite sizes, and what each
trial adds (the slope between them), beside bare doit running the same command as one task per trial with
`-n 4 -P thread`, and optionally an older checkout of skillmake (`--against DIR`: a git worktree, run through
PYTHONPATH as bench/first_run.py does), in one run.

    python bench/memory.py [--sizes 400,1600] [--against DIR]
    git worktree add /tmp/before <commit> && python bench/memory.py --sizes 6000,30000 --against /tmp/before
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from common import measure, table  # noqa: E402
from noop import build_suite  # noqa: E402

BARE = """\
DOIT_CONFIG = {{"dep_file": ".doit-bare.db", "backend": "sqlite3", "verbosity": 0}}

def task_trial():
    for i in range({n}):
        yield {{"name": str(i), "actions": ["echo done > /dev/null"], "uptodate": [False]}}
"""
CASES = 50  # per spec; two arms, two trials: 200 trials a spec


def first_run(tree: Path | None, trials: int, base: Path) -> int:
    """Peak RSS (KiB) of a first run of `trials` trials: skillmake from `tree`, or bare doit when None."""
    root = Path(tempfile.mkdtemp(dir=base))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", SKILLMAKE_TMPDIR=str(base / "tmp"))
    if tree is None:
        (root / "dodo.py").write_text(BARE.format(n=trials))
        argv = [sys.executable, "-m", "doit", "-n", "4", "-P", "thread"]
    else:
        build_suite(root, specs=max(1, trials // (CASES * 4)), cases=CASES, trials=2)
        env["PYTHONPATH"] = str(tree)
        argv = [sys.executable, "-m", "skillmake", "-q", "-j", "4"]
    _, peak, code = measure(argv, cwd=str(root), env=env)
    if code not in (0, 1):  # 1: a threshold or a trial failed; the memory is what is measured
        raise SystemExit(f"{' '.join(argv)} exited {code} in {root}")
    shutil.rmtree(root, ignore_errors=True)
    return peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="400,1600", help="two trial counts (multiples of 200)")
    parser.add_argument("--against", "--before", dest="against", metavar="DIR",
                        help="also measure skillmake from this checkout (a git worktree)")
    args = parser.parse_args()
    small, large = (int(s) for s in args.sizes.split(","))
    base = Path(tempfile.mkdtemp(prefix="skillmake-bench-memory-"))
    (base / "tmp").mkdir()
    sides: list[tuple[str, Path | None]] = [("bare doit", None), ("skillmake", REPO)]
    if args.against:
        sides.append((f"skillmake ({args.against})", Path(args.against).resolve()))
    try:
        peaks: dict[str, list[int]] = {label: [] for label, _ in sides}
        for size in (small, large):  # the sides interleaved, size by size: the machine's load falls on all alike
            for label, tree in sides:
                peaks[label].append(first_run(tree, size, base))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    bare_small, bare_large = peaks["bare doit"]
    bare_slope = (bare_large - bare_small) / (large - small)
    rows = []
    for label, (low, high) in peaks.items():
        slope = (high - low) / (large - small)
        rows.append([label, f"{low / 1024:.0f}", f"{low / bare_small:.2f}", f"{high / 1024:.0f}",
                     f"{high / bare_large:.2f}", f"{slope:.1f}", f"{slope - bare_slope:+.1f}"])
    print(f"first run, -j 4, peak RSS at {small:,} and {large:,} trials (skillmake: each with its grade)\n")
    print(table(["command", f"MiB at {small:,}", "× bare doit", f"MiB at {large:,}", "× bare doit",
                 "KiB per trial", "KiB per trial beyond bare doit"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
