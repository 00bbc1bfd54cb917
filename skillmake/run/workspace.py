"""Per-trial isolation: a fresh workspace with staged inputs, a fresh HOME, a clean environment; capturing
the declared output files and the workspace tree afterwards, and writing a kept tree back out."""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import fstree
from skillmake.core.pid import pid
from skillmake.run.staging import Held, stage_inputs, untouched
from skillmake.run.supervisors import RUN_PID_ENV
from skillmake.spec.model import Case, Spec

# Variables passed from the user's environment to every agent; everything else is dropped.
# API keys are not here: an agent that needs one adds it itself (settings.py).
ENV_ALLOW = ("PATH", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR", "USER", "LOGNAME", "SHELL",
             "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
             "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "SYSTEMROOT")
_LC = re.compile(r"^LC_[A-Z]+$")

# What a trial may hand to the store. Output files over the capture limits make the trial an error (the
# checks would grade a partial capture); a workspace over the keep limits is simply not kept.
CAPTURE_MAX_FILES = 1_000
CAPTURE_MAX_BYTES = 64 << 20
KEEP_MAX_FILES = 5_000
KEEP_MAX_BYTES = 64 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialDir:
    """A trial folder: where it executes (<key>-<run>/ under hermetic.work_root, outside the project, with
    workspace/, home/ and the staged skill/; named by the trial that made it, and used again by later trials of
    the process once emptied: `spare`), or a cell's view (runs/<spec>/<case>/<arm>/trial-<k>/, with workspace/ and
    the result files, checked out by checkout.py)."""

    root: Path
    spare: bool = field(default=False, repr=False, compare=False)  # an emptied folder of an earlier trial
    held: Held | None = field(default=None, repr=False, compare=False)  # what its skill/ holds (a spare's)
    # root / "workspace" and root / "home", made once (a trial asks for them a dozen times)
    workspace: Path = field(init=False, repr=False, compare=False)
    home: Path = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "workspace", self.root / "workspace")
        object.__setattr__(self, "home", self.root / "home")

    def read(self, name: str, *, key: str | None = None) -> dict[str, Any] | None:
        """A kept record (trial.json, grade.json): None when missing, unreadable, or — given `key` — another's."""
        try:
            data = orjson.loads((self.root / name).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        if not isinstance(data, dict) or (key is not None and data.get("key") != key):
            return None
        return data


def kept_tree(record: dict[str, Any]) -> str | None:
    """The digest of the workspace tree a trial record kept, or None. Records written before trees were kept
    hold the path of their run folder there instead: they stay valid results, with no tree."""
    value = record.get("workspace")
    return value if isinstance(value, str) and value.startswith("sha256:") else None


def trial_dir(runs_root: str | Path, spec: Spec, case: Case, arm: str, k: int) -> TrialDir:
    """The cell's view folder: runs/<spec>/<case>/<arm>/trial-<k>/ (a checkout, see checkout.py)."""
    return TrialDir(root=Path(f"{os.fspath(runs_root)}/{spec.name}/{case.id}/{arm}/trial-{k}"))  # one parse, not 5


def scratch_dir(work_root: str | Path, key: str, run_id: str) -> TrialDir:
    """Where one execution runs: a folder an earlier trial of this process left emptied (release), whose processes
    have all ended; else a new one named by trial key *and* run, so no process of an earlier run can still be
    writing into it (design.md: a trial owns its workspace). A folder is used again where it is, not renamed: the
    folders above it then stay as they were, and the next trial's look for agent files above its workspace
    (hermetic.problem) finds them unchanged instead of listing them again."""
    base = os.fspath(work_root)
    spare = _SPARES.take(base)
    if spare is not None:
        return TrialDir(root=Path(spare[0]), spare=True, held=spare[1])
    return TrialDir(root=Path(f"{base}/{key[7:23]}-{run_id}"))


def prepare(tdir: TrialDir, case: Case, *, digests: dict[str, str] | None = None,
            skill: bool = False) -> Held | None:
    """Give the trial folder an empty workspace/ and home/ (a spare folder an earlier trial of this process left,
    see `release`), then stage a fresh copy of every input file (clauditor: shutil.copy2), each verified against
    `digests` (dest → digest, the key's) when given (staging.Changed when one differs). With `skill`, the trial
    stages a skill next (staging.stage_skill, which prunes what a spare's skill/ holds beyond it: returned here
    when it is known, see Held); without, no skill/ is left where the agent could look."""
    held = tdir.held
    if not tdir.spare:
        fstree.remove_tree(tdir.root)
        tdir.workspace.mkdir(parents=True)
        tdir.home.mkdir()
        _SPARES.learn_mode(tdir.workspace)
    if not skill:
        fstree.remove_tree(tdir.root / "skill")
        held = None
    stage_inputs(case, tdir.workspace, digests)
    return held


def release(tdir: TrialDir) -> None:
    """The trial is over (every process of it ended): its folder is emptied and kept as a spare for this process's
    next trial, or removed when it holds anything else than a trial leaves (or cannot be emptied).

    Removing a folder costs ~5 ms on a disk mounted with `discard` (as here), creating one ~0.4 ms: a trial's four
    removals were its largest cost. The folder stays where it is (scratch_dir hands it out again). Only folders are
    kept (workspace/, home/, and the
    staged skill's folders, which the next trial of the same skill fills again); every file goes, and so does
    every folder of workspace/ and home/, so the next trial finds them as empty as new ones."""
    if _SPARES.give(tdir.root):
        return
    fstree.remove_tree(tdir.root)


class _Spares:
    """Emptied trial folders of this process, by work root (a project's hermetic.work_root)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.free: dict[str, list[tuple[str, Held | None]]] = {}  # work root → (spare, what its skill/ holds)
        self.at_exit = False  # whether clear is registered to run at this process's exit
        self.mode: int | None = None  # a new folder's mode (umask applied): what a kept one is given back
        self.pid = pid()

    def learn_mode(self, folder: Path) -> None:
        if self.mode is None:
            self.mode = stat.S_IMODE(os.lstat(folder).st_mode)

    def take(self, work_root: str) -> tuple[str, Held | None] | None:
        """A spare folder of `work_root`, and what its skill/ holds (None: no skill/, or not known); None when there
        is none."""
        with self.lock:
            if self.pid != pid():  # a forked doit worker: the parent's spares are the parent's
                self.free, self.at_exit, self.pid = {}, False, pid()
            spares = self.free.get(work_root)
            return spares.pop() if spares else None

    def give(self, root: Path) -> bool:
        if self.mode is None or self.pid != pid():
            return False
        try:
            emptied, held = _emptied(root, self.mode)
        except OSError:
            return False
        if not emptied:
            return False
        spare = os.fspath(root)
        with self.lock:
            first, self.at_exit = not self.at_exit, True
            self.free.setdefault(os.path.dirname(spare), []).append((spare, held))
        if first:
            atexit.register(self.clear, self.pid)
        return True

    def clear(self, owner: int) -> None:
        """At exit: the spares go (a run killed before this leaves them to the next run, which empties the work
        root first), and so does a work root left empty, by the run's main process only (a -P process worker
        leaving early could remove one that another worker is about to make a trial folder in)."""
        if owner != pid():
            return
        with self.lock:
            roots = list(self.free)
            spares = [spare for group in self.free.values() for spare, _ in group]
            self.free = {}
        # Side by side: on a disk mounted with `discard` each removal waits ~4 ms on the device, so a run's -j 4
        # spares took ~80 ms of its exit one after another (~20 ms side by side).
        removers = [threading.Thread(target=_remove_spare, args=(spare,), name="skillmake-spare", daemon=True)
                    for spare in spares[1:]]
        for remover in removers:
            remover.start()
        if spares:
            _remove_spare(spares[0])
        for remover in removers:
            remover.join()
        if os.environ.get(RUN_PID_ENV) == str(owner):
            for root in roots:  # <tmp>/skillmake-<uid>/<project>: one a project, a test suite's thousands
                with contextlib.suppress(OSError):  # not empty: a killed run's folders (the next run empties it)
                    os.rmdir(root)


def _remove_spare(folder: str) -> None:
    """One spare goes; one that cannot is left to the next run, which empties the work root before its first trial."""
    with contextlib.suppress(OSError):
        fstree.remove_tree(folder)


_SPARES = _Spares()


def clear_spares() -> None:
    """Remove this process's spare trial folders now (a doit worker leaves through os._exit, skipping atexit)."""
    _SPARES.clear(pid())


