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
import hashlib
import os
import shutil
import stat
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


def copy_verified(source: str, dest: Path, digest: str, *, what: str, keep: bool = False) -> None:
    """Copy `source` to `dest` (mode and times kept), raising Changed unless the bytes copied have `digest`.
    Only a regular file is read (a fifo put there since would block the run; a folder is not a file).

    With `keep`, a `dest` that is still the untouched copy of `digest` this process made (a spare trial folder's
    staged skill, see `untouched`) is kept: the source is read and verified all the same, but no file is made."""
    try:
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise Changed(f"{what} cannot be read since the run was planned ({exc.strerror})", hint=RERUN_HINT) from None
    h = hashlib.sha256()
    kept = keep and untouched(str(dest), digest)
    if not kept:
        fstree.make_folders(dest.parent)  # Path.mkdir(parents=True) recursed once per level: a deep skill folder
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise Changed(f"{what} is no longer a regular file", hint=RERUN_HINT)
        if kept:
            while block := f.read(1 << 20):
                h.update(block)
        else:
            with open(dest, "wb") as out:
                while block := f.read(1 << 20):
                    h.update(block)
                    out.write(block)
    mode = stat.S_IMODE(st.st_mode) | stat.S_IRUSR | stat.S_IWUSR
    if kept and stat.S_IMODE(os.lstat(dest).st_mode) != mode:  # the source's mode changed: a copy of its own
        kept = False
        os.unlink(dest)
        copy_verified(source, dest, digest, what=what)
        return
    if not kept:
        os.chmod(dest, mode)
        os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))
    if "sha256:" + h.hexdigest() != digest:
        with contextlib.suppress(OSError):
            os.unlink(dest)  # never left for a later trial to keep
        raise Changed(f"{what} changed since the run was planned (its trial key names other content)",
                      hint=RERUN_HINT)
    if keep and not kept:
        _note_copy(str(dest), digest)


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
    try:
        st = os.lstat(path)
    except OSError:
        return False
    noted = _COPIES.get((st.st_dev, st.st_ino))
    return (noted is not None and noted[:4] == (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
            and (digest is None or noted[4] == digest))


def stage_skill(skill: Skill, manifest_data: bytes, dest: Path) -> Skill:
    """The skill as its key names it: the files of the key's manifest (and only those: not the evals, results
    and caches beside it, see paths.not_skill), copied under `dest` and verified. Returns the staged skill."""
    manifest: dict[str, Any] = orjson.loads(manifest_data)
    files: dict[str, str] = manifest.get("files") or {}
    if manifest.get("kind") == "folder":
        target = dest / skill.name
        target.mkdir(parents=True, exist_ok=True)
        wanted = {os.path.join(target, *rel.split("/")) for rel in files}
        _prune(dest, keep=wanted)  # what a spare kept of another skill goes first (a file where a folder goes)
        for rel, digest in files.items():
            copy_verified(os.path.join(skill.path, *rel.split("/")), target / rel, digest,
                          what=f"skill {skill.name!r}: {rel}", keep=True)
        _prune(dest)
        return Skill(name=skill.name, path=str(target), kind="folder")
    target = dest / os.path.basename(skill.path)
    _prune(dest, keep={str(target)})
    for name, digest in files.items():  # one file: the command (or prompt) file itself
        copy_verified(skill.path, target, digest, what=f"skill {skill.name!r}: {name}", keep=True)
    _prune(dest)
    return Skill(name=skill.name, path=str(target), kind=skill.kind)


def _prune(folder: Path, *, keep: set[str] | None = None) -> bool:
    """Remove the empty folders under `folder` (a reused trial folder keeps an earlier skill's folders, emptied:
    workspace.release); True when `folder` itself is left empty. Without recursion (a skill may be ~1,300 deep):
    every folder is listed top-down, then the empty ones are removed deepest first. With `keep`, every file (or
    link) under `folder` that is not one of those paths is removed first (what a spare kept of an earlier skill)."""
    folders = [os.fspath(folder)]
    i = 0
    while i < len(folders):
        with contextlib.suppress(OSError), os.scandir(folders[i]) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    folders.append(e.path)
                elif keep is not None and e.path not in keep:
                    with contextlib.suppress(OSError):
                        os.unlink(e.path)
        i += 1
    if keep is not None:  # the files only: the folders go once the skill is staged (the call after)
        return False
    for path in reversed(folders[1:]):  # a child is listed after its parent: deepest first
        with contextlib.suppress(OSError):  # not empty: kept
            os.rmdir(path)
    try:
        return not os.listdir(folder)
    except OSError:
        return False


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
