"""A trial runs against exactly the content its key names (design.md, "Hermetic trials").

Keys are computed when a run is planned; the files they name may change while the run goes on (a user saving
SKILL.md during a `-j 2` run). So nothing the agent reads comes from the live files: the skill and the input files
are copied into the trial's own folder, each checked against the digest its key recorded, and a file that no
longer has that content makes the trial an `error` (never cached: it runs again next time, against whatever the
files then say). The agent's own program files (a command agent's script, which may use files beside it) run
where they are, and are checked against the key before and after the agent runs instead.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import fstree
from skillmake.core.canonical import digest_file
from skillmake.core.errors import SkillmakeError
from skillmake.spec.model import Case, Skill

RERUN_HINT = "nothing was recorded under the old key; the next run runs this trial again with the files as they are"


class Changed(SkillmakeError):
    """A file a trial's key names no longer has the content the key was computed from."""


def copy_verified(source: str, dest: str | Path, digest: str, *, what: str, keep: bool = False) -> None:
    """Copy `source` to `dest` (mode and times kept), raising Changed unless the bytes copied have `digest`.
    Only a regular file is read (a fifo put there since would block the run; a folder is not a file).

    With `keep`, a `dest` that is still the untouched copy of `digest` this process made (a spare trial folder's
    staged skill, see `untouched`) is kept: the source is read and verified all the same, but no file is made."""
    try:
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise Changed(f"{what} cannot be read since the run was planned ({exc.strerror})", hint=RERUN_HINT) from None
    h = hashlib.sha256()
    kept_mode = _untouched_mode(os.fspath(dest), digest) if keep else None
    try:  # os.read/os.write, not file objects: a Python open() made 4 more system calls per file
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Changed(f"{what} is no longer a regular file", hint=RERUN_HINT)
        mode = stat.S_IMODE(st.st_mode) | stat.S_IRUSR | stat.S_IWUSR
        if kept_mode is not None and kept_mode != mode:  # the source's mode changed: a copy of its own
            os.unlink(dest)
            kept_mode = None
        size = min(st.st_size + 1, 1 << 20)
        if kept_mode is not None:
            while block := os.read(fd, size):
                h.update(block)
        else:
            fstree.make_folders(os.path.dirname(dest))  # Path.mkdir(parents=True) recursed once per level
            out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o600)
            try:
                while block := os.read(fd, size):
                    h.update(block)
                    view = memoryview(block)
                    while view:
                        view = view[os.write(out, view):]
            finally:
                os.close(out)
    finally:
        os.close(fd)
    if kept_mode is None:
        os.chmod(dest, mode)
        os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))
    if "sha256:" + h.hexdigest() != digest:
        with contextlib.suppress(OSError):
            os.unlink(dest)  # never left for a later trial to keep
        raise Changed(f"{what} changed since the run was planned (its trial key names other content)",
                      hint=RERUN_HINT)
    if keep and kept_mode is None:
        _note_copy(os.fspath(dest), digest)


# (device, inode) of a staged skill file this process wrote → (size, mtime, ctime, mode, digest) right after. A file
# an agent changed in any way (content, mode, times: each moves its ctime, which no one can set back) no longer
# matches, and neither does another file that got its inode. Bounded: emptied when it grows past _COPIES_MAX.
_COPIES: dict[tuple[int, int], tuple[int, int, int, int, str]] = {}
_COPIES_MAX = 50_000


def _note_copy(path: str, digest: str) -> None:
    st = os.lstat(path)
    if len(_COPIES) >= _COPIES_MAX:
        _COPIES.clear()
    _COPIES[(st.st_dev, st.st_ino)] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode, digest)


def untouched(path: str, digest: str | None = None) -> bool:
    """Whether `path` is a staged skill file this process wrote (of `digest`, when given) and nothing changed since:
    a trial folder made spare keeps such files, and the next trial of the same skill keeps them (copy_verified)
    instead of removing and writing them again: a file made and removed cost a trial two inode operations."""
    return _untouched_mode(path, digest) is not None


