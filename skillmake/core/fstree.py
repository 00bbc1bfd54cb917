"""Walking, matching and removing file trees of any depth without ever following a link out.

An agent may leave anything in its workspace: a 1,200-level deep folder, links to /etc, a million files.
Python 3.11's os.walk, glob and shutil.rmtree recurse (RecursionError past ~1,000 levels) and build full
paths (ENAMETOOLONG past 4,096 bytes), so the tree functions here are iterative, bounded, and remove a tree
through directory file descriptors with two of them open at a time, whatever its depth.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path  # annotations only: validate FILE imports this module for glob_regex

MAX_DEPTH = 64  # folders below a walked root; deeper ones are reported, never entered
MAX_PATH = 1024  # characters of a relative path


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One thing under a walked root: a regular file, or a symbolic link (never followed)."""

    rel: str  # '/'-separated, relative to the root
    path: str
    size: int
    mode: int
    link: str | None = None  # the link's target text, for a symlink


@dataclass(slots=True)
class Limits:
    """How much a walk may take in, and what it met beyond that."""

    max_files: int
    max_bytes: int
    files: int = 0
    bytes: int = 0
    skipped: list[str] | None = None  # why something was not taken (too deep, a path too long, …)

    def exceeded(self) -> str | None:
        if self.files > self.max_files:
            return f"{self.files:,} files (the limit is {self.max_files:,})"
        if self.bytes > self.max_bytes:
            return f"{self.bytes / 2**20:.1f} MiB (the limit is {self.max_bytes / 2**20:.0f} MiB)"
        return None


def walk(root: str | Path, limits: Limits | None = None) -> Iterator[Entry]:
    """Files and links under `root`: a folder's own files in name order, then its sub-folders'. Folders are
    entered only if they are real folders (not links), at most MAX_DEPTH deep. Stops early once `limits`
    are exceeded."""
    base = os.fspath(root)
    stack: list[tuple[str, int]] = [("", 0)]
    while stack:
        rel_dir, depth = stack.pop()
        try:
            with os.scandir(os.path.join(base, rel_dir) if rel_dir else base) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        folders: list[tuple[str, int]] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if len(rel) > MAX_PATH:
                _skip(limits, f"{rel[:60]}…: path longer than {MAX_PATH} characters")
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if depth + 1 > MAX_DEPTH:
                    _skip(limits, f"{rel[:60]}…: deeper than {MAX_DEPTH} folders")
                else:
                    folders.append((rel, depth + 1))
                continue
            if stat.S_ISLNK(st.st_mode):
                try:
                    target = os.readlink(entry.path)
                except OSError:
                    continue
                item = Entry(rel=rel, path=entry.path, size=0, mode=st.st_mode, link=target)
            elif stat.S_ISREG(st.st_mode):
                item = Entry(rel=rel, path=entry.path, size=st.st_size, mode=st.st_mode)
            else:
                continue  # sockets, fifos, devices: nothing to keep
            if limits is not None:
                limits.files += 1
                limits.bytes += item.size
                if limits.exceeded():
                    return
            yield item
        stack.extend(reversed(folders))  # so they pop in name order


def _skip(limits: Limits | None, why: str) -> None:
    if limits is not None:
        if limits.skipped is None:
            limits.skipped = []
        if len(limits.skipped) < 20:
            limits.skipped.append(why)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob (`*`, `?`, `[…]`, and `**` for any number of folders) as a regex over '/'-separated paths.
    As with glob.glob, `*` and `?` do not match a leading dot."""
    out = []
    i, n = 0, len(pattern)
    at_start = True  # at the start of a path segment
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append(r"(?:[^./][^/]*/)*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(r"(?:[^./][^/]*(?:/[^./][^/]*)*)?")
            i += 2
            continue
        if c == "*":
            out.append(r"(?!\.)[^/]*" if at_start else r"[^/]*")
        elif c == "?":
            out.append(r"[^/.]" if at_start else r"[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern.startswith(("[!", "[]"), i) else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j].replace("\\", "\\\\")
                out.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
                i = j
        else:
            out.append(re.escape(c))
        at_start = c == "/"
        i += 1
    return re.compile("".join(out) + r"\Z")


def inside(path: str | Path, root: str | Path) -> bool:
    """Whether `path`, with every link resolved, is `root` itself or lies under it."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def make_folders(path: str | Path) -> None:
    """os.makedirs(path, exist_ok=True) without recursion (it recurses once per missing level): the folders from
    the deepest one that exists down to `path`."""
    missing: list[str] = []
    here = os.fspath(path)
    while not os.path.isdir(here):
        missing.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise


def remove_tree(path: str | Path) -> None:
    """Delete `path` and everything under it, at any depth, never following a link; a missing path is fine.

    The tree is flattened as it goes: each sub-folder found is moved up to the top folder under a fresh
    name, so only two folders are open at a time and no path is ever longer than two names.
    """
    target = os.fspath(path)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(target)
        return
    top = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    counter = 0
    try:
        _make_writable(top, None)
        while True:
            names = os.listdir(top)
            if not names:
                break
            for name in names:
                try:
                    st = os.lstat(name, dir_fd=top)
                except FileNotFoundError:
                    continue
                if not stat.S_ISDIR(st.st_mode):
                    os.unlink(name, dir_fd=top)
                    continue
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
                try:
                    _make_writable(top, name)
                    for child in os.listdir(sub):
                        cst = os.lstat(child, dir_fd=sub)
                        if stat.S_ISDIR(cst.st_mode):
                            counter = _move_up(child, sub, top, counter)
                        else:
                            os.unlink(child, dir_fd=sub)
                finally:
                    os.close(sub)
                os.rmdir(name, dir_fd=top)
    finally:
        os.close(top)
    os.rmdir(target)


def _move_up(name: str, src_fd: int, top_fd: int, counter: int) -> int:
    """Move folder `name` from `src_fd` into the top folder under a name not taken there; the next counter."""
    while True:
        counter += 1
        new = f".skillmake-rm-{counter}"
        try:
            os.lstat(new, dir_fd=top_fd)
        except FileNotFoundError:
            os.rename(name, new, src_dir_fd=src_fd, dst_dir_fd=top_fd)
            return counter


def _make_writable(parent_fd: int, name: str | None) -> None:
    """A read-only folder (an agent's chmod 500) cannot be emptied; give its owner write access back."""
    try:
        if name is None:
            st = os.fstat(parent_fd)
            if not st.st_mode & stat.S_IWUSR:
                os.fchmod(parent_fd, st.st_mode | stat.S_IRWXU)
        else:
            st = os.lstat(name, dir_fd=parent_fd)
            if not st.st_mode & stat.S_IWUSR or not st.st_mode & stat.S_IXUSR:
                os.chmod(name, st.st_mode | stat.S_IRWXU, dir_fd=parent_fd, follow_symlinks=False)
    except (OSError, NotImplementedError):
        pass
