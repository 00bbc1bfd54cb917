"""Another version of the spec's skill: a folder (--against DIR), a git revision (--against REV), or the version
its last recorded report ran with (--previous), each with its manifest — the digest its trial keys hold."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from skillmake.compare import git
from skillmake.core.canonical import digest_file, digest_json
from skillmake.core.errors import RecordError, SkillmakeError
from skillmake.results.snapshot import SNAPSHOTS
from skillmake.spec.model import Skill, Spec
from skillmake.spec.schema import validate_record
from skillmake.spec.skillfiles import manifest
from skillmake.store.objects import Store

SNAPSHOT_SCHEMA = "snapshot.schema.json"


class VersionError(SkillmakeError):
    """The other version cannot be found or used (a usage error: exit 3)."""

    exit_code = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class Version:
    """One version of the skill. `path` is where its files are (a folder, or a command file); None when they
    could not be recovered (`missing` names them): its trials can then be read from the store, never run."""

    label: str  # in the result file's name: dir-<name>, rev-<commit>, previous
    title: str  # for people: "the skill at HEAD~1 (commit 3f2a…)"
    source: str  # folder | revision | previous
    manifest: dict[str, Any]  # {"kind", "files"}: skillfiles.manifest's shape
    path: str | None
    details: dict[str, Any] = field(default_factory=dict)  # path / revision / commit / snapshot, for the document
    missing: tuple[str, ...] = ()

    @property
    def digest(self) -> str:
        return digest_json(self.manifest)


def current(spec: Spec) -> Version:
    return Version(label="current", title="the skill as it is now", source="current", manifest=manifest(spec.skill),
                   path=spec.skill.path)


def from_folder(spec: Spec, given: str) -> Version:
    """The skill in folder `given`: the folder itself when it holds SKILL.md (or is the command file), else the
    entry inside it named like the spec's skill."""
    found = _skill_in(spec.skill, os.path.abspath(given))
    if found is None:
        what = "a SKILL.md" if spec.skill.kind == "folder" else f"the command file {os.path.basename(spec.skill.path)}"
        raise VersionError(f"--against {given}: no skill there (looked for {what} in it, and in "
                           f"{os.path.join(given, os.path.basename(spec.skill.path))})",
                           hint="pass the folder that holds the other version of the skill, or a git revision")
    if os.path.realpath(found) == os.path.realpath(spec.skill.path):
        raise VersionError(f"--against {given} is the spec's own skill", hint="pass a folder with another version")
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", os.path.basename(os.path.normpath(os.path.abspath(given))))
    return Version(label=f"dir-{name}", title=f"the skill in {given}", source="folder",
                   manifest=manifest(_as(spec.skill, found)), path=found, details={"path": given})


def from_revision(spec: Spec, revision: str, *, scratch: Path) -> Version:
    """The skill's files as they are at git revision `revision`, exported into `scratch`."""
    real = os.path.realpath(spec.skill.path)
    top = git.toplevel(real if spec.skill.kind == "folder" else os.path.dirname(real))
    rel = os.path.relpath(real, top)
    try:
        commit = git.commit_of(top, revision)
    except git.GitError as exc:  # --against takes a folder too: say both were tried
        raise VersionError(f"--against {revision}: no such folder, and {exc.message}", hint=exc.hint) from None
    path = git.export(top, commit, rel.replace(os.sep, "/"), str(scratch / f"rev-{commit[:12]}"))
    if not (os.path.isfile(os.path.join(path, "SKILL.md")) if spec.skill.kind == "folder" else os.path.isfile(path)):
        raise VersionError(f"at {revision} ({commit[:12]}), {rel} is not a skill"
                           + (" (no SKILL.md)" if spec.skill.kind == "folder" else ""),
                           hint="pick a revision where the skill exists at the same path")
    return Version(label=f"rev-{commit[:12]}", title=f"the skill at {revision} (commit {commit[:12]})",
                   source="revision", manifest=manifest(_as(spec.skill, path)), path=path,
                   details={"revision": revision, "commit": commit})


