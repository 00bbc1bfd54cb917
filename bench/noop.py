"""No-op benchmark: a suite of 6,000 trials (+ 6,000 grades), everything up to date.

Measures `skillmake` (and `doit` with the three-line dodo.py) deciding that nothing is stale, side
by side with bare doit deciding the same for the same number of empty tasks with file_dep, in one
run on this machine. Prints a table with medians, the ratio, and peak RSS.

Two more rows show the plan's index (.skillmake/index): the first no-op right after the first run (which
leaves the index), and a no-op whose index was lost (each run reads and parses every record, as the first
no-op did before the first run wrote it).

The editor loop's row: one SKILL.md edited (a line appended), how long until the first stale trial starts (its
workspace appears), beside bare doit starting the first of its tasks whose file_dep changed; each such run is
stopped with Ctrl-C once it has started.

    python bench/noop.py [--specs 20 --cases 50 --trials 3] [--runs 3] [--keep DIR]
    python bench/noop.py --specs 100 --keep /tmp/noop30k     # 30,000 trials + 30,000 grades (the issue's size)
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table

SPEC_HEAD = """\
skill: skills/s{n}
agent: {{kind: command, command: {command}}}
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


ECHO = '"echo done"'
# Every trial's output and kept workspace its own (as real agents' are): the store's per-object checks are paid in full.
DISTINCT = """[sh, -c, 'cat > answer.txt; echo done $SKILLMAKE_ARM $SKILLMAKE_TRIAL; cat answer.txt']"""


def build_suite(root: Path, *, specs: int, cases: int, trials: int, distinct: bool = False) -> int:
    for n in range(specs):
        skill = root / "skills" / f"s{n}"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"---\nname: s{n}\ndescription: bench\n---\nSkill {n}.\n")
        body = (SPEC_HEAD.format(n=n, trials=trials, command=DISTINCT if distinct else ECHO)
                + "".join(CASE.format(i=i, n=n) for i in range(cases)))
        (root / f"s{n}.eval.yaml").write_text(body)
    (root / "dodo.py").write_text("from skillmake.dodo import *  # noqa: F403\n")
    return specs * cases * 2 * trials


def build_bare(root: Path, tasks: int, files: int = 100) -> None:
    (root / "deps").mkdir(parents=True)
    for i in range(files):
        (root / "deps" / f"{i}.txt").write_text(str(i))
    (root / "dodo.py").write_text(BARE_DODO.format(tasks=tasks, files=files))


BARE_EDIT_DODO = """\
import os
DOIT_CONFIG = {{"dep_file": ".doit-bare.db", "backend": "sqlite3", "verbosity": 0}}
N, FILES = {tasks}, {files}

def started():  # the first stale task marks that it started, then the bench stops the run
    open("started", "a").close()

def task_empty():
    for i in range(N):
        yield {{"name": str(i), "actions": [started], "file_dep": [f"deps/{{i % FILES}}.txt"]}}
"""


def first_start(argv: list[str], *, cwd: Path, marker: Path, env: dict[str, str] | None = None,
                edit: Path) -> tuple[float, float]:
    """(wall s, CPU s of the process) from starting `argv` until `marker` (a folder's first entry, or a file)
    appears, after appending a line to `edit`; the run is then stopped with Ctrl-C (SIGINT) and waited for."""
    with edit.open("a") as f:
        f.write(f"Edited at {time.time_ns()}.\n")
    if marker.is_dir():
        shutil.rmtree(marker, ignore_errors=True)
    marker.unlink(missing_ok=True)
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            if marker.is_file() or (marker.is_dir() and any(os.scandir(marker))):
                took = time.perf_counter() - t0, _cpu(proc.pid)
                break
            if proc.poll() is not None:
                raise SystemExit(f"{' '.join(argv)} ended ({proc.returncode}) before any stale task started in {cwd}")
            time.sleep(0.003)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    return took


def _cpu(pid: int) -> float:
    """User + system CPU seconds of a running process so far (Linux /proc; nan elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def work_folder(suite: Path, env: dict[str, str] | None) -> Path:
    """Where the suite's trials execute (each makes a folder there when it starts): run/hermetic.work_root."""
    code = ("import sys; from skillmake.run.hermetic import work_root; "
            "print(work_root(sys.argv[1] + '/.skillmake', sys.argv[1]))")
    out = subprocess.run([sys.executable, "-c", code, str(suite)], env=env, check=True, capture_output=True,
                         text=True).stdout
    return Path(out.strip())


