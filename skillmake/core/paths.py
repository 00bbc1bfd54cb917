"""Where a spec's paths may point: the roots a skill may live under, paths kept inside a workspace, names safe
as file names, and links in a skill folder that must not lead out of it."""

from __future__ import annotations

import os
import re
import stat

from skillmake.core.oswalk import walk
from skillmake.core.skillscope import not_skill

ALLOWED_ROOTS_VAR = "SKILLMAKE_ALLOWED_ROOTS"
MAX_NAME = 128  # a spec name, case id or arm name is a folder name in .skillmake/ and in task names
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
SAFE_NAME_RULE = "letters, digits, '_', '.', '-', starting with a letter or digit"


def within(path: str, folder: str) -> bool:
    """Is `path` `folder` or inside it? Both as given: resolve them first where links matter."""
    return os.path.commonpath([path, folder]) == folder


def spec_file_problem(resolved: str, *, root: str) -> str | None:
    """Why a file a spec reads (an input file, a check's script or schema file), written relative to the spec's
    folder and resolved with its links followed, may not be used: it lies outside the project root. The root,
    not the spec's folder, is the boundary, so `evals/` beside `fixtures/` works (`../fixtures/x.csv`), as
    `skill: ../skills/x` does; a project's files never reach outside it, whatever links they pass through."""
    real_root = os.path.realpath(root)
    if within(resolved, real_root):
        return None
    # Relative to the root, so the message reads the same in every clone of the project.
    return f"resolves outside the project root (to {os.path.relpath(resolved, real_root)})"


SPEC_FILE_HINT = ("keep the files a spec reads inside the project (its root holds skillmake.toml, a pyproject.toml "
                  "with [tool.skillmake], a dodo.py or .skillmake/; `--root DIR` sets it); links are followed")


def allowed_roots(project_root: str) -> tuple[list[str], list[str]]:
    """The folders a skill may live under, resolved: the project root, then each folder listed in
    SKILLMAKE_ALLOWED_ROOTS (separated by os.pathsep). Also the entries ignored because they are not absolute."""
    roots = [os.path.realpath(project_root)]
    ignored = []
    for entry in os.environ.get(ALLOWED_ROOTS_VAR, "").split(os.pathsep):
        if not entry:
            continue
        expanded = os.path.expanduser(entry)
        if os.path.isabs(expanded):
            roots.append(os.path.realpath(expanded))
        else:
            ignored.append(entry)
    return roots, ignored


def unsafe_name(name: str) -> str | None:
    """Why `name` cannot name a folder or a task (None when it can)."""
    if not name:
        return "is empty"
    if len(name) > MAX_NAME:
        return f"is longer than {MAX_NAME} characters"
    if not _SAFE_NAME.fullmatch(name):
        return "is not a safe file name"
    return None


def workspace_path_problem(path: str) -> str | None:
    """Why `path` (relative to a trial workspace, maybe a glob) could point outside it (None when it cannot)."""
    if path.startswith("~"):
        return "starts with '~' (a home folder, outside the workspace)"
    if path.startswith("/") or os.path.isabs(path):
        return "is absolute"
    if ".." in re.split(r"[/\\]", path):
        return "has a '..' component"
    return None


def link_problem(path: str, real_folder: str) -> str | None:
    """Why the link at `path` inside a skill folder must not be followed (None when it is not a link, or a link to
    a file inside `real_folder`, the skill folder resolved)."""
    if not os.path.islink(path):
        return None
    target = os.path.realpath(path)
    written = os.readlink(path)
    if not os.path.exists(target):
        return f"is a broken link (to {written})"
    if not within(target, real_folder):
        return f"links outside the skill folder (to {written})"
    if os.path.isdir(target):
        return "is a link to a folder"
    return None


def link_problems(folder: str) -> list[tuple[str, str]]:
    """(path relative to `folder`, problem) for each link in the skill folder that must not be followed."""
    real = os.path.realpath(folder)
    out = []
    for here, dirs, names in walk(folder):  # iterative: a 1,300-deep folder in a skill must not crash validate
        dirs[:] = sorted(d for d in dirs if not not_skill(here, d, top=folder))
        for name in [*dirs, *sorted(names)]:
            if not_skill(here, name, top=folder):
                continue
            full = os.path.join(here, name)
            problem = link_problem(full, real)
            if problem:
                out.append((os.path.relpath(full, folder).replace(os.sep, "/"), problem))
    return out


LINK_HINT = ("replace the link with a copy of the file; a link in a skill folder may only point at a file inside "
             "the same folder (it is hashed and installed as that file's content)")


def cut_links(base: str | os.PathLike[str], path: str | os.PathLike[str], *, children: bool = False) -> list[str]:
    """Make `path`, a folder skillmake owns under the state folder `base` (runs/, reports/, triggers/), safe to
    write and to remove: a link among its components below `base`, or `path` itself being one, is removed — the
    link only, never what it points at — so what is made there next is a real folder inside `base`, and nothing
    is written or deleted through a link out of the project. With `children`, links directly inside `path` go
    too (a report folder's own sub-folders). `base` itself is the project's configured layout: trusted.
    Returns the links removed."""
    top, target = os.path.abspath(base), os.path.abspath(path)
    if not within(target, top):
        raise ValueError(f"{target} is not under {top}")  # a caller's mistake: it names its own folders
    removed: list[str] = []
    current = top
    for part in [] if target == top else os.path.relpath(target, top).split(os.sep):
        current = os.path.join(current, part)
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            return removed  # nothing further exists: what gets made there is real
        if stat.S_ISLNK(mode):
            os.unlink(current)
            removed.append(current)
            return removed  # nothing below it exists any more
    if children:
        try:
            entries = list(os.scandir(target))
        except OSError:
            entries = []
        for entry in entries:
            if entry.is_symlink():
                os.unlink(entry.path)
                removed.append(entry.path)
    return removed
