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


def _trial_folder(root: Path) -> Path:
    for name in ("workspace", "home", "skill/s/sub"):
        (root / name).mkdir(parents=True, exist_ok=True)
    return root


@pytest.mark.parametrize("extra", ["file-at-top", "unknown-folder", "no-home", "no-workspace", "link-at-top"])
def test_a_folder_holding_what_no_trial_makes_is_not_kept_as_a_spare(tmp_path: Path, extra: str) -> None:
    from skillmake.run import workspace

    root = _trial_folder(tmp_path / "t")
    if extra == "file-at-top":
        (root / "note.txt").write_text("x")
    elif extra == "unknown-folder":
        (root / "other").mkdir()
    elif extra == "no-home":
        (root / "home").rmdir()
    elif extra == "no-workspace":
        (root / "workspace").rmdir()
    else:
        (root / "home").rmdir()
        (root / "home").symlink_to(tmp_path)
    assert workspace._emptied(root, 0o755) == (False, None)


def test_emptying_a_spare_clears_workspace_and_home_keeps_skill_folders_and_gives_modes_back(tmp_path: Path) -> None:
    from skillmake.run import workspace

    root = _trial_folder(tmp_path / "t")
    (root / "workspace" / "deep" / "er").mkdir(parents=True)
    (root / "workspace" / "deep" / "out.txt").write_text("by the agent")
    (root / "home" / ".cache").mkdir()
    (root / "skill" / "s" / "SKILL.md").write_text("not staged by this process: removed")
    (root / "skill" / "s" / "sub" / "x.txt").write_text("nor this")
    (root / "home").chmod(0o700)
    (root / "skill" / "s" / "sub").chmod(0o500)
    root.chmod(0o711)
    emptied, held = workspace._emptied(root, 0o755)
    assert emptied and held is not None
    assert os.listdir(root / "workspace") == [] and os.listdir(root / "home") == []
    assert sorted(held.folders) == ["s", "s/sub"] and held.files == frozenset()
    assert os.listdir(root / "skill" / "s") == ["sub"] and os.listdir(root / "skill" / "s" / "sub") == []
    for folder in (root, root / "home", root / "skill" / "s" / "sub"):
        assert folder.stat().st_mode & 0o777 == 0o755, folder


def test_a_spare_without_skill_folder_holds_nothing(tmp_path: Path) -> None:
    from skillmake.run import workspace

    root = tmp_path / "t"
    (root / "workspace").mkdir(parents=True)
    (root / "home").mkdir()
    assert workspace._emptied(root, 0o755) == (True, None)


def test_a_runs_exit_removes_every_spare_before_it_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillmake.core.pid import pid
    from skillmake.run import workspace

    spares = workspace._Spares()
    monkeypatch.setattr(workspace, "_SPARES", spares)
    case = Case(id="c", index=0, prompt="p")
    dirs = [workspace.scratch_dir(tmp_path / "work", "sha256:" + c * 64, "run1") for c in "abcd"]
    for tdir in dirs:  # four trials at once, as -j 4 has
        workspace.prepare(tdir, case)
        (tdir.workspace / "f.txt").write_text("x")
    for tdir in dirs:
        workspace.release(tdir)
    assert sorted(os.listdir(tmp_path / "work")) == sorted(d.root.name for d in dirs)
    spares.clear(pid())
    assert os.listdir(tmp_path / "work") == []  # all four gone, side by side, before clear returned
    assert spares.take(str(tmp_path / "work")) is None
