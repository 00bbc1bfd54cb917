"""Cluster executor benchmark: N trials × S seconds on a 2-worker local Dask cluster vs `-j 2` threads, in one run.

Both sides run the same fresh project (a command agent that sleeps S seconds; checks made in process, so the grades
stay where the run is): `skillmake -j 2` with threads, and `skillmake -j 2 --executor dask://…` against a scheduler
and 2 worker processes (one thread each) started here on 127.0.0.1 with a shared folder as the remote store. The
ideal wall time of either is N × S / 2; the table gives each side's wall time, its overhead per trial
((wall − ideal) × 2 / N: what a trial costs beyond its own S seconds, per worker slot) and the ratio.

    python bench/cluster.py [--trials 200 --sleep 0.5 --runs 1]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from common import table  # noqa: E402

from tests.dask_cluster import dask_cluster  # noqa: E402

AGENT = "import sys, time\nsys.stdin.read()\ntime.sleep(float(sys.argv[1]))\nprint('done')\n"
SPEC = """\
skill: skills/s
agent: {{kind: command, command: [python3, agent.py, "{sleep}"]}}
trials: {trials}
cases:
  - {{id: c, prompt: go, checks: [{{type: contains, needle: done}}]}}
"""
_SUMMARY = re.compile(r"ran (\d+) trials")


def project(root: Path, *, trials: int, sleep: float) -> Path:
    (root / "skills" / "s").mkdir(parents=True)
    (root / "skills" / "s" / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (root / "agent.py").write_text(AGENT)
    (root / "t.eval.yaml").write_text(SPEC.format(trials=trials, sleep=sleep))
    return root


def timed(root: Path, env: dict[str, str], *args: str) -> float:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "skillmake", "-j", "2", *args], cwd=root, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    ran = _SUMMARY.search(done.stdout)
    if done.returncode != 0 or ran is None:
        raise SystemExit(f"skillmake {' '.join(args)} failed in {root}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--sleep", type=float, default=0.5)
    parser.add_argument("--runs", type=int, default=1, help="runs of each side, interleaved; the median is shown")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLMAKE_")}
    walls: dict[str, list[float]] = {"threads": [], "cluster": []}
    try:
        t0 = time.perf_counter()
        with dask_cluster(2, nthreads=1) as cluster:
            startup = time.perf_counter() - t0
            for i in range(args.runs):
                local = project(base / f"threads-{i}", trials=args.trials, sleep=args.sleep)
                walls["threads"].append(timed(local, env))
                remote = project(base / f"cluster-{i}", trials=args.trials, sleep=args.sleep)
                walls["cluster"].append(timed(remote, {**env, "SKILLMAKE_EXECUTOR": cluster.url,
                                                       "SKILLMAKE_REMOTE": (base / f"shared-{i}").as_uri()}))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    ideal = args.trials * args.sleep / 2
    rows = []
    for side in ("threads", "cluster"):
        wall = statistics.median(walls[side])
        rows.append([f"{side} (-j 2)" if side == "threads" else "dask, 2 workers × 1 thread (-j 2)", f"{wall:.1f}",
                     f"{ideal:.1f}", f"{(wall - ideal) * 2 / args.trials * 1000:.0f}"])
    ratio = statistics.median(walls["cluster"]) / statistics.median(walls["threads"])
    print(f"{args.trials} trials × {args.sleep} s, a fresh store each side; cluster start-up {startup:.1f} s "
          "(not counted)")
    print(table(["side", "wall s", "ideal s", "overhead ms/trial"], rows))
    print(f"cluster / threads wall: {ratio:.2f}x")


if __name__ == "__main__":
    main()
