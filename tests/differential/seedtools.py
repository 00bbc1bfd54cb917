"""The real seed tools (clauditor-eval 0.1.3, caliper-eval 0.1.0) in their own venv, .tools/seedtools, which
scripts/setup.sh creates: asked through a driver script run by that venv's python, so their dependencies never mix
with skillmake's. Missing: a failure under CI (setup.sh installs them there), else a skip saying how to install."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".tools" / "seedtools"
PYTHON = VENV / "bin" / "python"
HERE = Path(__file__).resolve().parent


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_seedtools(package: str) -> Path:
    """The seed venv's python, with `package` (e.g. "clauditor") importable in it."""
    reason = ""
    if not PYTHON.exists():
        reason = f"the seed tools' venv is missing ({VENV}): run scripts/setup.sh"
    else:
        probe = subprocess.run([str(PYTHON), "-c", f"import {package}"], capture_output=True, text=True, timeout=60)
        if probe.returncode != 0:
            reason = f"{package} is not installed in {VENV}: run scripts/setup.sh"
    if not reason:
        return PYTHON
    if _in_ci():
        pytest.fail(f"{reason}; CI must run the differential tests", pytrace=False)
    print(reason)
    pytest.skip(reason)


def ask(driver: str, request: dict[str, Any], *, cwd: Path | None = None, timeout: float = 120) -> Any:
    """Run tests/differential/<driver> in the seed venv with `request` as JSON on stdin; its JSON answer."""
    python = require_seedtools(driver.split("_", 1)[0])
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run([str(python), str(HERE / driver)], input=json.dumps(request), capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
