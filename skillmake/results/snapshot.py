"""A run's result snapshot (caliper's): what the report was computed against — the skill's files, the files the
spec reads, and the project's git commit — saved beside the report whenever the report changed. The files are named
by content digest, and their contents are kept in the store under those digests (keep_contents)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skillmake.core.canonical import digest_bytes, digest_json
from skillmake.results.report import report_digest
from skillmake.spec.model import Spec
from skillmake.spec.skillfiles import file_digest, manifest

SNAPSHOT_SCHEMA = "skillmake/snapshot@1"
SNAPSHOTS = "snapshots"
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_GIT_TIMEOUT = 5.0  # seconds: a hung git (a lock, a network filesystem) must not hold the run up


def snapshot_name(ts: str, run_id: str | None) -> str:
    """`<timestamp>-<run id>.json`, sortable by time; the ISO timestamp without the characters file systems
    refuse (`:`) or sort badly (`+`)."""
    stamp = re.sub(r"[^0-9T]", "", ts.split("+", 1)[0].removesuffix("Z"))
    return f"{stamp}Z-{run_id or 'report'}.json"


def build_snapshot(spec: Spec, report: dict[str, Any], *, ts: str, run_id: str | None) -> dict[str, Any]:
    """The snapshot of one report: its digest and verdict, the skill's manifest (relative path → content digest,
    the same digests the trial keys cover), the referenced files and the git commit of the project."""
    root = project_root(spec)
    skill = manifest(spec.skill)
    verdict = report["verdict"]
    return {
        "schema": SNAPSHOT_SCHEMA, "ts": ts, "run_id": run_id, "spec": spec.name,
        "spec_file": _relative(spec.path, root),
        "report": {"digest": report_digest(report), "passed": bool(verdict["passed"]),
                   "reasons": list(verdict["reasons"])},
        "skill": {"name": spec.skill.name, "kind": spec.skill.kind, "path": _relative(spec.skill.path, root),
                  "digest": digest_json(skill), "files": skill["files"]},
        "referenced": referenced_files(spec),
        "git": _git(root),
    }


def keep_contents(spec: Spec, snapshot: dict[str, Any], put: Callable[[bytes], str]) -> int:
    """Put the content of every file the snapshot names into the store (`put` returns the content's digest), so each
    digest resolves to the file as it was — caliper keeps the contents in its snapshots; here they are stored once
    by content. A file changed since it was hashed is left out (its digest names other bytes). Returns how many."""
    paths = [(os.path.join(spec.skill.path, rel) if spec.skill.kind == "folder" else spec.skill.path, digest)
             for rel, digest in snapshot["skill"]["files"].items()]
    paths += [(_referenced_paths(spec).get(rel, ""), digest) for rel, digest in snapshot["referenced"].items()]
    kept = 0
    for path, digest in paths:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if digest_bytes(data) == digest:
            put(data)
            kept += 1
    return kept


def _referenced_paths(spec: Spec) -> dict[str, str]:
    """Files the spec reads besides the skill, by the path written in the spec → their path on disk."""
    wanted: dict[str, str] = {}
    for case in spec.cases:
        for item in case.input_files:
            wanted.setdefault(item.relpath, item.source)
        for check in case.checks:
            for key in ("script", "schema_file"):
                rel = check.raw.get(key)
                if isinstance(rel, str):
                    wanted.setdefault(rel, os.path.join(spec.folder, rel))
    return wanted


def referenced_files(spec: Spec) -> dict[str, str]:
    """Files the spec reads besides the skill (staged fixtures, check scripts and schemas), relative to the spec's
    folder as written, each with its content digest. One gone since the run is left out, never fatal."""
    out: dict[str, str] = {}
    for rel, path in sorted(_referenced_paths(spec).items()):
        try:
            out[rel] = file_digest(path)
        except OSError:
            continue
    return out


def project_root(spec: Spec) -> str:
    """The project root the spec was found under: its path less its path from the root (`Spec.relpath`)."""
    path, rel = spec.path.replace(os.sep, "/"), spec.relpath.replace(os.sep, "/")
    if rel and path.endswith("/" + rel):
        return path[: -len(rel) - 1] or "/"
    return spec.folder


def _relative(path: str, root: str) -> str:
    rel = os.path.relpath(path, root)
    return (path if rel.startswith("..") else rel).replace(os.sep, "/")


def _git(root: str) -> dict[str, str] | None:
    """{"sha": HEAD's commit} when `root` is inside a git work tree with a commit; None otherwise (and whenever
    git cannot say: a snapshot never fails a run)."""
    folder = _git_dir(Path(root))
    if folder is None:
        return None
    sha = _read_head(folder)
    if sha is None:  # packed into a worktree's common dir, or a format this reader does not know: ask git
        sha = _rev_parse(root)
    return {"sha": sha} if sha is not None else None


def _git_dir(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():  # a worktree or submodule: `gitdir: <path>`
            try:
                text = dot.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text.removeprefix("gitdir:").strip())
                return target if target.is_absolute() else folder / target
            return None
    return None


def _read_head(git_dir: Path) -> str | None:
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if _SHA.match(head):
        return head  # detached
    if not head.startswith("ref:"):
        return None
    ref = head.removeprefix("ref:").strip()
    try:
        value = (git_dir / ref).read_text(encoding="utf-8").strip()
        return value if _SHA.match(value) else None
    except OSError:
        pass
    try:
        packed = (git_dir / "packed-refs").read_text(encoding="utf-8")
    except OSError:
        return None  # a branch with no commit yet, or refs elsewhere (a worktree): git decides
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and _SHA.match(sha):
            return sha
    return None


def _rev_parse(root: str) -> str | None:
    try:
        done = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=root, capture_output=True,
                              text=True, timeout=_GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and _SHA.match(sha) else None
