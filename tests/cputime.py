"""CPU seconds per test file, for finding where the suite's time goes (wall durations mix in waiting and load).

Off unless SKILLMAKE_TEST_CPU names a folder: then every test process (each xdist worker, or the one process of
`-n 0`) writes there, at its end, one JSON file mapping each test file it ran to the CPU seconds its tests took —
user + system of the process itself and of every child it waited for (a child's own children count when the child
waited for them), setup and teardown included. `python -m tests.cputime FOLDER [N]` prints the N heaviest files
and the total. On a loaded machine these numbers move far less than wall time, so two runs compare. With
SKILLMAKE_TEST_CPU_EACH=1 as well, each test counts apart (its node id instead of its file): where a file's time goes.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path

import pytest

ENV = "SKILLMAKE_TEST_CPU"
EACH = "SKILLMAKE_TEST_CPU_EACH"


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class CpuPerFile:
    """A pytest plugin: adds up `cpu_seconds` around each test's run protocol, by test file."""

    def __init__(self, folder: Path, *, each: bool = False) -> None:
        self.folder = folder
        self.each = each  # by test (node id), not by file
        self.seconds: dict[str, float] = defaultdict(float)
        self.tests: dict[str, int] = defaultdict(int)
        self.start = cpu_seconds()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None]:
        before = cpu_seconds()
        yield
        path = item.nodeid if self.each else item.nodeid.split("::", 1)[0]
        self.seconds[path] += cpu_seconds() - before
        self.tests[path] += 1

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        total = cpu_seconds() - self.start
        data = {"worker": worker, "total": total, "files": self.seconds, "tests": self.tests}
        (self.folder / f"{worker}-{os.getpid()}.json").write_text(json.dumps(data, indent=1))


def register(config: pytest.Config) -> None:
    """Turn the plugin on when SKILLMAKE_TEST_CPU is set."""
    folder = os.environ.get(ENV)
    if folder:
        each = os.environ.get(EACH, "") not in ("", "0")
        config.pluginmanager.register(CpuPerFile(Path(folder), each=each), "skillmake-cpu-per-file")


def summary(folder: Path, top: int) -> list[str]:
    seconds: dict[str, float] = defaultdict(float)
    tests: dict[str, int] = defaultdict(int)
    totals = 0.0
    for file in sorted(folder.glob("*.json")):
        data = json.loads(file.read_text())
        if data["worker"] == "main" and not data["files"]:
            continue  # xdist's controller: its children's time is the workers', counted in their own files
        totals += data["total"]
        for path, value in data["files"].items():
            seconds[path] += value
            tests[path] += data["tests"][path]
    lines = [f"{'cpu s':>7} {'tests':>5}  file"]
    lines += [f"{seconds[p]:7.1f} {tests[p]:5d}  {p}" for p in sorted(seconds, key=lambda p: -seconds[p])[:top]]
    lines.append(f"{sum(seconds.values()):7.1f} {sum(tests.values()):5d}  all tests; {totals:.1f} s in the test "
                 f"processes from their start (collection included)")
    return lines


if __name__ == "__main__":
    print("\n".join(summary(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 30)))
