"""Start-up benchmark: `skillmake --version` and `--help` beside `doit --version` and `python -c pass`, in one run
(interleaved, median of N), optionally beside an older checkout of skillmake (`--before DIR`, e.g. a
`git worktree add /tmp/h-before <commit>`). Goal: both ≤ 2× `doit --version`.

    python bench/startup.py [--runs 15] [--before DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from common import measure, table  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--before", help="a checkout of the skillmake to compare against")
    args = parser.parse_args()
    py = sys.executable
    trees = [("", REPO)] + ([(" (before)", Path(args.before).resolve())] if args.before else [])
    commands: list[tuple[str, list[str], Path]] = [("python -c pass", [py, "-c", "pass"], REPO),
                                                   ("doit --version", [py, "-m", "doit", "--version"], REPO)]
    for suffix, tree in trees:
        commands += [(f"skillmake --version{suffix}", [py, "-m", "skillmake", "--version"], tree),
                     (f"skillmake --help{suffix}", [py, "-m", "skillmake", "--help"], tree)]
    times: dict[str, list[float]] = {label: [] for label, _, _ in commands}
    rss: dict[str, int] = {}
    for _ in range(args.runs):  # interleaved: a busy moment costs every command alike
        for label, argv, tree in commands:
            env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
            wall, peak, code = measure(argv, cwd=str(tree), env=env)
            if code != 0:
                raise SystemExit(f"{label} exited {code}")
            times[label].append(wall)
            rss[label] = max(rss.get(label, 0), peak)
    doit = statistics.median(times["doit --version"])
    rows = []
    for label, _, _ in commands:
        med = statistics.median(times[label])
        rows.append([label, f"{med * 1000:.0f} ms", f"{min(times[label]) * 1000:.0f} ms", f"{med / doit:.2f}",
                     f"{rss[label] / 1024:.0f}"])
    print(f"start-up, median of {args.runs} interleaved runs\n")
    print(table(["command", "median", "min", "× doit --version", "peak RSS MiB"], rows))
    worst = max(statistics.median(times[label]) for label in ("skillmake --version", "skillmake --help"))
    print(f"\ngoal: --version and --help ≤ 2× doit --version → {'met' if worst <= 2 * doit else 'NOT met'} "
          f"({worst / doit:.2f}×)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
