"""Where trials execute: a private folder outside every project tree.

Claude Code looks upward from its working folder for `.claude/` (commands, skills, settings) and `CLAUDE.md`;
Codex for `AGENTS.md`, `.codex/` and `.agents/skills` (up to the nearest `.git`). A trial run below the project
(`<project>/.skillmake/work/…`) would see the project's own setup, and a `without_skill` baseline would not be
one. So trials run under `<tmp>/skillmake-<uid>/<project id>/`: a folder of this user only (0700, not a link),
with none of those names in it or in any folder above it, and outside the project root. The project id names
the project's state folder, so one project's run can empty its own leftovers without touching another's.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import threading
import time
from pathlib import Path

from skillmake.core.errors import SkillmakeError

BASE_VAR = "SKILLMAKE_TMPDIR"  # where the private folder is made (default: the system's temporary folder)
# What an agent finds by looking upward from its working folder; none may be in or above a trial's workspace.
MARKERS = (".claude", "CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md", ".codex", ".agents",
           ".git")
_FALLBACKS = ("/tmp", "/var/tmp")
_HINT = (f"set {BASE_VAR} to a folder with none of {', '.join(MARKERS)} in it or above it, outside the project "
         "(trials run there so that no agent sees the project's own Claude Code or Codex setup)")
_lock = threading.Lock()
# (real state folder, $SKILLMAKE_TMPDIR) → the work root, and (the arguments as given, the same) → the same answer
_chosen: dict[tuple[str, ...], Path] = {}
# a work root that fell back to `<state>/work` (where problem() refuses every trial) → why each candidate would not do
_REFUSED: dict[str, str] = {}


def visible_markers(folder: str | os.PathLike[str]) -> list[str]:
    """The MARKERS in `folder` or in any folder above it (as paths), nearest first."""
    found = []
    ancestor = os.path.realpath(folder)
    while True:  # plain strings: every trial asks, ~50 names each
        for name in MARKERS:
            path = os.path.join(ancestor, name)
            if _holds_something(path):
                found.append(path)
        parent = os.path.dirname(ancestor)
        if parent == ancestor:
            return found
        ancestor = parent


def _holds_something(path: str | Path) -> bool:
    """A marker an agent could read: a file or link, or a folder with anything in it. The codex CLI makes an
    empty `<tmp>/.codex` for a moment while it runs (its sandbox's mount target), and an empty folder tells no
    agent anything; counting it made every trial started meanwhile refuse to run."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return True
    try:
        with os.scandir(path) as entries:
            return next(entries, None) is not None
    except OSError:
        return True  # unreadable: it may hold anything


def work_root(state_dir: str | os.PathLike[str], project_root: str | os.PathLike[str] | None = None) -> Path:
    """The folder where the trials of the project whose state folder is `state_dir` execute (not created here;
    the trial runner makes one folder per trial in it). When no candidate is clean, `<state>/work` — where
    `problem` then refuses to run any trial, saying why and what to set."""
    given = (os.fspath(state_dir), os.fspath(project_root or ""), os.environ.get(BASE_VAR, ""))
    chosen_for = _chosen.get(given)  # asked once per trial: the same (absolute) arguments skip their realpaths
    if chosen_for is not None and os.path.isabs(given[0]):
        return chosen_for
    state = os.path.realpath(state_dir)
    root = os.path.realpath(project_root) if project_root else os.path.dirname(state)
    memo = (state, os.environ.get(BASE_VAR, ""))
    with _lock:
        if memo in _chosen:
            if os.path.isabs(given[0]):
                _chosen[given] = _chosen[memo]
            return _chosen[memo]
    project_id = hashlib.sha256(state.encode()).hexdigest()[:16]
    chosen = Path(state) / "work"
    refused = []
    for base in _candidates():
        why = _unsuitable(base, root)
        folder = _private(base) if why is None else None
        if folder is not None:
            chosen = folder / project_id
            break
        refused.append(f"{base}: {why or f'no private folder skillmake-{_uid()} of this user can be made there'}")
    with _lock:
        if chosen.parent == Path(state):  # not remembered: a watching process finds the folder once it is made
            _REFUSED[os.fspath(chosen)] = "; ".join(refused) or "no temporary folder exists"
            return chosen
        _REFUSED.pop(os.fspath(Path(state) / "work"), None)
        _chosen[memo] = chosen
        if os.path.isabs(given[0]):
            _chosen[given] = chosen
    return chosen


def problem(folder: str | os.PathLike[str]) -> SkillmakeError | None:
    """Why an agent may not run in `folder` (a trial's workspace): what it would find above it.

    Asked before every trial, so each folder above is looked into through `_markers_in` (one stat while the folder
    is as it was), not with a stat per marker name."""
    found = []
    ancestor = os.path.dirname(real_folder(folder))
    while True:
        found += _markers_in(ancestor)
        parent = os.path.dirname(ancestor)
        if parent == ancestor:
            break
        ancestor = parent
    if not found:
        return None
    message = f"the trial would run in {folder}, where the agent would see {found[0]}"
    for fallback, why in _REFUSED.items():  # the work root fell back here: say why no temporary folder would do
        if os.fspath(folder).startswith(fallback + os.sep):
            named = os.environ.get(BASE_VAR)
            return SkillmakeError(
                f"{message}, because no temporary folder could be used ({why})",
                hint=(f"make {named}, or point {BASE_VAR} at a folder that exists" if named and not os.path.isdir(named)
                      else _HINT))
    return SkillmakeError(message, hint=_HINT)


def real_folder(folder: str | os.PathLike[str]) -> str:
    """os.path.realpath of a folder that exists, as the kernel resolved it when opening it (Linux: its /proc fd
    link; three system calls, where realpath made an lstat and a Python step per component of the path);
    os.path.realpath itself elsewhere, or when the folder cannot be opened."""
    if _O_PATH:
        try:
            fd = os.open(folder, _O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return os.path.realpath(folder)
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            real = ""
        finally:
            os.close(fd)
        if real.startswith("/") and not real.endswith(" (deleted)"):
            return real
    return os.path.realpath(folder)


_O_PATH = getattr(os, "O_PATH", 0) if os.path.isdir("/proc/self/fd") else 0


# folder → (its (inode, mtime, ctime) when looked into, the MARKERS it held then): a marker made, removed or renamed
# there changes the folder's mtime, so while that stat is the same, only what a marker folder holds can differ
# (looked into again). A folder changed less than _RACY seconds before it was looked into is not remembered: a
# change in the same clock tick as the look would leave its mtime as it was (git's "racy" entries).
_MARKERS_SEEN: dict[str, tuple[tuple[int, int, int], tuple[tuple[str, bool], ...]]] = {}
_RACY = 2.0


def _markers_in(folder: str) -> list[str]:
    """The MARKERS an agent could read in `folder` itself (visible_markers, one folder)."""
    try:
        st = os.stat(folder)
    except OSError:
        st = None
    sig = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns) if st is not None else None
    seen = _MARKERS_SEEN.get(folder)
    if seen is None or seen[0] != sig:
        now = time.time()
        present = []
        for name in _candidates_in(folder, st):
            path = os.path.join(folder, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            present.append((path, stat.S_ISDIR(mode)))
        seen = (sig, tuple(present)) if sig is not None else None
        if st is not None and seen is not None and now - st.st_mtime > _RACY:
            if len(_MARKERS_SEEN) > 256:
                _MARKERS_SEEN.clear()
            _MARKERS_SEEN[folder] = seen
        if seen is None:
            return visible_in(folder)
    return [path for path, is_dir in seen[1] if not is_dir or _holds_something(path)]


def _candidates_in(folder: str, st: os.stat_result | None) -> tuple[str, ...]:
    """The MARKERS that may be in `folder`: those its listing holds when it is small (one block, as a trial's own
    folders are: one listing instead of a stat per name), else all of them."""
    if st is None or st.st_size > 4096:
        return MARKERS
    try:
        names = set(os.listdir(folder))
    except OSError:
        return MARKERS
    return tuple(name for name in MARKERS if name in names)


def visible_in(folder: str) -> list[str]:
    """The MARKERS in `folder` itself that an agent could read, looked up one by one."""
    return [path for name in MARKERS if _holds_something(path := os.path.join(folder, name))]


def _candidates() -> list[str]:
    explicit = os.environ.get(BASE_VAR)
    if explicit:  # chosen on purpose: the only candidate, so a bad choice is said, not silently replaced
        return [os.path.abspath(explicit)]
    out = [tempfile.gettempdir(), *_FALLBACKS]
    return [c for i, c in enumerate(out) if c not in out[:i] and os.path.isdir(c)]


def _unsuitable(base: str, project_root: str) -> str | None:
    real = os.path.realpath(base)
    if not os.path.isdir(real):
        return "not a folder"
    if os.path.commonpath([real, project_root]) == project_root:
        return "inside the project"
    seen = visible_markers(real)
    return f"{seen[0]} is visible from there" if seen else None


def _private(base: str) -> Path | None:
    """`<base>/skillmake-<uid>`, made 0700 if missing; None if it exists and is not a folder of ours only."""
    uid = _uid()
    folder = Path(base) / f"skillmake-{uid}"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        st = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != uid):
        return None
    if st.st_mode & 0o077:
        try:
            os.chmod(folder, 0o700)
        except OSError:
            return None
    return folder


def _uid() -> int:
    return os.getuid() if hasattr(os, "getuid") else 0
