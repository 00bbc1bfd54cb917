"""os.walk without recursion: Python 3.11's recurses once per folder level, so a 1,300-deep folder anywhere in a
project (an agent's leftover, a test fixture) raised RecursionError in whatever walked past it."""

from __future__ import annotations

import os
from collections.abc import Iterator


def walk(top: str, *, max_depth: int | None = None) -> Iterator[tuple[str, list[str], list[str]]]:
    """(folder, sub-folder names, file names) top-down, as os.walk(top) yields them: the caller may prune the
    sub-folders list in place; links to folders are listed among the folders but never entered; a folder that
    cannot be read (gone, no permission, a path too long for the system) is skipped. With `max_depth`, folders
    more than that many levels below `top` are listed but not entered (a walk past thousands of levels costs
    seconds of system time: each path is resolved from the top again)."""
    stack = [(top, 0)]
    while stack:
        folder, depth = stack.pop()
        dirs: list[str] = []
        files: list[str] = []
        links: set[str] = set()
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if is_dir:
                        dirs.append(entry.name)
                        if entry.is_symlink():
                            links.add(entry.name)
                    else:
                        files.append(entry.name)
        except OSError:
            continue
        yield folder, dirs, files
        # Pushed in reverse, so they are walked in the order the caller left them (after its pruning).
        if max_depth is None or depth < max_depth:
            stack.extend((os.path.join(folder, d), depth + 1) for d in reversed(dirs) if d not in links)
