"""The `python3` the tests' agents and check scripts start: the interpreter itself, not a version manager's shim.

The tests' command agents run `[python3, agent.py]`, found on PATH (the trial's clean environment keeps PATH). Where
`python3` is a pyenv shim (a bash script that asks pyenv which version to run, then execs it), each start costs
~0.1 CPU-s of bash and pyenv before Python starts (~0.015 s): thousands of trials per suite. Once, before any test
(and before xdist starts its workers, which inherit the environment), a folder holding `python3` as a link to the
interpreter the shim would run is put first on PATH. Where `python3` is already an interpreter (CI's
setup-python), nothing changes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

NAMES = ("python3",)


def is_script(path: str) -> bool:
    """Whether the file at `path` is a `#!` script (a shim), not a binary."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def shortcut_shims() -> Path | None:
    """If `python3` on PATH is a script, a new folder with a link to what it runs, put first on PATH; else None."""
    found = shutil.which("python3")
    if found is None or not is_script(found):
        return None
    done = subprocess.run([found, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True,
                          timeout=60, check=False)
    target = done.stdout.strip()
    if done.returncode != 0 or not target or is_script(target):
        return None  # not a shim we understand: leave PATH as it is
    folder = Path(tempfile.mkdtemp(prefix="skillmake-tests-bin-"))
    for name in NAMES:
        (folder / name).symlink_to(target)
    os.environ["PATH"] = os.pathsep.join([str(folder), os.environ.get("PATH", "")])
    return folder


def remove(folder: Path | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
