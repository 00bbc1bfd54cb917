"""Folders thousands of levels deep, made and removed without recursion (os.makedirs, os.walk and shutil.rmtree
recurse once per level, and pytest's clean-up of old temporary folders uses rmtree: one left behind would crash
later pytest runs on the machine)."""

from __future__ import annotations

import os
from pathlib import Path


def make_deep(top: Path, levels: int = 1300, *, leaf: tuple[str, str] | None = None) -> Path:
    """`top`/d/d/…/d, `levels` deep (`top` is made too), with the file `leaf` = (name, text) at the bottom."""
    top.mkdir(parents=True, exist_ok=True)
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(levels):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        if leaf is not None:
            with open(os.open(leaf[0], os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
                f.write(leaf[1])
    finally:
        os.close(fd)
    return top
