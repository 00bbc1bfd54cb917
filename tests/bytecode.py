"""skillmake's own bytecode, written once before any test runs.

The tests run with PYTHONDONTWRITEBYTECODE=1 (tests/conftest.py), so that no run leaves __pycache__ folders in a
test's project, its skill folders or tests/data. Then nothing writes the package's bytecode either: on a fresh clone
(CI) every `python -m skillmake` a test starts, and every doit worker under it, compiled the package's modules from
source again, about 0.2 s of CPU each, thousands of times per suite. compileall writes them into skillmake's
__pycache__ folders (git-ignored) once, skipping those already current. Python checks each .pyc against its source's
mtime and size, so a module edited during the run is compiled again in memory, never run stale.

The test modules themselves: pytest rewrites every `assert` of every test module as it imports it, about 70% of
collecting the suite (~12 CPU-s in each xdist worker), and caches the result in tests' __pycache__ folders only when
the process may write bytecode. A worker starts with PYTHONDONTWRITEBYTECODE=1 (inherited), so tests/conftest.py
allows writing while pytest collects and forbids it again before the first test runs: a later run (the same
checkout, another worker) reads the rewritten modules back, checked against each source's mtime and size as above.
"""

from __future__ import annotations

import compileall
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "skillmake"


def compile_package() -> bool:
    """Write the .pyc of every module of the package that has none or a stale one, and the code of its dataclasses'
    methods (skillmake/core/dataclass_code.py: ~40 ms of compiling in every `python -m skillmake` otherwise); whether
    all compiled."""
    compiled = bool(compileall.compile_dir(str(PACKAGE), quiet=2))
    subprocess.run([sys.executable, "-c", "from skillmake.core import dataclass_code; dataclass_code.warm()"],
                   cwd=PACKAGE.parent, capture_output=True, timeout=300, check=False)
    return compiled