_KEPT = {"workspace": False, "home": False, "skill": True}  # a trial folder's entries: whether sub-folders stay


def _emptied(root: Path, mode: int) -> tuple[bool, Held | None]:
    """Empty a finished trial's folder for reuse: (False, None) (and maybe half done) when it holds something a
    trial folder does not (a link, a file at its top, a name it does not make); else (True, what its skill/ holds
    now, None when it has none)."""
    with os.scandir(root) as listing:
        entries = list(listing)
    names = {e.name for e in entries}
    if not {"workspace", "home"} <= names or not names <= set(_KEPT):
        return False, None
    held = None
    for entry in entries:
        st = entry.stat(follow_symlinks=False)  # one lstat: its type and its mode
        if not stat.S_ISDIR(st.st_mode):
            return False, None
        if stat.S_IMODE(st.st_mode) != mode:
            os.chmod(entry.path, mode)
        if _KEPT[entry.name]:
            held = _strip(entry.path, mode)
        else:
            for name in os.listdir(entry.path):
                fstree.remove_tree(os.path.join(entry.path, name))
    _restore(str(root), mode)
    return True, held


def _strip(folder: str, mode: int) -> Held:
    """Remove every file and link under `folder`, keeping its sub-folders (given `mode` back) and the staged skill
    files that are still exactly as staged (staging.untouched: the next trial of the skill keeps them); returns
    what is left. One listing per folder, without recursion (a skill may be ~1,300 deep)."""
    files: list[str] = []
    folders: list[str] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        with os.scandir(os.path.join(folder, rel) if rel else folder) as listing:
            entries = list(listing)
        for entry in entries:
            sub = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                _restore(entry.path, mode)  # before it is listed: an agent may have made it unreadable
                folders.append(sub)
                stack.append(sub)
            elif untouched(entry.path):
                files.append(sub)
            else:
                os.unlink(entry.path)
    return Held(files=frozenset(files), folders=frozenset(folders))


