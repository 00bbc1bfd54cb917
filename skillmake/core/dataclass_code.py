"""The compiled methods of dataclasses, kept beside skillmake's bytecode so a process does not compile them again.

Why: `@dataclass` writes each method it adds (`__init__`, `__repr__`, `__eq__`, `__hash__`, and a frozen class's
`__setattr__`/`__delattr__`) as Python source and compiles it, at every start: a plain run defines ~80 dataclasses,
~430 methods, ~40 ms of CPU in `compile` alone (a no-op costs ~0.23 CPU-s). Python keeps a module's bytecode in
`__pycache__`; this keeps these methods' bytecode the same way. The compiled code is a pure function of the source
text and the interpreter's bytecode version, so an entry is named by exactly those: the text itself is the key, the
file carries the interpreter's magic number, and any text not in the file is compiled as dataclasses would. Which
code runs is unchanged (the same code object `compile` gives; the same globals and the same closure).

How: dataclasses calls the name `exec` on each method's source; that name is looked up in the dataclasses module
before the builtins, so `install` sets it there to `exec_cached`, which compiles only what the file lacks. Only
skillmake's own processes install it (`python -m skillmake`, a dodo.py's `from skillmake.dodo import *`): importing
skillmake from another program leaves that program's dataclasses module as it was. New
entries are written when the process exits (atomically; a cache, so no fsync), unless bytecode writing is off
(`-B`, PYTHONDONTWRITEBYTECODE), as Python does for its own `.pyc` files.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import importlib.util
import marshal
import os
import sys
from types import CodeType
from typing import Any

LIMIT = 5_000  # entries kept at most; past it the file starts again from what this process used
_known: dict[str, CodeType] = {}  # source text → its code: the file's entries and what this process compiled
_new: set[str] = set()  # the texts this process compiled (not yet in the file)
_used: set[str] = set()  # the texts this process ran
_path: str | None = None


def cache_path() -> str | None:
    """Where the cache lives: skillmake's own `__pycache__` (or PYTHONPYCACHEPREFIX's), named for the interpreter."""
    try:
        pyc = importlib.util.cache_from_source(os.path.join(os.path.dirname(os.path.dirname(__file__)), "x.py"))
    except NotImplementedError:  # no bytecode cache in this interpreter (sys.implementation.cache_tag is None)
        return None
    opt = f".opt-{sys.flags.optimize}" if sys.flags.optimize else ""  # as a .pyc is named: -O compiles otherwise
    return os.path.join(os.path.dirname(pyc), f"dataclass-code.{sys.implementation.cache_tag}{opt}.bin")


def exec_cached(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """`exec` for dataclasses' generated methods: the source's code from the cache, else compiled and kept."""
    if globals is None:  # as exec itself: the caller's namespaces (dataclasses always passes its own)
        caller = sys._getframe(1)
        globals = caller.f_globals
        if locals is None:
            locals = caller.f_locals
    if type(source) is not str:
        builtins.exec(source, globals, locals)
        return
    code = _known.get(source)
    if code is None:  # as exec(source) compiles it: file "<string>", no __future__ flags (dataclasses.py has none)
        code = _known[source] = compile(source, "<string>", "exec", dont_inherit=True)
        _new.add(source)
    _used.add(source)
    builtins.exec(code, globals, locals)


def install() -> None:
    """Answer dataclasses' compiles from the cache file (once per process)."""
    import dataclasses

    global _path
    if getattr(dataclasses, "exec", None) is exec_cached:
        return
    _path = cache_path()
    if _path is not None:
        _known.update(_read(_path))
    dataclasses.exec = exec_cached  # type: ignore[attr-defined]
    atexit.register(save)


def _read(path: str) -> dict[str, CodeType]:
    """The file's entries; a missing, torn, foreign or other interpreter's file is empty (compiled again)."""
    try:
        with open(path, "rb") as f:
            magic = f.read(len(importlib.util.MAGIC_NUMBER))
            if magic != importlib.util.MAGIC_NUMBER:
                return {}
            table = marshal.loads(f.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if type(k) is str and type(v) is CodeType}


def save(*, force: bool = False) -> None:
    """Write what this process compiled anew, with what the file held (another process may have added some). At
    exit, so nothing here may raise: a signal arriving now leaves the file as it was (and the exit status alone).
    `force`: even with bytecode writing off, as `compileall` writes when asked."""
    if not _new or _path is None or (sys.dont_write_bytecode and not force):
        return
    tmp = f"{_path}.{os.getpid()}.tmp"
    try:
        table = {**_read(_path), **{text: _known[text] for text in _new}}
        if len(table) > LIMIT:
            table = {k: v for k, v in table.items() if k in _used}
        os.makedirs(os.path.dirname(_path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(importlib.util.MAGIC_NUMBER)
            f.write(marshal.dumps(table))
        os.replace(tmp, _path)
        _new.clear()
    except BaseException:  # a read-only install, a full disk, Ctrl-C: compiled again next time
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def warm() -> int:
    """Define the dataclasses of every skillmake module and write their methods' code, as `compileall` writes the
    .pyc files when asked (bytecode writing off or not); how many methods were new. The test suite runs it once
    before its workers (tests/bytecode.py): their PYTHONDONTWRITEBYTECODE keeps every test's process from writing.
    `python -c "from skillmake.core import dataclass_code; dataclass_code.warm()"`."""
    import importlib
    import pkgutil

    install()
    package = os.path.dirname(os.path.dirname(__file__))  # skillmake's folder (no import of it: no cycle)
    for module in pkgutil.walk_packages([package], "skillmake.", onerror=lambda name: None):
        if module.name in ("skillmake.__main__", "skillmake.dodo"):  # they run or start something on import
            continue
        try:
            importlib.import_module(module.name)
        except Exception:  # an optional dependency missing: those classes are compiled where they are used
            continue
    new = len(_new)
    save(force=True)
    return new

