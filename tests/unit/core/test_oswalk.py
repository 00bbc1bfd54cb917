"""skillmake.core.oswalk: os.walk's answers without its recursion, and discovery that never crashes on a deep folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillmake.core import fstree, oswalk
from skillmake.spec.discovery import MAX_SEARCH_DEPTH, discover
from tests.deepfolder import make_deep

SPEC = "skill: s\ncases: []\n"


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[Path]:
    """tmp_path/deep/d/d/…, 1,300 levels, with a spec at the bottom; removed iteratively (pytest's clean-up of old
    temporary folders recurses, and a deep folder left behind would crash later pytest runs)."""
    top = make_deep(tmp_path / "deep", leaf=("bottom.eval.yaml", SPEC))
    yield top
    fstree.remove_tree(top)


def tree(base: Path) -> Path:
    root = base / "t"  # not tmp_path itself: the suite's fixtures put a home folder there
    for rel in ("a/b/c.txt", "a/x.txt", "z/y.txt", "top.txt", "a/b/d/e.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / "link").symlink_to(root / "a")  # a link to a folder: listed, never entered
    (root / "a/gone").symlink_to(root / "nowhere")
    return root


def normalised(walk: Iterator[tuple[str, list[str], list[str]]]) -> list[tuple[str, list[str], list[str]]]:
    return [(folder, sorted(dirs), sorted(files)) for folder, dirs, files in walk]


def test_walk_answers_as_os_walk_does(tmp_path: Path) -> None:
    tmp_path = tree(tmp_path)
    assert sorted(normalised(oswalk.walk(str(tmp_path)))) == sorted(normalised(os.walk(str(tmp_path))))


def test_pruning_in_place_is_honoured(tmp_path: Path) -> None:
    tmp_path = tree(tmp_path)
    seen = []
    for folder, dirs, _ in oswalk.walk(str(tmp_path)):
        seen.append(os.path.relpath(folder, tmp_path))
        dirs[:] = [d for d in dirs if d != "b"]
    assert sorted(seen) == [".", "a", "z"]


def test_max_depth_lists_but_does_not_enter(tmp_path: Path) -> None:
    tmp_path = tree(tmp_path)
    walked = {os.path.relpath(f, tmp_path): d for f, d, _ in oswalk.walk(str(tmp_path), max_depth=1)}
    assert sorted(walked) == [".", "a", "z"]
    assert sorted(walked["a"]) == ["b"]


def test_a_1300_deep_folder_is_walked_without_recursion(deep: Path) -> None:
    with pytest.raises(RecursionError):  # what this module replaces (Python 3.11's os.walk)
        for _ in os.walk(deep):
            pass
    depth = sum(1 for _ in oswalk.walk(str(deep)))
    assert depth == 1301


def test_discovery_never_crashes_on_a_deep_folder_and_stops_at_its_depth(tmp_path: Path, deep: Path) -> None:
    (tmp_path / "a.eval.yaml").write_text(SPEC)
    shallow = tmp_path.joinpath(*["s"] * MAX_SEARCH_DEPTH)
    shallow.mkdir(parents=True)
    (shallow / "far.eval.yaml").write_text(SPEC)
    found = [os.path.relpath(p, tmp_path) for p in discover(str(tmp_path))]
    assert found == ["a.eval.yaml", os.path.join(*["s"] * MAX_SEARCH_DEPTH, "far.eval.yaml")]
