"""Dataclasses' compiled methods kept beside the bytecode (dataclass_code.py): the same code as compiling gives,
nothing compiled again by the next process, and a missing, broken or unwritable file only means compiling."""

from __future__ import annotations

import dataclasses
import importlib.util
import marshal
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from skillmake.core import dataclass_code

CLASSES = """
from dataclasses import dataclass, field

@dataclass(frozen=True, slots=True, kw_only=True)
class Frozen:
    \"\"\"Frozen, slotted, keyword-only, with defaults.\"\"\"
    name: str
    tags: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict)

@dataclass(order=True)
class Plain:
    \"\"\"Mutable and ordered.\"\"\"
    a: int
    b: list = field(default_factory=list)
"""


def define(tag: str) -> dict[str, Any]:
    """The classes above, defined afresh in a module of their own."""
    module = type(sys)(f"dataclass_code_case_{tag}")
    sys.modules[module.__name__] = module
    try:
        exec(CLASSES, module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module.__dict__


METHODS = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__lt__", "__ge__")


def codes(namespace: dict[str, Any]) -> dict[str, Any]:
    return {f"{cls}.{m}": getattr(namespace[cls], m).__code__ for cls in ("Frozen", "Plain") for m in METHODS
            if hasattr(getattr(namespace[cls], m, None), "__code__")}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache installed on a file under tmp_path, as a fresh process would start; bytecode writing on."""
    path = tmp_path / "pycache" / "dataclass-code.bin"
    monkeypatch.setattr(dataclass_code, "_known", {})
    monkeypatch.setattr(dataclass_code, "_new", set())
    monkeypatch.setattr(dataclass_code, "_used", set())
    monkeypatch.setattr(dataclass_code, "_path", str(path))
    monkeypatch.setattr(dataclasses, "exec", dataclass_code.exec_cached, raising=False)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return path


def restart(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """As the next process starts: the file read again, nothing compiled yet; returns what it compiles."""
    compiled: list[str] = []

    def counting(source: str, *args: Any, **kwargs: Any) -> Any:
        compiled.append(source)
        return compile(source, *args, **kwargs)

    monkeypatch.setattr(dataclass_code, "_known", dataclass_code._read(str(path)))
    monkeypatch.setattr(dataclass_code, "_new", set())
    monkeypatch.setattr(dataclass_code, "compile", counting, raising=False)
    return compiled


def test_the_methods_are_the_code_compiling_gives(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as plain:
        plain.delattr(dataclasses, "exec", raising=False)
        reference = codes(define("plain"))
    first = define("first")
    assert codes(first) == reference and len(reference) >= 9
    dataclass_code.save()
    compiled = restart(cache, monkeypatch)
    cached = define("cached")
    assert compiled == [] and codes(cached) == reference
    # And they behave as dataclasses' own.
    frozen = cached["Frozen"](name="n")
    assert repr(frozen) == "Frozen(name='n', tags=(), extra={})" and frozen == cached["Frozen"](name="n")
    with pytest.raises(dataclasses.FrozenInstanceError):
        frozen.name = "m"
    with pytest.raises(TypeError, match="positional"):
        cached["Frozen"]("n")
    assert cached["Plain"](1) < cached["Plain"](2)


def test_a_file_that_cannot_be_read_means_compiling(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    define("first")
    dataclass_code.save()
    good = cache.read_bytes()
    other_python = b"\0\0\r\n" + good[4:]
    for broken in (b"", good[:4], good[: len(good) // 2], other_python, importlib.util.MAGIC_NUMBER + b"junk",
                   good[:4] + marshal.dumps([1, 2])):
        cache.write_bytes(broken)
        compiled = restart(cache, monkeypatch)
        define("again")
        assert len(compiled) >= 9, broken[:8]
        dataclass_code.save()  # and the file is whole again
        compiled = restart(cache, monkeypatch)
        define("third")
        assert compiled == [], broken[:8]


def test_nothing_is_written_without_bytecode_writing_or_where_it_cannot_be(cache: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    define("first")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    dataclass_code.save()
    assert not cache.exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    cache.parent.write_text("a file where the folder would be")  # as a read-only install: the write fails
    dataclass_code.save()  # no error, nothing left behind
    assert cache.parent.read_text() == "a file where the folder would be"
    assert not list(cache.parent.parent.rglob("*.tmp"))


def test_another_process_compiles_no_method_a_first_one_kept(tmp_path: Path) -> None:
    """Two real interpreters importing the front end, bytecode writing on (PYTHONPYCACHEPREFIX keeps the files out
    of the checkout): the first compiles the methods and keeps them, the second compiles none."""
    code = textwrap.dedent("""
        from skillmake.core import dataclass_code as d
        d.install()  # as python -m skillmake and skillmake.dodo do first
        import skillmake.commands.cli, skillmake.spec.model
        print(len(d._new), len(d._used), d._path)
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "prefix")
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                             check=True)
        assert out.stderr == ""
        runs.append(out.stdout.split())
    (new, used, path), (again, used_again, _) = runs
    assert int(new) == int(used) >= 40 and path.startswith(str(tmp_path / "prefix"))
    assert int(again) == 0 and int(used_again) == int(used)


MARKER = "the caller's globals"


def test_without_namespaces_it_runs_in_the_callers_as_exec_does(cache: Path) -> None:
    scope: dict[str, Any] = {}
    dataclass_code.exec_cached("seen = MARKER", None, scope)
    assert scope["seen"] == MARKER
    found: list[str] = []
    dataclass_code.exec_cached("found.append(MARKER)")  # the caller's locals too
    assert found == [MARKER]


def test_warm_keeps_the_methods_of_every_module_not_only_a_runs(tmp_path: Path) -> None:
    """What the test suite runs once before its workers (tests/bytecode.py), bytecode writing off as there."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=str(tmp_path / "prefix"))
    warm = subprocess.run([sys.executable, "-c", "from skillmake.core import dataclass_code as d; print(d.warm())"],
                          env=env, capture_output=True, text=True, timeout=120, check=True)
    assert int(warm.stdout) >= 300, warm.stdout
    later = subprocess.run([sys.executable, "-c", "from skillmake.core import dataclass_code as d; d.install(); "
                            "import skillmake.view.server, skillmake.compare.comparator, skillmake.engine.tasks; "
                            "print(len(d._new), len(d._used))"],
                           env=env, capture_output=True, text=True, timeout=120, check=True)
    new, used = map(int, later.stdout.split())
    assert new == 0 and used >= 300


def test_importing_skillmake_leaves_the_dataclasses_module_alone_its_front_ends_install_it() -> None:
    """A program that imports skillmake keeps its dataclasses as they were; `python -m skillmake` and a dodo.py's
    `from skillmake.dodo import *` (skillmake's own processes) answer from the cache."""
    probe = "import dataclasses, sys; import {0}; print(getattr(dataclasses, 'exec', None) is not None)"
    seen = [subprocess.run([sys.executable, "-c", probe.format(module)], capture_output=True, text=True, timeout=60,
                           check=True).stdout.strip() for module in ("skillmake.engine.plan", "skillmake.dodo")]
    assert seen == ["False", "True"]