def _restore(folder: str, mode: int) -> None:
    if stat.S_IMODE(os.lstat(folder).st_mode) != mode:
        os.chmod(folder, mode)


def clean_env(home: str | Path, *, extra_path: tuple[str, ...] = (), spec_folder: str = "") -> dict[str, str]:
    env = _allowed_env()
    env.setdefault("PATH", os.defpath)
    if extra_path:
        prefix = os.pathsep.join(os.path.join(spec_folder, p) for p in extra_path)
        env["PATH"] = prefix + os.pathsep + env["PATH"]
    here = os.fspath(home)  # strings: four Path joins a trial were a tenth of this function's cost
    env["HOME"] = here
    env["XDG_CONFIG_HOME"] = os.path.join(here, ".config")
    env["XDG_CACHE_HOME"] = os.path.join(here, ".cache")
    env["XDG_DATA_HOME"] = os.path.join(here, ".local", "share")
    return env


def _allowed_env() -> dict[str, str]:
    """The variables of this process's environment that pass to agents (ENV_ALLOW, LC_*), as a new dict. Asked once
    per trial: worked out again only when the environment changed (its raw data compared, a C-level dict compare;
    decoding every variable cost ~0.5 ms a trial)."""
    global _ALLOWED
    data = getattr(os.environ, "_data", None)  # os._Environ's bytes → bytes mapping
    memo = _ALLOWED
    if data is not None and memo is not None and memo[0] == data:
        return dict(memo[1])
    allowed = {k: v for k, v in os.environ.items() if k in ENV_ALLOW or _LC.match(k)}
    if isinstance(data, dict):
        _ALLOWED = (dict(data), allowed)
    return dict(allowed)