Row = tuple[str, list[str], Path, "dict[str, str] | None", "Path | None"]  # name, argv, cwd, env, removed first


def timed(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall s, CPU s = user + sys, peak RSS KiB) of one run; fails loudly on a non-zero exit."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed in {cwd}:\n{err}")
    return wall, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss)


def interleaved(rows: list[Row], *, runs: int) -> list[list[tuple[float, float, int]]]:
    """Each row's samples, taking turns (one warm-up each first), so a change in the machine's load hits every
    row alike; a row's folder (`removed first`, e.g. the index) is deleted before each of its runs."""
    samples: list[list[tuple[float, float, int]]] = [[] for _ in rows]
    for i in range(runs + 1):
        for n, (_, argv, cwd, env, removed) in enumerate(rows):
            if removed is not None:
                shutil.rmtree(removed, ignore_errors=True)
            sample = timed(argv, cwd=cwd, env=env)
            if i:
                samples[n].append(sample)
    return samples


def edit_table(args: argparse.Namespace, suite: Path, bare: Path, tasks: int, *, other: Path | None) -> None:
    """The editor loop: one SKILL.md edited, time until the first stale trial starts; bare doit beside it."""
    if not bare.exists():
        bare.mkdir(parents=True)
        build_bare(bare, tasks)
        (bare / "dodo.py").write_text(BARE_EDIT_DODO.format(tasks=tasks, files=100))
        subprocess.run([sys.executable, "-m", "doit"], cwd=bare, check=True, stdout=subprocess.DEVNULL)
    python = [sys.executable, "-m"]
    sides: list[tuple[str, Path, dict[str, str] | None]] = [
        ("skillmake: one SKILL.md edited, first stale trial starts", suite, None)]
    if other is not None:
        sides.append((f"baseline {args.baseline_src}: the same", other,
                      dict(os.environ, PYTHONPATH=str(Path(args.baseline_src).resolve()))))
    rows: list[tuple[str, list[tuple[float, float]]]] = [(name, []) for name, _, _ in sides]
    rows.append(("bare doit: one file_dep edited, first stale task starts", []))
    edited = [root / "skills" / "s0" / "SKILL.md" for _, root, _ in sides] + [bare / "deps" / "0.txt"]
    originals = [path.read_bytes() for path in edited]
    try:
        for i in range(args.edit_runs + 1):
            for n, (_, root, env) in enumerate(sides):
                took = first_start([*python, "skillmake", "-q", "-j", "1"], cwd=root, env=env,
                                   marker=work_folder(root, env), edit=edited[n])
                if i:
                    rows[n][1].append(took)
            took = first_start([*python, "doit"], cwd=bare, marker=bare / "started", edit=edited[-1])
            if i:
                rows[-1][1].append(took)
    finally:  # as it was: the suite is a no-op again (its records are stored), for the next bench run
        for path, data in zip(edited, originals, strict=True):
            path.write_bytes(data)
    bare_s = statistics.median(w for w, _ in rows[-1][1])
    bare_cpu = statistics.median(c for _, c in rows[-1][1])
    print(f"\nfirst stale task after one edit, median of {args.edit_runs} runs, interleaved (CPU: the process's own "
          "until then)\n")
    table_rows = []
    for name, runs in rows:
        wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
        table_rows.append((name, f"{wall:.3f}", f"{min(w for w, _ in runs):.3f}", f"{wall / bare_s:.2f}",
                           f"{cpu:.3f}", f"{cpu / bare_cpu:.2f}"))
    print(table(["command", "median s", "min s", "× bare doit", "median CPU s", "CPU × bare doit"], table_rows))
    first = statistics.median(w for w, _ in rows[0][1])
    print(f"\ngoal: first stale trial within 1.5 s → {'met' if first <= 1.5 else 'NOT met'} ({first:.3f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", type=int, default=20)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=4, help="threads for the initial full run")
    parser.add_argument("--keep", help="build the suite here and keep it (default: a temporary folder)")
    parser.add_argument("--distinct", action="store_true", help="every trial's output and workspace its own "
                        "(the default suite's trials all print `done`: one object for all)")
    parser.add_argument("--no-index-lost", action="store_true", help="skip the rows whose index is deleted first")
    parser.add_argument("--edit-runs", type=int, default=3, help="runs of the one-SKILL.md-edit row (0: skip it)")
    parser.add_argument("--baseline-src", help="also time a copy of the suite under this source tree (PYTHONPATH), "
                        "interleaved: before/after pairs in one run")
    args = parser.parse_args()

    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="skillmake-bench-"))
    suite, bare = base / "suite", base / "bare"
    try:
        first_noop = None
        if not (suite / ".skillmake").exists():
            shutil.rmtree(suite, ignore_errors=True)
            suite.mkdir(parents=True)
            n = build_suite(suite, specs=args.specs, cases=args.cases, trials=args.trials, distinct=args.distinct)
            print(f"populating the store: {n} trials with -n {args.jobs} …", flush=True)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "skillmake", "-n", str(args.jobs), "-P", "thread"], cwd=suite,
                           check=True, stdout=subprocess.DEVNULL)
            print(f"  first run: {time.perf_counter() - t0:.1f}s", flush=True)
            first_noop = timed([sys.executable, "-m", "skillmake"], cwd=suite)
        trials = args.specs * args.cases * 2 * args.trials
        tasks = 2 * trials + args.specs * 2 + 4  # trials, grades, reports, validates, group tasks
        if not bare.exists():
            build_bare(bare, 2 * trials)
            subprocess.run([sys.executable, "-m", "doit"], cwd=bare, check=True, stdout=subprocess.DEVNULL)

        python = [sys.executable, "-m"]
        rows: list[Row] = [("skillmake (no-op)", [*python, "skillmake"], suite, None, None),
                           ("doit + skillmake dodo.py (no-op)", [*python, "doit"], suite, None, None),
                           ("skillmake (no-op), its index lost", [*python, "skillmake"], suite, None,
                            suite / ".skillmake" / "index"),
                           (f"bare doit, {2 * trials} empty tasks with file_dep", [*python, "doit"], bare, None, None)]
        if args.no_index_lost:  # those rows read every record: minutes at 30,000 trials
            rows = [row for row in rows if row[4] is None]
        if args.baseline_src:  # the same suite (a copy) under another source tree, interleaved with this one
            other = base / "suite-baseline"
            if not other.exists():
                shutil.copytree(suite, other, symlinks=True)
            env = dict(os.environ, PYTHONPATH=str(Path(args.baseline_src).resolve()))
            rows[2:2] = [(f"baseline {args.baseline_src}: skillmake (no-op)", [*python, "skillmake"], other, env, None),
                         (f"baseline {args.baseline_src}: its index lost", [*python, "skillmake"], other, env,
                          other / ".skillmake" / "index")][:1 if args.no_index_lost else 2]
        samples = interleaved(rows, runs=args.runs)
        bare_cpu = statistics.median(c for _, c, _ in samples[-1])
        table_rows = []
        if first_noop is not None:
            wall, cpu, rss = first_noop
            table_rows.append(("skillmake, first no-op after the first run", f"{wall:.3f}", "", f"{cpu:.3f}",
                               f"{cpu / bare_cpu:.2f}", f"{rss / 1024:.0f}"))
        for (name, *_), runs in zip(rows, samples, strict=True):
            walls, cpus = [w for w, _, _ in runs], [c for _, c, _ in runs]
            table_rows.append((name, f"{statistics.median(walls):.3f}", f"{min(walls):.3f}",
                               f"{statistics.median(cpus):.3f}", f"{statistics.median(cpus) / bare_cpu:.2f}",
                               f"{max(r for _, _, r in runs) / 1024:.0f}"))
        print(f"\nno-op over {trials} trials + {trials} grades ({tasks} doit tasks), median of {args.runs} runs, "
              "interleaved (CPU = user + sys: steadier than wall time on a shared machine)\n")
        print(table(["command", "median s", "min s", "median CPU s", "CPU × bare doit", "peak RSS MiB"], table_rows))
        sk = statistics.median(w for w, _, _ in samples[0])
        print(f"\ngoal: skillmake no-op ≤ 1.0 s → {'met' if sk <= 1.0 else 'NOT met'} ({sk:.3f} s)")
        if args.edit_runs:
            edit_table(args, suite, base / "bare-edit", 2 * trials, other=base / "suite-baseline"
                       if args.baseline_src else None)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
