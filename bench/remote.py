"""Remote store benchmark: a team sharing a bucket (moto's S3 server on 127.0.0.1), in one run on this machine.

1. First clone: every trial runs, and every record and object goes up.
2. Second clone (a fresh copy of the project files, no .skillmake/): every result comes down, no trial runs —
   agent calls 0 (counted from the closing line), wall time vs the first clone, bytes moved.
3. A warm no-op with the remote configured vs without, interleaved: a warm local store must not pay a network
   round trip per trial. The remote is reached through a counting proxy, so the table says how many bytes of
   requests the no-op sent (0 is the target).

The suite has no judge (bench/ must not need the fake API); tests/functional/test_remote.py counts judge calls.

    python bench/remote.py [--specs 4 --cases 25 --trials 3] [--runs 3] [--jobs 4]
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
from noop import build_suite, timed  # noqa: E402

from tests.remote_server import s3_server, slow_proxy  # noqa: E402

_SUMMARY = re.compile(r"ran (\d+) trials")
_REMOTE = re.compile(r"fetched (\d+) results \(([\d,]+) bytes\), sent (\d+) \(([\d,]+) bytes\)")


def run(cwd: Path, env: dict[str, str], jobs: int) -> tuple[float, int, int, int, int, int]:
    """(wall s, trials ran, records fetched, bytes down, records sent, bytes up) of one `skillmake -j N`."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "skillmake", "-j", str(jobs)], cwd=cwd, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"skillmake failed in {cwd}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    ran = _SUMMARY.search(proc.stdout)
    moved = _REMOTE.search(proc.stdout)
    f, down, s, up = (int(g.replace(",", "")) for g in moved.groups()) if moved else (0, 0, 0, 0)
    return wall, int(ran.group(1)) if ran else 0, f, down, s, up


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", type=int, default=4)
    parser.add_argument("--cases", type=int, default=25)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=4)
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="skillmake-bench-remote-"))
    try:
        with s3_server() as s3:
            url = s3.make_bucket("bench") + "/evals"
            env = dict(os.environ, **s3.env(), SKILLMAKE_REMOTE=url)
            env.pop("SKILLMAKE_OFFLINE", None)
            first, second = base / "first", base / "second"
            first.mkdir()
            trials = build_suite(first, specs=args.specs, cases=args.cases, trials=args.trials, distinct=True)
            shutil.copytree(first, second)  # before any run: the files a clone gets, no .skillmake/
            print(f"{trials} trials; first clone …", flush=True)
            one = run(first, env, args.jobs)
            print("second clone …", flush=True)
            two = run(second, env, args.jobs)
            rows = [("first clone", f"{one[0]:.2f}", one[1], f"{one[2]}/{one[4]}", f"{one[3]:,}/{one[5]:,}"),
                    ("second clone", f"{two[0]:.2f}", two[1], f"{two[2]}/{two[4]}", f"{two[3]:,}/{two[5]:,}")]
            print(table(["run", "wall s", "trials ran", "records down/up", "bytes down/up"], rows))
            print(f"second clone / first clone wall time: {two[0] / one[0]:.3f}; agent calls in the second: {two[1]}")

            seen: list[int] = []
            with slow_proxy(s3.endpoint, delay=0.0, seen=seen) as endpoint:
                counted = dict(env, AWS_ENDPOINT_URL=endpoint)
                offline = dict(env, SKILLMAKE_OFFLINE="1")
                argv = [sys.executable, "-m", "skillmake"]
                samples: dict[str, list[float]] = {"no remote": [], "remote configured": []}
                for i in range(args.runs + 1):  # one warm-up each, then interleaved
                    for name, e in (("no remote", offline), ("remote configured", counted)):
                        wall = timed(argv, cwd=second, env=e)[0]
                        if i:
                            samples[name].append(wall)
            none, remote = statistics.median(samples["no remote"]), statistics.median(samples["remote configured"])
            print(table(["warm no-op", "median wall s", "runs"],
                        [(name, f"{statistics.median(v):.3f}", len(v)) for name, v in samples.items()]))
            print(f"no-op with the remote / without: {remote / none:.3f}; bytes sent to the remote by "
                  f"{args.runs + 1} no-ops: {sum(seen)}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