_ALLOWED: tuple[dict[Any, Any], dict[str, str]] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Captured:
    """The declared output files, and why the capture failed (over the limits), if it did."""

    files: dict[str, bytes]
    error: str | None = None
    skipped: tuple[str, ...] = ()  # links and other things that matched a pattern but are never read


def capture(workspace: Path, case: Case) -> Captured:
    """The declared output files: output_file, and every file matching output_files (`**` for any depth).

    Only regular files inside the workspace are read: a link (to a file or a folder, inside or out) is
    never followed, so an agent cannot make skillmake copy an outside file into the store.
    """
    patterns = list(case.output_files) + ([case.output_file] if case.output_file else [])
    if not patterns:
        return Captured(files={})
    regexes = [fstree.glob_regex(p) for p in patterns]
    limits = fstree.Limits(max_files=1_000_000, max_bytes=1 << 62)  # walking is bounded by depth only
    found: dict[str, bytes] = {}
    skipped: list[str] = []
    total = 0
    for entry in fstree.walk(workspace, limits):
        if not any(r.match(entry.rel) for r in regexes):
            continue
        if entry.link is not None:
            skipped.append(f"{entry.rel} is a link (to {entry.link}); links are never captured")
            continue
        total += entry.size
        if len(found) + 1 > CAPTURE_MAX_FILES or total > CAPTURE_MAX_BYTES:
            return Captured(files={}, error=(
                f"the output files matching {patterns} exceed the capture limits ({CAPTURE_MAX_FILES:,} files, "
                f"{CAPTURE_MAX_BYTES >> 20} MiB); narrow output_files, or have the agent write less"))
        try:
            found[entry.rel] = Path(entry.path).read_bytes()
        except OSError:
            continue
    return Captured(files=dict(sorted(found.items())), skipped=tuple(skipped))


def snapshot(workspace: Path, put: Callable[[bytes], str]) -> tuple[Any, str | None]:
    """The workspace as a tree manifest {path: {"file": digest, "mode": …} | {"link": target}}, each file
    stored through `put`; (None, why) when the tree is over the keep limits."""
    limits = fstree.Limits(max_files=KEEP_MAX_FILES, max_bytes=KEEP_MAX_BYTES)
    entries = list(fstree.walk(workspace, limits))
    over = limits.exceeded()
    if over:
        return None, f"the workspace was not kept: it holds more than {over}"
    tree: dict[str, Any] = {}
    for entry in entries:
        if entry.link is not None:
            tree[entry.rel] = {"link": entry.link}
            continue
        try:
            data = Path(entry.path).read_bytes()
        except OSError:
            continue
        tree[entry.rel] = {"file": put(data), "exec": bool(entry.mode & 0o100)}
    note = None
    if limits.skipped:
        note = "parts of the workspace were not kept: " + "; ".join(limits.skipped[:3])
    return tree, note


def materialize(tree: dict[str, Any], dest: Path, get: Callable[[str], bytes | None]) -> int:
    """Write a tree manifest out under `dest` (links recreated as links, never followed); files missing
    from the store are left out. Returns how many files were written."""
    written = 0
    os.makedirs(dest, exist_ok=True)
    if not tree:  # an empty workspace (most command agents'): its folder is all there is
        return 0
    base = os.path.realpath(dest)
    for rel, node in sorted(tree.items()):
        target = os.path.normpath(os.path.join(base, rel))
        if not target.startswith(base + os.sep):  # a manifest never names a path outside its root
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if "link" in node:
            with contextlib.suppress(OSError):
                os.symlink(node["link"], target)
            continue
        data = get(node["file"])
        if data is None:
            continue
        with open(target, "wb") as f:
            f.write(data)
        if node.get("exec"):
            os.chmod(target, 0o755)
        written += 1
    return written


def output_text(case: Case, stdout: str, files: dict[str, bytes]) -> str:
    """The text checks see by default: output_file wins, then output_files (joined), else stdout (clauditor)."""
    if case.output_file:
        data = files.get(case.output_file)
        return data.decode("utf-8", "replace") if data is not None else ""
    if case.output_files:
        return "\n".join(data.decode("utf-8", "replace") for data in files.values())
    return stdout
