"""Finding a project's spec files: where to look (config `specs`, `exclude`), and telling other tools' files apart."""

from __future__ import annotations

import fnmatch
import glob
import itertools
import os
import re
from dataclasses import dataclass, field

from skillmake.core import oswalk
from skillmake.core.errors import SkillmakeError
from skillmake.spec.adapters import supported
from skillmake.spec.adapters.detect import foreign_format, seed_file, seed_spec_name
from skillmake.spec.config import Config, load_config
from skillmake.spec.loader import SPEC_SUFFIXES, spec_name_of

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".skillmake", "node_modules", "__pycache__", ".venv", "venv",
                       ".tox", ".nox", ".mypy_cache", ".ruff_cache", ".pytest_cache", "site-packages", ".tools"})
# Folders below a searched one that discovery enters: a spec lives far shallower, and walking an agent's
# leftover 1,300-deep folder would cost a minute of path lookups (docs/paths.md).
MAX_SEARCH_DEPTH = 100
EXIT_NO_SPECS = 5  # errors.EXIT_NO_SPECS once it lands there (pytest's "no tests collected")
# A top-level key at column 0 of a block-style YAML file (the way specs are written): `key:` or `"key":`.
_TOP_KEY = re.compile(r"^(?:\"([^\"\n]*)\"|'([^'\n]*)'|([A-Za-z_$][\w$.-]*))[ \t]*:(?=[ \t]|$)", re.M)


@dataclass(frozen=True, slots=True, kw_only=True)
class Head:
    """What a spec file says about itself without being parsed in full: its top-level keys and name."""

    path: str
    keys: frozenset[str] = frozenset()
    name: str = ""  # `name:` when the file sets one, else taken from the file name
    name_at: tuple[int, int] = (1, 1)  # where `name:`'s value is (line, column); (1, 1) when named by the file
    foreign: str | None = None  # the other tool whose format this is ("caliper", "eva"), None for a skillmake spec
    stray: bool = False  # a clauditor spec with no skill beside it: clauditor runs it only through --eval

    @property
    def skipped(self) -> bool:
        """In another tool's format that skillmake cannot read yet (spec/adapters), or a stray clauditor spec."""
        return self.stray or (self.foreign is not None and not supported(self.foreign))

    @property
    def named(self) -> bool:
        return "name" in self.keys


def read_head(path: str, root: str | None = None) -> Head:
    """The head of the spec at `path`; an unreadable file is a skillmake spec named after its file (loading it
    reports what is wrong). With the project's `root` (a search), a clauditor spec with no skill is marked stray."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return Head(path=path, name=spec_name_of(path))
    keys, name, at = (_json_head(text) if path.endswith(".json") else _yaml_head(text))
    fmt = foreign_format(keys, path)
    if fmt is not None:  # a seed's `name:` (if any) means something else there: adapters name it (detect.py)
        stray = False
        if fmt == "clauditor" and root is not None:
            from skillmake.spec.adapters.clauditor import stray as clauditor_stray

            stray = clauditor_stray(os.path.abspath(path), os.path.abspath(root), os.environ)
        return Head(path=path, keys=keys, name=seed_spec_name(fmt, path) or spec_name_of(path), foreign=fmt,
                    stray=stray)
    return Head(path=path, keys=keys, name=name or spec_name_of(path), name_at=at if name else (1, 1))


def _yaml_head(text: str) -> tuple[frozenset[str], str, tuple[int, int]]:
    keys: set[str] = set()
    name, at = "", (1, 1)
    for m in _TOP_KEY.finditer(text):
        key = next(g for g in m.groups() if g is not None)
        keys.add(key)
        if key == "name" and not name:
            end = text.find("\n", m.end())
            rest = text[m.end(): end if end >= 0 else len(text)]
            name = _scalar(rest)
            col = m.end() - m.start() + len(rest) - len(rest.lstrip(" \t")) + 1
            at = (text.count("\n", 0, m.start()) + 1, col)
    return frozenset(keys), name, at


def _scalar(rest: str) -> str:
    """A one-line YAML scalar as written after `name:` (quotes and a trailing comment removed)."""
    value = rest.strip()
    if value[:1] in ("'", '"'):
        end = value.find(value[0], 1)
        return value[1:end] if end > 0 else ""
    return re.split(r"\s#", value, maxsplit=1)[0].strip()


def _json_head(text: str) -> tuple[frozenset[str], str, tuple[int, int]]:
    import json  # not orjson: importing it costs ~10 ms on the editor-save path (validate FILE)

    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return frozenset(), "", (1, 1)
    if not isinstance(data, dict):
        return frozenset(), "", (1, 1)
    name = data.get("name") if isinstance(data.get("name"), str) else ""
    at = (1, 1)
    if name:
        m = re.search(r"\"name\"\s*:\s*", text)
        if m:
            at = (text.count("\n", 0, m.end()) + 1, m.end() - text.rfind("\n", 0, m.end()))
    return frozenset(data), name or "", at


@dataclass(slots=True)
class Discovery:
    """What a search for specs found: the skillmake specs, and files in other tools' formats it skipped."""

    root: str
    searched: tuple[str, ...]  # the config's `specs`, or ("." ,) for the whole root
    files: list[str] = field(default_factory=list)
    heads: dict[str, Head] = field(default_factory=dict)  # every found file (specs and skipped) → its head
    skipped: list[Head] = field(default_factory=list)
    nested: list[str] = field(default_factory=list)  # folders below the root that are projects of their own


