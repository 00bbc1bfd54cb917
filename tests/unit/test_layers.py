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


def import_cycles(package: str) -> list[list[str]]:
    """Every set of modules of `package` that import each other, directly or through others (Tarjan's strongly
    connected components over grimp's graph, which import-linter builds too: lazy and type-only imports count)."""
    import grimp

    graph = grimp.build_graph(package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph.modules):  # iterative: the graph is deeper than a test should recurse
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_no_two_modules_import_each_other() -> None:
    # Before: inline ↔ rules, discovery ↔ loader, objects ↔ remote ↔ lease, plan ↔ adaptive, the cluster modules,
    # and cli ↔ the clauditor and caliper front ends (6 cycles, through lazy and type-only imports). The fix moves
    # the shared piece down or names what a module needs as a Protocol; an import inside a function is no way out.
    assert import_cycles("skillmake") == []


def test_a_cycle_is_found(tmp_path: Path) -> None:
    package = tmp_path / "cyclic"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from cyclic import b\n")
    (package / "b.py").write_text("from cyclic import c\n")
    (package / "c.py").write_text("import cyclic.a\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert import_cycles("cyclic") == [["cyclic.a", "cyclic.b", "cyclic.c"]]
    finally:
        sys.path.remove(str(tmp_path))
