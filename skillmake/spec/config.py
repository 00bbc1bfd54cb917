"""A project's root, found upward as git and pytest find theirs, and its configuration ([tool.skillmake])."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tomllib

from skillmake.core.errors import Location, SpecError, SpecErrors
from skillmake.spec.source import Source

ROOT_VAR = "SKILLMAKE_ROOT"
PYPROJECT = "pyproject.toml"
CONFIG_FILE = "skillmake.toml"
DODO = "dodo.py"
STATE = ".skillmake"
SCHEMA = "config.schema.json"
_IMPORTS_SKILLMAKE = re.compile(r"^\s*(?:from|import)\s+skillmake\b", re.M)
_TOOL_TABLE = re.compile(r"^\s*\[\s*tool\s*\.\s*[\"']?skillmake[\"']?\s*[\].]", re.M)
# What an earlier run leaves in .skillmake/: a folder holding none of these is a stray, not a project's store.
_RESULTS = ("objects", "actions", "runs", "reports")


def find_root(start: str | None = None) -> str:
    """The project root, absolute. Creates nothing. The rule, first match wins:

    1. $SKILLMAKE_ROOT (what `skillmake --root DIR` sets);
    2. the nearest folder, from `start` (default: the current folder) upward, holding a project file:
       `skillmake.toml`, a `pyproject.toml` with a [tool.skillmake] table, or a `dodo.py` that imports skillmake;
    3. else the nearest folder holding a `.skillmake/` with results of an earlier run in it (never the home
       folder: an old stray there would swallow every project under it);
    4. else `start` itself.
    """
    given = os.environ.get(ROOT_VAR)
    if given:
        return os.path.abspath(os.path.expanduser(given))
    here = os.path.abspath(start or os.getcwd())
    folders = [here]
    while (parent := os.path.dirname(folders[-1])) != folders[-1]:
        folders.append(parent)
    for folder in folders:
        if _project_file(folder):
            return folder
    home = os.path.realpath(os.path.expanduser("~"))
    for folder in folders:
        if os.path.realpath(folder) != home and _holds_results(os.path.join(folder, STATE)):
            return folder
    return here


def project_file(folder: str) -> str | None:
    """The file that makes `folder` a project root, if any (discovery leaves such a folder below the root alone)."""
    return _project_file(folder)


def _project_file(folder: str) -> str | None:
    """The file that makes `folder` a project root, if any."""
    if os.path.isfile(os.path.join(folder, CONFIG_FILE)):
        return CONFIG_FILE
    text = _read(os.path.join(folder, PYPROJECT))
    if text and "skillmake" in text and _has_tool_table(text):
        return PYPROJECT
    dodo = _read(os.path.join(folder, DODO))
    if dodo and _IMPORTS_SKILLMAKE.search(dodo):
        return DODO
    return None


def _has_tool_table(text: str) -> bool:
    import tomllib  # only where a pyproject.toml mentions skillmake: ~15 ms of the editor-save path otherwise

    try:
        tool = tomllib.loads(text).get("tool")
    except tomllib.TOMLDecodeError:
        return bool(_TOOL_TABLE.search(text))  # broken, but meant for us: load_config reports where
    return isinstance(tool, dict) and "skillmake" in tool


def _holds_results(state: str) -> bool:
    return any(os.path.isdir(os.path.join(state, name)) for name in _RESULTS)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """A project's settings. Each is a default below the spec's own value (see overrides.py)."""

    root: str  # absolute
    file: str | None = None  # the file the settings came from; None: no configuration, all defaults
    specs: tuple[str, ...] = ()  # folders or globs relative to the root; empty: the whole root
    exclude: tuple[str, ...] = ()
    store: str = ""  # absolute; see state_dir
    jobs: int | None = None
    trials: int | None = None
    timeout: float | None = None
    max_cost: float | None = None  # the spending cap in USD (budget.py); --max-cost and $SKILLMAKE_MAX_COST beat it
    agent: dict[str, Any] = field(default_factory=dict)  # the agent of specs naming none; defaults for the rest
    judge: dict[str, Any] = field(default_factory=dict)  # provider, model
    remote: str | None = None  # a shared remote store's URL (remote.py); $SKILLMAKE_REMOTE and --remote beat it
    executor: str | None = None  # threads, or dask://HOST:PORT (engine/cluster.py); --executor beats it
    # [limits]: requests in flight per provider and model (run/ratelimit.py); --max-connections beats max_connections
    max_connections: int | None = None
    adaptive_connections: bool = True

    @property
    def state_dir(self) -> str:
        """Where skillmake keeps its store, views, reports and doit's db: `store`, else <root>/.skillmake."""
        return self.store or os.path.join(self.root, STATE)

    @property
    def content_store(self) -> str:
        """The objects/actions store: $SKILLMAKE_STORE (one store shared by clones or CI runs), else state_dir."""
        shared = os.environ.get("SKILLMAKE_STORE")
        return os.path.realpath(os.path.expanduser(shared)) if shared else self.state_dir


