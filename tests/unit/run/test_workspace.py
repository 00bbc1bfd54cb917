"""Workspace isolation helpers: a clean environment, output capture, and which text checks see."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillmake.run.workspace import capture, clean_env, output_text
from skillmake.spec.model import Case


def test_clean_env_keeps_only_the_allow_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("MY_TOKEN", "t")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    env = clean_env(tmp_path / "home", extra_path=("bin",), spec_folder="/spec")
    assert "ANTHROPIC_API_KEY" not in env and "MY_TOKEN" not in env
    assert env["LC_ALL"] == "C.UTF-8"
    assert env["HOME"] == str(tmp_path / "home")
    assert (env["XDG_CONFIG_HOME"], env["XDG_CACHE_HOME"], env["XDG_DATA_HOME"]) == (
        str(tmp_path / "home" / ".config"), str(tmp_path / "home" / ".cache"), str(tmp_path / "home" / ".local/share"))
    assert env["PATH"].startswith("/spec/bin:")


def test_clean_env_sees_every_change_to_the_environment_between_trials(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "C.UTF-8")
    first = clean_env(tmp_path / "home")
    first["LANG"] = "mutated by a caller"  # each trial gets a dict of its own
    assert clean_env(tmp_path / "home")["LANG"] == "C.UTF-8"
    monkeypatch.setenv("LANG", "de_DE.UTF-8")  # changed, worked out again
    monkeypatch.setenv("LC_TIME", "C")
    env = clean_env(tmp_path / "home")
    assert env["LANG"] == "de_DE.UTF-8" and env["LC_TIME"] == "C"
    monkeypatch.delenv("LC_TIME")
    assert "LC_TIME" not in clean_env(tmp_path / "home")


def test_capture_and_output_text(tmp_path: Path) -> None:
    (tmp_path / "out/deep").mkdir(parents=True)
    (tmp_path / "out/a.md").write_text("A")
    (tmp_path / "out/deep/b.md").write_text("B")
    (tmp_path / "notes.txt").write_text("N")
    globbed = Case(id="c", index=0, output_files=("out/**/*.md",))
    files = capture(tmp_path, globbed).files
    assert files == {"out/a.md": b"A", "out/deep/b.md": b"B"}
    assert output_text(globbed, "stdout", files) == "A\nB"
    single = Case(id="c", index=0, output_file="notes.txt", output_files=("out/*.md",))
    assert output_text(single, "stdout", capture(tmp_path, single).files) == "N"  # output_file wins (clauditor)
    assert output_text(Case(id="c", index=0), "stdout", {}) == "stdout"
    missing = Case(id="c", index=0, output_file="nope.txt")
    assert output_text(missing, "stdout", capture(tmp_path, missing).files) == ""


def test_a_process_runs_its_next_trial_in_the_folder_it_emptied_where_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillmake.run import hermetic
    from skillmake.run.workspace import prepare, release, scratch_dir
    from skillmake.spec.model import Case

    monkeypatch.setattr(hermetic, "_RACY", -1.0)  # remember a folder however recently it changed
    monkeypatch.setattr(hermetic, "_MARKERS_SEEN", {})
    root = tmp_path / "work"
    root.mkdir()
    case = Case(id="c", index=0, prompt="p")
    first = scratch_dir(root, "sha256:" + "a" * 64, "run1")
    prepare(first, case)
    (first.workspace / "left.txt").write_text("by the trial\n")
    assert hermetic.problem(first.workspace) is None
    release(first)
    second = scratch_dir(root, "sha256:" + "b" * 64, "run1")
    assert second.root == first.root and second.spare  # not renamed: the folders above are as they were
    prepare(second, case)
    assert sorted(os.listdir(second.root)) == ["home", "workspace"] and os.listdir(second.workspace) == []
    listed: list[str] = []
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda p=".": (listed.append(os.fspath(p)), real(p))[1])
    assert hermetic.problem(second.workspace) is None
    assert listed == []  # nothing above the workspace changed since the last trial looked
    release(second)


def test_the_run_leaves_no_empty_work_root_behind_and_keeps_one_that_holds_something(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillmake.core.pid import pid
    from skillmake.run import workspace
    from skillmake.run.supervisors import RUN_PID_ENV

    spares = workspace._Spares()
    monkeypatch.setattr(workspace, "_SPARES", spares)
    case = Case(id="c", index=0, prompt="p")
    roots = {}
    for name in ("empty", "busy"):
        root = roots[name] = tmp_path / "tmp" / name
        tdir = workspace.scratch_dir(root, "sha256:" + "a" * 64, "run1")
        workspace.prepare(tdir, case)
        workspace.release(tdir)  # a spare of this process
    (roots["busy"] / "left-by-a-killed-run").mkdir()
    monkeypatch.delenv(RUN_PID_ENV, raising=False)
    spares.clear(pid())  # not the run's main process (a unit test, a -P process worker): roots stay
    assert sorted(os.listdir(tmp_path / "tmp")) == ["busy", "empty"] and os.listdir(roots["empty"]) == []

    spares = workspace._Spares()
    monkeypatch.setattr(workspace, "_SPARES", spares)
    for name in ("empty", "busy"):
        tdir = workspace.scratch_dir(roots[name], "sha256:" + "b" * 64, "run2")
        workspace.prepare(tdir, case)
        workspace.release(tdir)
    monkeypatch.setenv(RUN_PID_ENV, str(pid()))
    spares.clear(pid())  # the run's main process: an empty work root goes, a non-empty one stays
    assert os.listdir(tmp_path / "tmp") == ["busy"] and os.listdir(roots["busy"]) == ["left-by-a-killed-run"]