class NoSpecs(SkillmakeError):
    """Nothing to run: no spec file where the project says specs live."""

    exit_code = EXIT_NO_SPECS

    def __init__(self, found: Discovery) -> None:
        where = ", ".join(found.searched)
        message = f"no specs found under {found.root} (searched: {where})"
        if found.skipped:
            message += f"; {skipped_note(found.skipped, found.root)}"
        if found.nested:  # run from a folder above several projects: each is its own, never merged into one
            shown = ", ".join(_shown(n, found.root) + "/" for n in found.nested[:5])
            more = f" and {len(found.nested) - 5} more" if len(found.nested) > 5 else ""
            message += f"; the projects below it are run on their own: {shown}{more}"
            super().__init__(message, hint=f"cd into one of them, or `skillmake --root "
                                           f"{_shown(found.nested[0], found.root)}`")
            return
        super().__init__(message, hint="write a <skill>.eval.yaml beside your skill (`skillmake init` writes one), "
                                       "or point [tool.skillmake] specs at the folders that hold them; "
                                       "`--root DIR` runs another project")


def skipped_note(skipped: list[Head], root: str) -> str:
    """One line naming the files in other formats that were left alone."""
    shown = ", ".join(f"{_shown(h.path, root)} ({h.foreign}" + (": no skill beside it, run it with `skillmake "
                      "clauditor grade SKILL --eval FILE`)" if h.stray else ")") for h in skipped)
    if len(skipped) == 1:
        return f"skipped 1 file in another format: {shown}"
    return f"skipped {len(skipped)} files in other formats: {shown}"


def require_specs(root: str, config: Config | None = None) -> None:
    """Raise NoSpecs when the project at `root` has no spec (ConfigErrors when its configuration is broken)."""
    found = scan(root, config)
    if not found.files:
        raise NoSpecs(found)


def discover(root: str, config: Config | None = None) -> list[str]:
    """Every skillmake spec file of the project at `root`, sorted (files in other tools' formats left out)."""
    return scan(root, config).files