class ConfigErrors(SpecErrors):
    """The project configuration is invalid: every problem, located in the file."""

    exit_code = 2


def load_config(root: str) -> Config:
    """The configuration of the project at `root`: `skillmake.toml` (its top level), else the [tool.skillmake]
    table of `pyproject.toml`, else all defaults. Raise ConfigErrors listing every problem."""
    root = os.path.abspath(root)
    path = os.path.join(root, CONFIG_FILE)
    table: tuple[str, ...] = ()
    text = _read(path)
    if text is None:
        path, table = os.path.join(root, PYPROJECT), ("tool", "skillmake")
        text = _read(path)
        if text is None or "skillmake" not in text:
            return Config(root=root)
    shown = os.path.basename(path)
    import tomllib

    try:
        data: Any = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        if table and not _TOOL_TABLE.search(text):
            return Config(root=root)  # someone else's broken pyproject.toml, no table of ours in it
        raise ConfigErrors([_syntax_error(shown, exc)]) from None
    for key in table:
        data = data.get(key) if isinstance(data, dict) else None
    if data is None:
        return Config(root=root)
    errors = _schema_errors(shown, text, table, data)
    if not table and isinstance(data, dict) and isinstance(data.get("tool"), dict) and "skillmake" in data["tool"]:
        errors = [SpecError("skillmake.toml holds the settings at its top level, not under [tool.skillmake]",
                            loc=Location(path=shown, line=_positions(text, ())[1].get("/tool", (1, 1))[0], col=1,
                                         pointer="/tool"),
                            hint="drop the [tool.skillmake] header (that table is for pyproject.toml)")]
    errors += _store_errors(root, shown, text, table, data)
    errors += _remote_errors(shown, text, table, data)
    if errors:
        raise ConfigErrors(errors)
    store = data.get("store")
    return Config(root=root, file=path, specs=tuple(data.get("specs", ())), exclude=tuple(data.get("exclude", ())),
                  store=os.path.normpath(os.path.join(root, os.path.expanduser(store))) if store else "",
                  jobs=data.get("jobs"), trials=data.get("trials"),
                  timeout=float(data["timeout"]) if "timeout" in data else None,
                  max_cost=float(data["max_cost"]) if "max_cost" in data else None,
                  agent=dict(data.get("agent", {})), judge=dict(data.get("judge", {})),
                  remote=data.get("remote"), executor=data.get("executor"),
                  max_connections=data.get("limits", {}).get("max_connections"),
                  adaptive_connections=data.get("limits", {}).get("adaptive", True))


STORE_OUTSIDE = "allow_store_outside_root"


def _store_errors(root: str, shown: str, text: str, table: tuple[str, ...], data: Any) -> list[SpecError]:
    """`store` moves every run's state (views, reports, doit's db, the store): outside the root only deliberately,
    with `allow_store_outside_root = true` or the folder listed in SKILLMAKE_ALLOWED_ROOTS (docs/paths.md)."""
    store = data.get("store") if isinstance(data, dict) else None
    if not isinstance(store, str) or not store.strip() or data.get(STORE_OUTSIDE) is True:
        return []
    from skillmake.core.paths import ALLOWED_ROOTS_VAR, allowed_roots, within

    resolved = os.path.realpath(os.path.join(root, os.path.expanduser(store)))
    roots, _ = allowed_roots(root)
    if any(within(resolved, r) for r in roots):
        return []
    prefix = "".join(f"/{key}" for key in table)
    line, col = _positions(text, table)[0].get("/store", (1, 1))
    shown_at = os.path.relpath(resolved, os.path.realpath(root))
    return [SpecError(f"store {store!r} is outside the project root (it resolves to {shown_at})",
                      loc=Location(path=shown, line=line, col=col, pointer=f"{prefix}/store"),
                      hint=f"keep the store inside the project, or say it is meant: {STORE_OUTSIDE} = true (or list "
                           f"its folder in {ALLOWED_ROOTS_VAR}; see docs/paths.md)")]


