"""The `python3` the tests' agents start: the interpreter itself in an empty venv, not a version manager's shim.

The tests' command agents run `[python3, agent.py]`, found on PATH (the trial's clean environment keeps PATH). Where
`python3` is a pyenv shim (a bash script that asks pyenv which version to run, then execs it), each start cost
~0.1 CPU-s of bash and pyenv before Python started, and then the interpreter's own site-packages (.pth files that
import modules at every start: ~0.03 CPU-s more on this machine), thousands of times per suite; Python itself
starts in ~0.01 s. Once, before any test (and before xdist starts its workers, which inherit the environment), an
empty venv of the interpreter the shim runs (`venv --without-pip`: that interpreter with its standard library and
no site-packages) is made and its bin/ put first on PATH. The agents the tests write import only the standard
library. Where `python3` is already an interpreter (CI's setup-python), nothing changes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def is_script(path: str) -> bool:
    """Whether the file at `path` is a `#!` script (a shim), not a binary."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def shortcut_shims() -> Path | None:
    """If `python3` on PATH is a script, an empty venv of the interpreter it runs, its bin/ put first on PATH (the
    venv's folder is returned); else None."""
    found = shutil.which("python3")
    if found is None or not is_script(found):
        return None
    done = subprocess.run([found, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True,
                          timeout=60, check=False)
    target = done.stdout.strip()
    if done.returncode != 0 or not target or is_script(target):
        return None  # not a shim we understand: leave PATH as it is
    folder = Path(tempfile.mkdtemp(prefix="skillmake-tests-python-"))
    made = subprocess.run([target, "-m", "venv", "--without-pip", str(folder)], capture_output=True, text=True,
                          timeout=120, check=False)
    if made.returncode != 0 or not (folder / "bin" / "python3").exists():
        remove(folder)
        return None
    os.environ["PATH"] = os.pathsep.join([str(folder / "bin"), os.environ.get("PATH", "")])
    return folder


def remove(folder: Path | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
