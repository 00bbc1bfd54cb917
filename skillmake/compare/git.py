"""Reading a skill out of git: which commit a revision names, and a folder's files at that commit."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile

from skillmake.core.errors import SkillmakeError

_TIMEOUT = 60.0  # seconds: a hung git (a lock, a network filesystem) must not hold the command up forever


class GitError(SkillmakeError):
    """git could not answer: not a repository, an unknown revision, a path the revision does not have."""

    exit_code = 3


def _git(args: list[str], *, cwd: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=_TIMEOUT, check=False)
    except FileNotFoundError:
        raise GitError("git is not installed", hint="install git, or pass --against DIR with the skill's folder") \
            from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git failed: {exc}", hint="pass --against DIR with the skill's folder instead") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {detail[-1] if detail else f'exit {done.returncode}'}")
    return done.stdout


def toplevel(folder: str) -> str:
    """The root of the git work tree holding `folder` (GitError when there is none)."""
    try:
        out = _git(["rev-parse", "--show-toplevel"], cwd=folder)
    except GitError:
        raise GitError(f"{folder} is not inside a git repository",
                       hint="--against REV reads the skill from git; pass --against DIR with a folder instead") \
            from None
    return os.path.realpath(out.decode().strip())


def commit_of(top: str, revision: str) -> str:
    """The full commit id `revision` names (GitError when git does not know it)."""
    if revision.startswith("-"):
        raise GitError(f"{revision!r} is not a git revision")
    try:
        return _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"],
                    cwd=top).decode().strip()
    except GitError:
        raise GitError(f"git knows no revision {revision!r}",
                       hint="name a commit, branch or tag (`git log --oneline -- <skill folder>` lists the skill's "
                            "commits), or pass --against DIR with a folder") from None


def export(top: str, commit: str, path: str, dest: str) -> str:
    """Write the files under `path` (relative to the work tree's root, '/'-separated) as they are at `commit` into
    `dest`, keeping their relative paths and modes; return where `path` is under `dest`. GitError when the
    commit does not have `path`."""
    try:
        data = _git(["archive", "--format=tar", commit, "--", path], cwd=top)
    except GitError:
        raise GitError(f"commit {commit[:12]} has no {path}",
                       hint="pick a revision where the skill exists at the same path, or pass --against DIR") \
            from None
    os.makedirs(dest, exist_ok=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            archive.extractall(dest, filter="data")  # no links out, no absolute paths, no devices
    except tarfile.TarError as exc:
        raise GitError(f"cannot export {path} at {commit[:12]}: {exc}",
                       hint="a skill's links must stay inside its folder; pass --against DIR instead") from None
    return os.path.normpath(os.path.join(dest, *path.split("/")))