def _remote_errors(shown: str, text: str, table: tuple[str, ...], data: Any) -> list[SpecError]:
    """`remote` is a URL (remote.py reads it through fsspec): a bare bucket or folder name is a located error."""
    value = data.get("remote") if isinstance(data, dict) else None
    if not isinstance(value, str) or not value.strip() or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://\S", value):
        return []
    prefix = "".join(f"/{key}" for key in table)
    line, col = _positions(text, table)[0].get("/remote", (1, 1))
    return [SpecError(f"remote {value!r} is not a URL",
                      loc=Location(path=shown, line=line, col=col, pointer=f"{prefix}/remote"),
                      hint="write s3://bucket/prefix (S3 or an S3-compatible server) or file:///shared/folder")]


def _syntax_error(shown: str, exc: tomllib.TOMLDecodeError) -> SpecError:
    message = str(exc)
    m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
    if m:
        message = message[: m.start()]
    line, col = (int(m.group(1)), int(m.group(2))) if m else (1, 1)
    return SpecError(f"not valid TOML: {message}", loc=Location(path=shown, line=line, col=col),
                     hint="fix the TOML syntax (https://toml.io)")


def _schema_errors(shown: str, text: str, table: tuple[str, ...], data: Any) -> list[SpecError]:
    from skillmake.spec.schema import spec_errors

    prefix = "".join(f"/{key}" for key in table)
    src = Source(path=shown, data=data)
    src.positions, src.key_positions = _positions(text, table)
    errors = []
    for error in spec_errors(src, SCHEMA):
        loc = error.loc or Location(path=shown)
        errors.append(SpecError(error.message, loc=replace(loc, pointer=prefix + loc.pointer),
                                hint=error.hint))
    if not isinstance(data, dict):
        return errors
    for key in ("specs", "exclude"):
        for i, entry in enumerate(data.get(key, []) if isinstance(data.get(key), list) else []):
            if isinstance(entry, str) and (os.path.isabs(entry) or ".." in re.split(r"[/\\]", entry)):
                line, col = src.positions.get(f"/{key}", (1, 1))
                errors.append(SpecError(f"{entry!r} points outside the project root",
                                        loc=Location(path=shown, line=line, col=col, pointer=f"{prefix}/{key}/{i}"),
                                        hint="write a folder or glob relative to the project root, without '..'"))
    return errors


_KEY = r"(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')"
_DOTTED = re.compile(rf"\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*=\s*")
_HEADER = re.compile(rf"\s*\[\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*\]")


def _parts(dotted: str) -> list[str]:
    return [p.strip().strip("\"'") for p in re.findall(rf"{_KEY}", dotted)]


def _positions(text: str, table: tuple[str, ...]) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """Where each key of `table` is written, as JSON pointers relative to the table: (values, keys), 1-based.
    tomllib keeps no positions; this reads the lines the way TOML files are written (headers, dotted keys,
    inline tables on one line), which is all an error message needs."""
    values: dict[str, tuple[int, int]] = {}
    keys: dict[str, tuple[int, int]] = {}
    current: list[str] = []
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):  # TOML ends lines at LF only
        header = _HEADER.match(line)
        if header and not line.lstrip().startswith("[["):
            current = _parts(header.group(1))
            if tuple(current[: len(table)]) == table and len(current) > len(table):
                pointer = "/" + "/".join(current[len(table):])
                values.setdefault(pointer, (number, header.start(1) + 1))
                keys.setdefault(pointer, (number, header.start(1) + 1))
            continue
        m = _DOTTED.match(line)
        if not m:
            continue
        path = current + _parts(m.group(1))
        if tuple(path[: len(table)]) != table or len(path) == len(table):
            continue
        pointer = "/" + "/".join(path[len(table):])
        keys.setdefault(pointer, (number, m.start(1) + 1))
        values.setdefault(pointer, (number, m.end() + 1))
        if line[m.end():].lstrip().startswith("{"):  # an inline table: its keys are on this line
            for inner in re.finditer(rf"[{{,]\s*({_KEY})\s*=\s*", line[m.end():]):
                sub = f"{pointer}/{_parts(inner.group(1))[0]}"
                keys.setdefault(sub, (number, m.end() + inner.start(1) + 1))
                values.setdefault(sub, (number, m.end() + inner.end() + 1))
    return values, keys
