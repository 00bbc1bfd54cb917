"""Trees of any depth, links never followed, bounded walks, globs with `**`, and a clean that stays inside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillmake.core import fstree
from skillmake.run.workspace import CAPTURE_MAX_FILES, capture, materialize, snapshot
from skillmake.spec.model import Case


def _deep(root: Path, levels: int) -> Path:
    """A chain of `levels` folders named d, made through fds (its path is longer than PATH_MAX)."""
    fd = os.open(root, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        new = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = new
    with open(os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
        f.write("leaf")
    os.close(fd)
    return root


def test_remove_tree_handles_any_depth_read_only_folders_and_never_follows_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    tree = tmp_path / "tree"
    tree.mkdir()
    _deep(tree, 1300)
    (tree / "link").symlink_to(outside)
    (tree / "ro").mkdir()
    (tree / "ro" / "f").write_text("x")
    os.chmod(tree / "ro", 0o500)
    fstree.remove_tree(tree)
    assert not tree.exists()
    assert (outside / "keep.txt").read_text() == "keep"
    fstree.remove_tree(tree)  # a missing path is fine
    (tmp_path / "file").write_text("x")
    fstree.remove_tree(tmp_path / "file")
    assert not (tmp_path / "file").exists()


def test_remove_tree_when_the_tree_holds_names_it_uses_itself(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    (tree / ".skillmake-rm-1" / "a" / "b").mkdir(parents=True)
    (tree / "x" / ".skillmake-rm-2" / "c").mkdir(parents=True)
    fstree.remove_tree(tree)
    assert not tree.exists()


def test_walk_is_bounded_in_depth_and_reports_what_it_skipped(tmp_path: Path) -> None:
    _deep(tmp_path, 200)
    (tmp_path / "top.txt").write_text("t")
    limits = fstree.Limits(max_files=100, max_bytes=1 << 20)
    rels = [e.rel for e in fstree.walk(tmp_path, limits)]
    assert rels == ["top.txt"]
    assert limits.skipped and "deeper than 64 folders" in limits.skipped[0]


def test_walk_lists_links_as_links_and_stops_at_the_limits(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("12345")
    (tmp_path / "b.txt").write_text("1")
    (tmp_path / "ln").symlink_to("/etc")
    entries = list(fstree.walk(tmp_path))
    assert [(e.rel, e.link) for e in entries] == [("b.txt", None), ("ln", "/etc"), ("a/x.txt", None)]
    assert [e.size for e in entries] == [1, 0, 5]
    limits = fstree.Limits(max_files=1, max_bytes=1 << 20)
    assert [e.rel for e in fstree.walk(tmp_path, limits)] == ["b.txt"]
    assert limits.exceeded() == "2 files (the limit is 1)"
    small = fstree.Limits(max_files=10, max_bytes=3)
    list(fstree.walk(tmp_path, small))
    assert small.exceeded() is not None and "MiB" in small.exceeded()


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("*.md", "a.md", True), ("*.md", "d/a.md", False), ("*.md", ".hidden.md", False),
    ("**/*.md", "a.md", True), ("**/*.md", "x/y/a.md", True), ("**/*.md", "x/.git/a.md", False),
    ("out/**", "out/a/b.txt", True), ("out/**", "other/a", False), ("out/*.md", "out/a.md", True),
    ("f?.txt", "f1.txt", True), ("f?.txt", "f12.txt", False), ("[ab].txt", "a.txt", True),
    ("[!ab].txt", "a.txt", False), ("[!ab].txt", "c.txt", True), ("a.md", "a.md", True), ("a.md", "xa.md", False),
])
def test_glob_regex(pattern: str, path: str, matches: bool) -> None:
    assert bool(fstree.glob_regex(pattern).match(path)) is matches


def test_inside(tmp_path: Path) -> None:
    (tmp_path / "root" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "out").symlink_to(tmp_path)
    root = tmp_path / "root"
    assert fstree.inside(root / "sub", root) and fstree.inside(root, root)
    assert not fstree.inside(root / "out", root)  # resolved through the link
    assert not fstree.inside(tmp_path / "rootx", root)


def test_capture_never_reads_links_and_fails_over_the_limits(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("SECRET")
    ws = tmp_path / "ws"
    (ws / "out").mkdir(parents=True)
    (ws / "out" / "a.md").write_text("A")
    (ws / "out" / "s.md").symlink_to(secret)
    (ws / "linked").symlink_to(tmp_path)
    got = capture(ws, Case(id="c", index=0, output_files=("**/*.md",)))
    assert got.files == {"out/a.md": b"A"} and got.error is None
    assert got.skipped == (f"out/s.md is a link (to {secret}); links are never captured",)
    for i in range(CAPTURE_MAX_FILES + 1):
        (ws / "out" / f"{i}.md").write_text("x")
    over = capture(ws, Case(id="c", index=0, output_files=("out/*.md",)))
    assert over.files == {} and over.error and "capture limits" in over.error


def test_snapshot_and_materialize_round_trip_links_and_modes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "bin").mkdir(parents=True)
    (ws / "bin" / "run").write_text("#!/bin/sh\n")
    os.chmod(ws / "bin" / "run", 0o755)
    (ws / "notes.txt").write_text("n")
    (ws / "ln").symlink_to("/etc/passwd")
    objects: dict[str, bytes] = {}

    def put(data: bytes) -> str:
        key = f"sha256:{len(objects)}"
        objects[key] = data
        return key

    tree, note = snapshot(ws, put)
    assert note is None and set(tree) == {"bin/run", "notes.txt", "ln"}
    assert tree["ln"] == {"link": "/etc/passwd"} and tree["bin/run"]["exec"] is True
    out = tmp_path / "out"
    assert materialize({**tree, "../escape": tree["notes.txt"]}, out, objects.get) == 2
    assert (out / "notes.txt").read_text() == "n" and os.access(out / "bin" / "run", os.X_OK)
    assert os.readlink(out / "ln") == "/etc/passwd"
    assert not (tmp_path / "escape").exists()  # a manifest never writes outside its root
    empty = tmp_path / "empty"
    materialize({}, empty, objects.get)
    assert empty.is_dir()


def test_snapshot_over_the_keep_limits_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillmake.run import workspace

    monkeypatch.setattr(workspace, "KEEP_MAX_FILES", 2)
    for i in range(3):
        (tmp_path / f"{i}.txt").write_text("x")
    tree, note = snapshot(tmp_path, lambda data: "sha256:x")
    assert tree is None and note and "more than 3 files" in note
