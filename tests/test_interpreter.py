"""tests/interpreter.py: the tests' `python3` is an interpreter, never a version manager's shim."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.interpreter import is_script, remove, shortcut_shims


def test_python3_on_the_tests_path_is_no_shim() -> None:
    # Before: on this machine `python3` was pyenv's shim, ~0.1 CPU-s of bash and pyenv before every agent started.
    found = shutil.which("python3")
    assert found is not None and not is_script(found), found


def test_a_shim_is_replaced_by_an_empty_venv_of_what_it_runs_and_an_interpreter_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.path.realpath(sys.executable)
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3").write_text(f'#!/bin/sh\nexec "{real}" "$@"\n')
    (shims / "python3").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}/usr/bin{os.pathsep}/bin")
    folder = shortcut_shims()
    try:
        assert folder is not None
        assert os.environ["PATH"] == os.pathsep.join([str(folder / "bin"), str(shims), "/usr/bin", "/bin"])
        assert shutil.which("python3") == str(folder / "bin" / "python3")
        seen = subprocess.run(["python3", "-c", "import os, sys, sysconfig; print(os.path.realpath(sys.executable)); "
                               "print(sys.prefix); print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.splitlines()
        assert seen[:2] == [real, str(folder)]  # the shim's interpreter, in the venv: none of its site-packages
        assert not Path(seen[2]).exists() or not any(Path(seen[2]).iterdir())
    finally:
        remove(folder)
    assert folder is not None and not folder.exists()

    binary = tmp_path / "bin"
    binary.mkdir()
    (binary / "python3").symlink_to(real)
    monkeypatch.setenv("PATH", str(binary))
    assert shortcut_shims() is None and os.environ["PATH"] == str(binary)