def scan(root: str, config: Config | None = None) -> Discovery:
    """Search the project for spec files: the folders and globs of the config's `specs` (default: the whole root),
    minus its `exclude` globs, the store, VCS folders, caches, virtualenvs and node_modules."""
    root = os.path.abspath(root)
    config = config or load_config(root)
    found = Discovery(root=root, searched=config.specs or (".",))
    skip_real = {os.path.realpath(config.state_dir)}
    paths: set[str] = set()
    for entry in found.searched:
        matches = _glob(root, entry) if glob.has_magic(entry) else [os.path.join(root, entry)]
        for match in sorted(matches):
            if os.path.isfile(match) and (match.endswith(SPEC_SUFFIXES) or seed_file(match)):
                if not _excluded(os.path.relpath(match, root), config.exclude):
                    paths.add(os.path.normpath(match))
            elif os.path.isdir(match):
                paths.update(_walk(match, root, config.exclude, skip_real, found.nested))
    for path in sorted(paths):
        head = read_head(path, root)
        if not _claimed(head):
            continue
        found.heads[path] = head
        if head.skipped:
            found.skipped.append(head)
        else:
            found.files.append(path)
    return found


def _claimed(head: Head) -> bool:
    """A bare `eval.json` (beside a SKILL.md) is clauditor's only when its keys say so: the name is too generic to
    claim a file of another tool, or a broken one, as a spec."""
    return os.path.basename(head.path) != "eval.json" or head.foreign == "clauditor"


def _walk(top: str, root: str, exclude: tuple[str, ...], skip_real: set[str], nested: list[str]) -> list[str]:
    """Spec files under `top`; a folder that is a project of its own (its skillmake.toml, [tool.skillmake] or
    dodo.py) is never entered, as git leaves a nested repository alone: it is added to `nested` instead."""
    from skillmake.spec.config import project_file

    out: list[str] = []
    for folder, dirs, files in oswalk.walk(top, max_depth=MAX_SEARCH_DEPTH):
        rel = os.path.relpath(folder, root)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS
                         and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
                         and not _excluded(os.path.normpath(os.path.join(rel, d)), exclude)
                         and os.path.realpath(os.path.join(folder, d)) not in skip_real)
        for d in [d for d in dirs if project_file(os.path.join(folder, d))]:
            dirs.remove(d)
            nested.append(os.path.join(folder, d))
        out.extend(os.path.normpath(os.path.join(folder, f)) for f in files
                   if (f.endswith(SPEC_SUFFIXES) or seed_file(os.path.join(folder, f)))
                   and not _excluded(os.path.normpath(os.path.join(rel, f)), exclude))
    return out


def _glob(root: str, pattern: str) -> list[str]:
    """glob.glob(root/pattern, recursive=True), but a `**` is matched over an iterative walk: glob's own recursion
    fails on a deep folder under the pattern's base."""
    if "**" not in pattern:
        return glob.glob(os.path.join(root, pattern))
    from skillmake.core.fstree import glob_regex

    parts = pattern.replace(os.sep, "/").split("/")
    fixed = list(itertools.takewhile(lambda part: not glob.has_magic(part), parts))
    base = os.path.join(root, *fixed)
    matcher = glob_regex("/".join(parts[len(fixed):]))
    out: list[str] = []
    hidden = "/." in "/" + "/".join(parts[len(fixed):])  # else, as with glob, no `**` enters a dot-folder
    for folder, dirs, files in oswalk.walk(base, max_depth=MAX_SEARCH_DEPTH):
        if not hidden:
            dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel = os.path.relpath(folder, base).replace(os.sep, "/")
        prefix = "" if rel == "." else rel + "/"
        out.extend(os.path.join(folder, name) for name in [*dirs, *files] if matcher.fullmatch(prefix + name))
    return out


def _excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    """A pattern without '/' matches a file or folder name anywhere; with '/', the path from the root."""
    rel = rel.replace(os.sep, "/")
    name = rel.rsplit("/", 1)[-1]
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if "/" in pattern:
            if fnmatch.fnmatchcase(rel, pattern.removeprefix("./")):
                return True
        elif fnmatch.fnmatchcase(name, pattern):
            return True
    return False


def _shown(path: str, root: str) -> str:
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel
