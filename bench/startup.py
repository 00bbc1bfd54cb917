"""Start-up benchmark: the fixed cost of a skillmake process, in CPU seconds (user + system, the process and its
children), beside bare doit doing the same, in one run (interleaved, median of N), optionally beside another
checkout of skillmake (`--against DIR`, e.g. a `git worktree add /tmp/before <commit>`, through PYTHONPATH).

Each tree is compiled first and every command run once untimed with bytecode writing on, so both sides start as an
installed copy does (its .pyc files, and the dataclass methods' code of skillmake/core/dataclass_code.py). Rows:
`--version`, `--help`, a first run of 1 trial of an instant command agent (`-j 4 -q`, fresh project each
time), and a no-op of that project (nothing stale); bare doit's rows are `doit --version`, a dodo.py of 1 task
running the same command (first run and no-op). Goals: --version and --help ≤ 2× `doit --version`; a first run
and a no-op as near bare doit's as they go (issue 22).

    python bench/startup.py [--runs 9] [--against DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from common import table  # noqa: E402

COMMAND = "echo done"
SPEC = f"""\
skill: skills/instant
agent: {{kind: command, command: [sh, -c, {COMMAND!r}]}}
trials: 1
cases:
  - {{id: c0, prompt: go, checks: [{{type: contains, needle: done}}]}}
"""
BARE = f"""\
DOIT_CONFIG = {{"dep_file": ".doit-bare.db", "backend": "sqlite3", "verbosity": 0}}

def task_instant():
    yield {{"name": "0", "actions": [{COMMAND!r}]}}
"""


def cpu(argv: Sequence[str], *, cwd: Path, env: dict[str, str]) -> tuple[float, int]:
    """(user + system CPU seconds of the process and every child it waited for, peak RSS in KiB)."""
    proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode} in {cwd}:\n{err.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss)


def skillmake_project(root: Path) -> Path:
    (root / "skills" / "instant").mkdir(parents=True)
    (root / "skills" / "instant" / "SKILL.md").write_text("---\nname: instant\ndescription: answers\n---\nGo.\n")
    (root / "instant.eval.yaml").write_text(SPEC)
    return root


def bare_project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "dodo.py").write_text(BARE)
    return root


class Side:
    """One command line run from one tree: fresh projects for a first run, one populated project for a no-op."""

    def __init__(self, label: str, argv: list[str], *, tree: Path | None,
                 make: Callable[[Path], Path] | None = None, fresh: bool = False) -> None:
        self.label, self.argv, self.tree, self.make, self.fresh = label, argv, tree, make, fresh
        self.times: list[float] = []
        self.rss = 0

    def run(self, base: Path, i: int, *, warm: bool = False) -> None:
        env = dict(os.environ, SKILLMAKE_TMPDIR=str(base / "trials"))
        env.pop("PYTHONPATH", None)
        if warm:  # as an installed copy has them: the .pyc files and the dataclass methods' code (dataclass_code.py)
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        if self.tree is not None:
            env["PYTHONPATH"] = str(self.tree)
        cwd = base
        if self.make is not None:
            name = f"{abs(hash(self.label))}-{i if self.fresh else 'noop'}"
            cwd = base / name
            if not cwd.exists():
                self.make(cwd)
                if not self.fresh:  # the no-op's project: one first run, not timed
                    cpu(self.argv, cwd=cwd, env=env)
        seconds, peak = cpu(self.argv, cwd=cwd, env=env)
        if self.fresh:
            shutil.rmtree(cwd, ignore_errors=True)
        if warm:
            return
        self.times.append(seconds)
        self.rss = max(self.rss, peak)


def sides(trees: list[tuple[str, Path]]) -> list[tuple[str, Side, list[Side]]]:
    """The table's rows: (name, bare doit's side, one skillmake side per tree)."""
    py = sys.executable
    doit_version = Side("doit --version", [py, "-m", "doit", "--version"], tree=None)
    doit_run = [py, "-m", "doit", "-n", "4", "-P", "thread"]
    rows: list[tuple[str, Side, list[str], bool | None]] = [  # (name, bare, skillmake's args, fresh project?)
        ("python -c pass", Side("python -c pass", [py, "-c", "pass"], tree=None), [], None),
        ("--version", doit_version, ["--version"], None),
        ("--help", doit_version, ["--help"], None),  # held against doit --version too
        ("first run, 1 trial", Side("doit first", doit_run, tree=None, make=bare_project, fresh=True),
         ["-j", "4", "-q"], True),
        ("no-op, 1 trial", Side("doit noop", doit_run, tree=None, make=bare_project), ["-j", "4", "-q"], False),
    ]
    out = []
    for name, bare, argv, fresh in rows:
        mine = [] if not argv else [
            Side(f"{name}{suffix}", [py, "-m", "skillmake", *argv], tree=tree,
                 make=None if fresh is None else skillmake_project, fresh=bool(fresh))
            for suffix, tree in trees]
        out.append((name, bare, mine))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--against", "--before", dest="against", help="another checkout of skillmake (a worktree)")
    args = parser.parse_args()
    trees = [("", REPO)] + ([(" (against)", Path(args.against).resolve())] if args.against else [])
    for _, tree in trees:  # each tree's bytecode first: PYTHONDONTWRITEBYTECODE would recompile every run
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "skillmake")], check=True,
                       stdout=subprocess.DEVNULL)
    rows = sides(trees)
    everyone: list[Side] = []
    for _, bare, mine in rows:
        everyone += [s for s in [bare, *mine] if s not in everyone]
    base = Path(tempfile.mkdtemp(prefix="skillmake-startup-"))
    (base / "trials").mkdir()
    try:
        for side in everyone:  # untimed, with bytecode writing on: what an installed copy has cached, each tree has
            side.run(base, -1, warm=True)
        for i in range(args.runs):  # interleaved: a busy moment costs every side alike
            for side in everyone:
                side.run(base, i)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    headers = ["command", "bare doit CPU-s"]
    for suffix, _ in trees:
        headers += [f"skillmake{suffix} CPU-s", "× doit"]
    if args.against:
        headers.append("this tree × against")
    headers.append("peak RSS MiB")
    out = []
    for name, bare, mine in rows:
        b = statistics.median(bare.times)
        row: list[object] = [name if mine else f"{name} (bare doit's column)", f"{b:.3f}"]
        meds = [statistics.median(side.times) for side in mine]
        for m in meds:
            row += [f"{m:.3f}", f"{m / b:.2f}"]
        if not mine:
            row += ["", ""] * len(trees)
        if args.against:
            row.append(f"{meds[0] / meds[1]:.2f}" if meds else "")
        row.append(f"{(mine[0] if mine else bare).rss / 1024:.0f}")
        out.append(row)
    print(f"start-up CPU seconds (user + sys, children included), median of {args.runs} interleaved runs\n")
    print(table(headers, out))
    doit = statistics.median(rows[1][1].times)
    worst = max(statistics.median(rows[i][2][0].times) for i in (1, 2))
    print(f"\ngoal: --version and --help ≤ 2× doit --version → {'met' if worst <= 2 * doit else 'NOT met'} "
          f"({worst / doit:.2f}×)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