def _untouched_mode(path: str, digest: str | None) -> int | None:
    """The permission bits of `path` when `untouched`, else None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    noted = _COPIES.get((st.st_dev, st.st_ino))
    if (noted is not None and noted[:4] == (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
            and (digest is None or noted[4] == digest)):
        return stat.S_IMODE(st.st_mode)
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Held:
    """What a spare trial folder's skill/ holds once emptied (workspace.release): the staged files it kept and its
    folders, as '/'-separated paths relative to skill/."""

    files: frozenset[str]
    folders: frozenset[str]


def stage_skill(skill: Skill, manifest_data: bytes, dest: Path, *, held: Held | None = None) -> Skill:
    """The skill as its key names it: the files of the key's manifest (and only those: not the evals, results
    and caches beside it, see paths.not_skill), copied under `dest` and verified. Returns the staged skill.

    `held`: what `dest` holds (a spare's, as its release left it), when known. When it is exactly what the skill
    stages, nothing is listed or pruned (a trial listed the skill's folders twice: when its folder was emptied
    and when the next trial staged); each file is still checked as kept (untouched) and verified."""
    manifest: dict[str, Any] = orjson.loads(manifest_data)
    files: dict[str, str] = manifest.get("files") or {}
    base = os.fspath(dest)
    kind = manifest.get("kind")
    rels = [f"{skill.name}/{rel}" for rel in files] if kind == "folder" else [os.path.basename(skill.path)]
    folders = {skill.name} if kind == "folder" else set()
    for rel in rels:
        parent = rel.rpartition("/")[0]
        while parent and parent not in folders:
            folders.add(parent)
            parent = parent.rpartition("/")[0]
    if held is None or held.files != set(rels) or held.folders != folders:
        present = _prune(base, files={os.path.join(base, *rel.split("/")) for rel in rels},
                         folders={os.path.join(base, *rel.split("/")) for rel in folders})
        if kind == "folder" and os.path.join(base, skill.name) not in present:
            fstree.make_folders(os.path.join(base, skill.name))
    if kind == "folder":
        target = os.path.join(base, skill.name)
        for rel, digest in files.items():
            copy_verified(os.path.join(skill.path, *rel.split("/")), os.path.join(target, *rel.split("/")), digest,
                          what=f"skill {skill.name!r}: {rel}", keep=True)
        return Skill(name=skill.name, path=target, kind="folder")
    target = os.path.join(base, os.path.basename(skill.path))
    for name, digest in files.items():  # one file: the command (or prompt) file itself
        copy_verified(skill.path, target, digest, what=f"skill {skill.name!r}: {name}", keep=True)
    return Skill(name=skill.name, path=target, kind=skill.kind)


def _prune(folder: str, *, files: set[str], folders: set[str]) -> set[str]:
    """Make what is under `folder` (a spare trial folder's skill/, see workspace.release) a subset of what a skill
    stages there: every file or link that is not one of `files` is removed, then every sub-folder that is not one
    of `folders` (with what it holds: a file where a folder goes, an earlier skill's folders). One listing per
    folder, top-down, without recursion (a skill may be ~1,300 deep); the folders go deepest first. Returns the
    folders of `folders` that are there (`folder` itself included when it is)."""
    present: set[str] = set()
    listed = [folder]
    doomed: list[str] = []
    i = 0
    while i < len(listed):
        try:
            with os.scandir(listed[i]) as entries:
                if i == 0:
                    present.add(folder)
                for e in entries:
                    if e.is_dir(follow_symlinks=False):
                        listed.append(e.path)
                        (present.add if e.path in folders else doomed.append)(e.path)
                    elif e.path not in files or not e.is_file(follow_symlinks=False):
                        with contextlib.suppress(OSError):
                            os.unlink(e.path)
        except OSError:
            pass
        i += 1
    for path in reversed(doomed):  # a child is listed after its parent: deepest first
        with contextlib.suppress(OSError):
            os.rmdir(path)
    return present


def stage_inputs(case: Case, workspace: Path, digests: dict[str, str] | None) -> None:
    """Copy the case's input files into the workspace under their names; with `digests` (dest → digest, from
    the key's run fragment), each copy is verified, else copied as it is (a trigger trial stages none)."""
    for item in case.input_files:
        expected = (digests or {}).get(item.dest)
        if expected is None:
            shutil.copy2(item.source, workspace / item.dest)
        else:
            copy_verified(item.source, workspace / item.dest, expected, what=f"input file {item.relpath}")


def run_fragment(data: bytes) -> dict[str, Any]:
    value = orjson.loads(data)
    return value if isinstance(value, dict) else {}


@functools.lru_cache(maxsize=64)
def program_words(agent_data: bytes) -> frozenset[str]:
    """The words of a command agent's `command` that its key names as program files beside the spec
    (keys.command_files): the only words a trial runs from the spec's folder. A file that appears there after
    planning is not in the key, so the trial passes its word as written and never runs unkeyed content."""
    return frozenset(run_fragment(agent_data).get("program_files") or ())


def program_changes(agent_fragment: dict[str, Any], spec_folder: str) -> list[str]:
    """The agent's program files (keys.command_files) whose content is no longer what the key names."""
    changed = []
    for arg, digest in (agent_fragment.get("program_files") or {}).items():
        path = os.path.join(spec_folder, arg)
        try:
            now = digest_file(path)
        except OSError:
            now = None
        if now != digest:
            changed.append(arg)
    return changed


def check_programs(agent_data: bytes, spec_folder: str, *, when: str) -> None:
    """Raise Changed when an agent program file differs from its key (`when`: "before"/"while" the agent ran)."""
    if not program_words(agent_data):  # most agents name none: no fragment to parse twice a trial
        return
    changed = program_changes(run_fragment(agent_data), spec_folder)
    if changed:
        raise Changed(f"the agent's program {', '.join(changed)} changed {when} the trial ran (its trial key "
                      "names other content)", hint=RERUN_HINT)


def check_files_changed(checks: list[dict[str, Any]], spec_folder: str) -> list[str]:
    """The files read by `checks` (keyed as written, with `script_digest` / `schema_file_digest`: keys.py) whose
    content is no longer what the key names."""
    changed = []
    for raw in checks:
        for name in ("script", "schema_file"):
            digest = raw.get(f"{name}_digest") if isinstance(raw, dict) else None
            if not digest:
                continue
            try:
                now = digest_file(os.path.join(spec_folder, raw[name]))
            except OSError:
                now = None
            if now != digest:
                changed.append(str(raw[name]))
    return changed
