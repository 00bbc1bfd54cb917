"""Remote store benchmark: a team sharing a bucket (moto's S3 server on 127.0.0.1), in one run on this machine.

1. First clone: every trial runs, and every record and object goes up.
2. Second clone (a fresh copy of the project files, no .skillmake/): every result comes down, no trial runs —
   agent calls 0 (counted from the closing line), wall time vs the first clone, bytes moved.
3. Two fresh clones started at the same moment (trials that sleep, so they overlap): the remote's leases make
   each trial key run once in all. With `--before DIR` (an older checkout) the same race runs on it too.
4. A warm no-op of a large suite (default 6,000 trials, made offline) with the remote configured vs without, and
   `explain` of it, interleaved: a warm local store must not pay a network round trip per trial. The remote is
   reached through a counting proxy, so the table says how many bytes of requests they sent (0 is the target).

The suite has no judge (bench/ must not need the fake API); tests/functional/test_remote.py counts judge calls.

    python bench/remote.py [--specs 4 --cases 25 --trials 3] [--noop-specs 20 --noop-cases 50] [--runs 3]
                           [--jobs 4] [--race-cases 10 --sleep 0.3] [--before DIR]
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
    return parsed(proc.stdout, proc.stderr, proc.returncode, time.perf_counter() - t0, cwd)


def parsed(out: str, err: str, code: int, wall: float, cwd: Path) -> tuple[float, int, int, int, int, int]:
    if code not in (0, 1):
        raise SystemExit(f"skillmake failed in {cwd}:\n{out[-2000:]}\n{err[-2000:]}")
    ran = _SUMMARY.search(out)
    moved = _REMOTE.search(out)
    f, down, s, up = (int(g.replace(",", "")) for g in moved.groups()) if moved else (0, 0, 0, 0)
    return wall, int(ran.group(1)) if ran else 0, f, down, s, up


def race(base: Path, env: dict[str, str], *, cases: int, sleep: float, jobs: int, label: str,
         pythonpath: str | None = None) -> tuple[str, float, float, int, int, int]:
    """Two fresh clones of a suite whose trials sleep, started at once against one bucket: (label, wall of each,
    trials ran in each, trials in the suite)."""
    project = base / f"race-{label}"
    project.mkdir()
    trials = build_suite(project, specs=1, cases=cases, trials=2, distinct=True)
    spec = project / "s0.eval.yaml"
    spec.write_text(spec.read_text().replace("cat > answer.txt;", f"sleep {sleep}; cat > answer.txt;"))
    clones = [project.with_name(f"{project.name}-{n}") for n in ("a", "b")]
    for c in clones:
        shutil.copytree(project, c)
    env = dict(env, SKILLMAKE_REMOTE=env["SKILLMAKE_REMOTE"] + f"-{label}")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "skillmake", "-j", str(jobs)], cwd=c, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for c in clones]
    done = []
    for c, proc in zip(clones, procs, strict=True):
        out, err = proc.communicate()
        done.append(parsed(out, err, proc.returncode, time.perf_counter() - t0, c))
    return label, done[0][0], done[1][0], done[0][1], done[1][1], trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", type=int, default=4)
    parser.add_argument("--cases", type=int, default=25)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--noop-specs", type=int, default=20, help="the no-op's suite: 20 × 50 cases × 2 arms × 3")
    parser.add_argument("--noop-cases", type=int, default=50)
    parser.add_argument("--race-cases", type=int, default=10, help="the race's suite: cases × 2 arms × 2 trials")
    parser.add_argument("--sleep", type=float, default=0.3, help="seconds each of the race's trials takes")
    parser.add_argument("--before", help="an older checkout: the race runs on it too (PYTHONPATH)")
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

            print(f"race: two clones at once, {args.race_cases * 4} trials of {args.sleep} s …", flush=True)
            races = [race(base, env, cases=args.race_cases, sleep=args.sleep, jobs=args.jobs, label="now")]
            if args.before:
                races.append(race(base, env, cases=args.race_cases, sleep=args.sleep, jobs=args.jobs,
                                  label="before", pythonpath=str(Path(args.before).resolve())))
            print(table(["two clones at once", "wall a s", "wall b s", "ran in a", "ran in b", "ran in all",
                         "trials"], [(r[0], f"{r[1]:.2f}", f"{r[2]:.2f}", r[3], r[4], r[3] + r[4], r[5])
                                     for r in races]))

            big = base / "noop"
            big.mkdir()
            size = build_suite(big, specs=args.noop_specs, cases=args.noop_cases, trials=args.trials, distinct=True)
            print(f"no-op suite: {size} trials, made offline …", flush=True)
            offline = dict(env, SKILLMAKE_OFFLINE="1")
            subprocess.run([sys.executable, "-m", "skillmake", "-j", str(args.jobs), "-q"], cwd=big, env=offline,
                           capture_output=True, check=False)
            seen: list[int] = []
            with slow_proxy(s3.endpoint, delay=0.0, seen=seen) as endpoint:
                counted = dict(env, AWS_ENDPOINT_URL=endpoint)
                argv = [sys.executable, "-m", "skillmake"]
                warm = [("no-op, no remote", argv, offline), ("no-op, remote configured", argv, counted),
                        ("explain, no remote", [*argv, "explain"], offline),
                        ("explain, remote configured", [*argv, "explain"], counted)]
                samples: dict[str, list[float]] = {name: [] for name, _, _ in warm}
                for i in range(args.runs + 1):  # one warm-up each, then interleaved
                    for name, a, e in warm:
                        wall = timed(a, cwd=big, env=e)[0]
                        if i:
                            samples[name].append(wall)
            med = {name: statistics.median(v) for name, v in samples.items()}
            print(table([f"warm, {size} trials", "median wall s", "runs"],
                        [(name, f"{med[name]:.3f}", len(v)) for name, v in samples.items()]))
            print(f"no-op with the remote / without: {med['no-op, remote configured'] / med['no-op, no remote']:.3f}; "
                  f"explain: {med['explain, remote configured'] / med['explain, no remote']:.3f}; bytes sent to the "
                  f"remote by {2 * (args.runs + 1)} warm runs with it configured: {sum(seen)}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
