"""Atomic file writes: temp file in the same folder, fsync, rename — with the permissions the umask gives."""

from __future__ import annotations

import errno
import fcntl
import itertools
import os
from pathlib import Path

from skillmake.core.pid import pid

TEMP_SUFFIX = ".tmp"  # every temp file is `.<target name>.<pid>-<n><TEMP_SUFFIX>` beside its target


def write_bytes(path: str | Path, data: bytes, *, mode: int | None = None, durable: bool = True,
                stat: bool = False) -> os.stat_result | None:
    """Write `data` to `path` so a reader sees the old file or the whole new one.

    `stat`: return the file's stat as written (its inode, size and mtime are the renamed file's; taken before the
    rename, so it is this write's file whatever replaces it after), else None.

    `durable=False` skips the fsync: still atomic, but after a power loss the file may be empty —
    right for derived files kept for people (kept runs), never for the store.

    The temp file is created with O_EXCL under a name this process makes unique (its pid and a counter; a name
    taken by a file a killed run left is skipped): tempfile.mkstemp's random names, and the fchmod its 0600 file
    needed, were a tenth of a first run's CPU. Created with `mode` (0666 unless given: 0444 for store objects),
    which the kernel narrows by the umask as for an ordinary `open()` (0644 under the usual umask 022), so a shared
    store and published reports stay readable.

    The writer holds a flock on its temp file until it is renamed: a sweep of temp files left by killed
    runs (Store.sweep_temp) skips one that a live writer holds, in this run or another sharing the store.
    """
    target = os.fspath(path)
    fd, tmp = _create(target, 0o666 if mode is None else mode)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if durable:
            os.fsync(fd)
        written = os.fstat(fd) if stat else None
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    finally:
        os.close(fd)
    return written


_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_counter = itertools.count()  # next() on it is atomic under the GIL: unique names across this process's threads


def _create(target: str, mode: int) -> tuple[int, str]:
    """A new temp file beside `target` (`.<name>.<pid>-<n>.tmp`), open for writing: (fd, its path). Its folder is
    made only when missing (a mkdir per write is costly)."""
    folder, name = os.path.split(target)
    made = False
    for _ in range(10_000):
        tmp = os.path.join(folder, f".{name}.{pid()}-{next(_counter)}{TEMP_SUFFIX}")
        try:
            return os.open(tmp, _FLAGS, mode), tmp
        except FileExistsError:  # left by a killed process that had this pid
            continue
        except FileNotFoundError:
            if made:
                raise
            os.makedirs(folder or ".", exist_ok=True)
            made = True
    raise FileExistsError(errno.EEXIST, f"no free temporary file name beside {target}")


def read_bytes(path: str) -> bytes:
    """The whole file at `path` (OSError when it cannot be read), in four system calls: open, fstat, read, close.
    A Python `open().read()` made nine (an ioctl, two lseeks, a second fstat and a last empty read), and a
    trial reads several records and objects."""
    return read_stat(path)[0]


def read_stat(path: str) -> tuple[bytes, os.stat_result]:
    """read_bytes, and the file's stat as it was opened (what a reader can tell a replaced file by)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        size = st.st_size
        data = os.read(fd, size + 1)  # one more than its size: a file that grew meanwhile is read to its end
        if len(data) == size or not data:
            return data, st
        chunks = [data]
        while chunk := os.read(fd, max(size, 1 << 16)):
            chunks.append(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def write_text(path: str | Path, text: str, *, durable: bool = True) -> None:
    write_bytes(path, text.encode("utf-8"), durable=durable)
