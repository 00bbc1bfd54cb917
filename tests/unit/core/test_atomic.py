"""Atomic writes (core/atomic.py): the permissions the umask gives, unique temp names, nothing left behind."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from skillmake.core import atomic


@pytest.fixture
def mask() -> object:
    old = os.umask(0o027)
    try:
        yield 0o027
    finally:
        os.umask(old)


def test_a_written_file_gets_the_mode_the_umask_gives_and_no_mode_syscall(tmp_path: Path, mask: int,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fchmod", None)  # the kernel applies the umask at creation: no fchmod, no umask read
    atomic.write_bytes(tmp_path / "plain", b"x")
    atomic.write_bytes(tmp_path / "object", b"y", mode=0o444)
    assert (tmp_path / "plain").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "object").stat().st_mode & 0o777 == 0o440
    assert (tmp_path / "plain").read_bytes() == b"x"


def test_a_temp_name_a_killed_run_left_is_skipped_and_left_for_the_sweep(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic, "_counter", itertools.count(7))
    stale = tmp_path / f".f.json.{os.getpid()}-7{atomic.TEMP_SUFFIX}"
    stale.write_bytes(b"half")  # a process that had this pid was killed mid-write
    atomic.write_bytes(tmp_path / "f.json", b"whole")
    assert (tmp_path / "f.json").read_bytes() == b"whole"
    assert stale.read_bytes() == b"half"  # never opened, never renamed: the store's sweep decides about it
    assert sorted(p.name for p in tmp_path.iterdir() if "f.json" in p.name) == [stale.name, "f.json"]


def test_a_new_folder_is_made_and_a_failed_write_leaves_no_temp_file(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    atomic.write_bytes(tmp_path / "a" / "b" / "c.txt", b"deep", durable=False)
    assert (tmp_path / "a" / "b" / "c.txt").read_bytes() == b"deep"

    def broken(fd: int) -> None:
        raise OSError(5, "I/O error")

    monkeypatch.setattr(os, "fsync", broken)
    with pytest.raises(OSError, match="I/O error"):
        atomic.write_bytes(tmp_path / "a" / "b" / "d.txt", b"lost")
    assert sorted(os.listdir(tmp_path / "a" / "b")) == ["c.txt"]


def test_a_temp_file_is_named_by_this_process_and_a_counter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (seen.append(os.path.basename(src)), real(src, dst)))
    atomic.write_bytes(tmp_path / "a.json", b"1")
    atomic.write_bytes(tmp_path / "a.json", b"2")
    first, second = (name.removeprefix(f".a.json.{os.getpid()}-").removesuffix(atomic.TEMP_SUFFIX) for name in seen)
    assert int(second) > int(first)


def test_read_bytes_reads_a_whole_file_whatever_its_stat_says(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc" * 50_000)
    (tmp_path / "empty").write_bytes(b"")
    assert atomic.read_bytes(str(tmp_path / "f")) == b"abc" * 50_000
    assert atomic.read_bytes(str(tmp_path / "empty")) == b""
    if os.path.exists("/proc/self/status"):  # st_size 0, content not empty: read to its end
        with open("/proc/self/status", "rb") as f:
            assert atomic.read_bytes("/proc/self/status")[:40] == f.read()[:40]
    with pytest.raises(OSError):
        atomic.read_bytes(str(tmp_path / "missing"))
    with pytest.raises(OSError):
        atomic.read_bytes(str(tmp_path))  # a folder is not a file