def previous(spec: Spec, *, reports: Path, store: Store, root: str, scratch: Path) -> Version:
    """The newest version of the skill a recorded report ran with that differs from the skill as it is now,
    read from reports/<spec>/snapshots/; its files recovered from the store's objects or the snapshot's git
    commit when they can be (by content digest), else left missing."""
    snapshots = _snapshots(reports / spec.name / SNAPSHOTS)
    if not snapshots:
        raise VersionError(f"spec {spec.name} has no recorded report to compare with",
                           hint="run `skillmake` first: every run that changes the report records the skill's "
                                "version (reports/<spec>/snapshots/); or pass --against REV|DIR")
    now = digest_json(manifest(spec.skill))
    older = [(name, s) for name, s in snapshots if s["skill"]["digest"] != now]
    if not older:
        raise VersionError(f"the skill has not changed since its last recorded report ({snapshots[0][1]['ts']}); "
                           "there is no earlier version to compare with",
                           hint="edit the skill and compare again, or pass --against REV|DIR")
    name, snap = older[0]
    recorded = {"kind": snap["skill"]["kind"], "files": dict(snap["skill"]["files"])}
    commit = (snap.get("git") or {}).get("sha")
    target = scratch / "previous"
    path, missing = _recover(spec.skill, recorded, snap["skill"]["path"], commit=commit, store=store, root=root,
                             dest=target)
    title = f"the skill as of its report of {snap['ts']}"
    return Version(label="previous", title=title, source="previous", manifest=recorded, path=path,
                   details={"snapshot": name, "commit": commit}, missing=missing)


def _snapshots(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    """Readable snapshots, newest first (their names sort by time); a damaged one is passed over."""
    out = []
    for path in sorted(folder.glob("*.json"), reverse=True) if folder.is_dir() else []:
        try:
            data = orjson.loads(path.read_bytes())
            validate_record(SNAPSHOT_SCHEMA, data, what=f"snapshot {path}")
        except (OSError, orjson.JSONDecodeError, RecordError):
            continue
        out.append((path.name, data))
    return out


def _recover(skill: Skill, recorded: dict[str, Any], rel: str, *, commit: str | None, store: Store, root: str,
             dest: Path) -> tuple[str | None, tuple[str, ...]]:
    """Rebuild the recorded version's files under `dest`, each checked against its digest: from the git commit
    the report was made at (uncommitted edits then were not in it), else the store's objects (a kept workspace
    holds an installed skill's files). (where the skill is, or None; the files that could not be found)."""
    exported = _from_git(commit, root, rel, dest / "git") if commit else None
    folder = dest / "skill"
    target = folder if skill.kind == "folder" else folder / os.path.basename(skill.path)
    missing = []
    for name, digest in sorted(recorded["files"].items()):
        out = target / name if skill.kind == "folder" else target
        source = (os.path.join(exported, *name.split("/")) if skill.kind == "folder" else exported) if exported \
            else None
        out.parent.mkdir(parents=True, exist_ok=True)
        if source and os.path.isfile(source) and digest_file(source) == digest:
            shutil.copy2(source, out)
            continue
        data = store.get(digest)
        if data is None:
            missing.append(name)
            continue
        out.write_bytes(data)
    shutil.rmtree(dest / "git", ignore_errors=True)
    if missing or digest_json(manifest(_as(skill, str(target)))) != digest_json(recorded):
        return None, tuple(missing) or ("(the rebuilt files do not match the recorded digest)",)
    return str(target), ()


def _from_git(commit: str, root: str, rel: str, dest: Path) -> str | None:
    """Where the project's `rel` (a file or folder; it may be gone now) is after exporting it at `commit`; None
    when git cannot say."""
    try:
        top = git.toplevel(root)
        inside = os.path.relpath(os.path.join(os.path.realpath(root), rel), top)
        return git.export(top, commit, inside.replace(os.sep, "/"), str(dest))
    except (git.GitError, OSError):
        return None


def _skill_in(skill: Skill, given: str) -> str | None:
    base = os.path.basename(skill.path)
    if skill.kind == "folder":
        for candidate in (given, os.path.join(given, base)):
            if os.path.isfile(os.path.join(candidate, "SKILL.md")):
                return candidate
        return None
    for candidate in (given, os.path.join(given, base)):
        if os.path.isfile(candidate):
            return candidate
    return None


def _as(skill: Skill, path: str) -> Skill:
    return Skill(name=skill.name, path=path, kind=skill.kind)
