"""The package's layers (docs/layers.md): the import-linter contracts in pyproject.toml hold, an upward import
breaks them, and no module sits at the package's top level but the two users load by name."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(package_parent: Path, config: Path) -> subprocess.CompletedProcess[str]:
    if not LINT.exists():
        pytest.fail(f"{LINT} is missing: pip install -e '.[test]' brings import-linter")
    return subprocess.run([str(LINT), "--config", str(config), "--no-cache"], cwd=package_parent,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(package_parent)},
                          capture_output=True, text=True, timeout=240)


def _config_only(tmp_path: Path) -> Path:
    """pyproject.toml's contracts alone, so the copy is checked by exactly the rules the checkout is."""
    text = (ROOT / "pyproject.toml").read_text()
    contracts = text[text.index("[tool.importlinter]"):]
    tomllib.loads(contracts)  # the section stands on its own
    config = tmp_path / "contracts.toml"
    config.write_text(contracts)
    return config


def test_the_checkout_keeps_every_contract(tmp_path: Path) -> None:
    run = _lint(ROOT, _config_only(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


@pytest.mark.parametrize(("module", "upward"), [
    ("core/atomic.py", "from skillmake.commands import cli"),  # core reaching the top
    ("store/objects.py", "    from skillmake.engine import plan"),  # a lazy import counts as much
    ("compare/table.py", "from skillmake.view import site"),  # the features stay independent
    ("run/trial.py", "import doit"),  # only the engine imports doit
])
def test_an_upward_import_breaks_a_contract(tmp_path: Path, module: str, upward: str) -> None:
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "skillmake", copy / "skillmake", ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / "skillmake" / module
    body = f"\n\ndef _late() -> None:\n{upward}\n" if upward.startswith(" ") else f"\n{upward}  # noqa\n"
    target.write_text(target.read_text() + body)
    run = _lint(copy, _config_only(tmp_path))
    assert run.returncode != 0
    assert "BROKEN" in run.stdout and module.split("/")[0] in run.stdout


def test_only_dodo_and_main_sit_at_the_top_of_the_package() -> None:
    top = sorted(p.name for p in (ROOT / "skillmake").glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "dodo.py"]
    layers = {"core", "spec", "store", "run", "results", "triggers", "engine", "compare", "view", "commands"}
    folders = {p.name for p in (ROOT / "skillmake").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == layers
    for layer in layers:
        doc = (ROOT / "skillmake" / layer / "__init__.py").read_text()
        assert doc.startswith('"""Layer '), f"{layer}/__init__.py does not say what the layer owns"
