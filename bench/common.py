"""Shared helpers for the benchmarks: timing a command, its peak RSS, and printing a table."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Sequence


def measure(argv: Sequence[str], *, cwd: str, env: dict[str, str] | None = None) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in KiB, exit code) of one run of `argv`."""
    wall, _, rss, code = measure_cpu(argv, cwd=cwd, env=env)
    return wall, rss, code


def measure_cpu(argv: Sequence[str], *, cwd: str, env: dict[str, str] | None = None
                ) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds, peak RSS in KiB, exit code) of one run of `argv`. The CPU is user + system time
    of the process and every child it waited for (a run's supervisors and commands included)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.stderr:
        proc.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss), proc.returncode


def repeat(argv: Sequence[str], *, cwd: str, runs: int, env: dict[str, str] | None = None
           ) -> tuple[float, float, int]:
    """(median, min, max peak RSS) over `runs` runs; fails loudly on a non-zero exit."""
    times, rss = [], 0
    for _ in range(runs):
        wall, peak, code = measure(argv, cwd=cwd, env=env)
        if code != 0:
            raise SystemExit(f"{' '.join(argv)} exited {code} in {cwd}")
        times.append(wall)
        rss = max(rss, peak)
    return statistics.median(times), min(times), rss


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
