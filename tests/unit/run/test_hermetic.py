"""hermetic.py: where trials run (outside every project tree, nothing of an agent's setup above them), and
staging.py: a trial gets the content its key names or does not run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillmake.core.canonical import canonical_json, digest_bytes
from skillmake.run import hermetic
from skillmake.run.staging import Changed, check_programs, copy_verified, stage_skill
from skillmake.spec.model import Skill


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hermetic, "_chosen", {})
    monkeypatch.setattr(hermetic, "_REFUSED", {})
    monkeypatch.delenv(hermetic.BASE_VAR, raising=False)


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".skillmake").mkdir(parents=True)
    (root / "CLAUDE.md").write_text("project instructions\n")
    return root


def test_trials_run_in_a_private_folder_outside_the_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path)
    base = tmp_path / "tmp"
    base.mkdir()
    monkeypatch.setattr(hermetic, "_candidates", lambda: [str(base)])
    work = hermetic.work_root(root / ".skillmake", root)
    assert work.parent == base / f"skillmake-{os.getuid()}"
    assert (work.parent.stat().st_mode & 0o777) == 0o700
    assert hermetic.problem(work / "k-run" / "workspace") is None
    other = tmp_path / "other"
    (other / ".skillmake").mkdir(parents=True)
    assert hermetic.work_root(other / ".skillmake", other) != work  # one folder per project


def test_a_candidate_with_an_agent_setup_above_it_is_passed_over(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path)
    dirty = tmp_path / "home"
    (dirty / "tmp").mkdir(parents=True)
    (dirty / ".claude").mkdir()  # e.g. TMPDIR=~/tmp with the user's ~/.claude above it
    (dirty / ".claude" / "settings.json").write_text("{}")
    clean = tmp_path / "clean"
    clean.mkdir()
    monkeypatch.setattr(hermetic, "_candidates", lambda: [str(dirty / "tmp"), str(root / "tmp"), str(clean)])
    (root / "tmp").mkdir()
    assert hermetic.work_root(root / ".skillmake", root).parent.parent == clean


def test_with_no_clean_candidate_every_trial_is_refused_with_the_fix(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path)
    monkeypatch.setenv(hermetic.BASE_VAR, str(root / "inside"))
    (root / "inside").mkdir()
    work = hermetic.work_root(root / ".skillmake", root)
    assert work == Path(os.path.realpath(root)) / ".skillmake" / "work"
    error = hermetic.problem(work / "k-run" / "workspace")
    assert error is not None
    assert "CLAUDE.md" in error.message and hermetic.BASE_VAR in (error.hint or "")
    assert f"{root / 'inside'}: inside the project" in error.message  # why the folder named would not do


def test_a_tmpdir_that_does_not_exist_is_named_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mistyped SKILLMAKE_TMPDIR: every trial is refused (nothing runs inside the project), and the error says
    the folder named is missing, not only what the agent would see in the fallback."""
    root = _project(tmp_path)
    missing = tmp_path / "no-such-tmp"
    monkeypatch.setenv(hermetic.BASE_VAR, str(missing))
    work = hermetic.work_root(root / ".skillmake", root)
    error = hermetic.problem(work / "k-run" / "workspace")
    assert error is not None
    assert f"{missing}: not a folder" in error.message
    assert error.hint == f"make {missing}, or point {hermetic.BASE_VAR} at a folder that exists"
    missing.mkdir()  # made: the next trial uses it, in this process too (a watching one)
    assert hermetic.work_root(root / ".skillmake", root).parent.parent == missing
    assert hermetic._REFUSED == {}


def test_a_skillmake_folder_that_is_a_link_or_not_private_is_not_used(tmp_path: Path) -> None:
    base = tmp_path / "tmp"
    base.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (base / f"skillmake-{os.getuid()}").symlink_to(target)
    assert hermetic._private(str(base)) is None
    base2 = tmp_path / "tmp2"
    (base2 / f"skillmake-{os.getuid()}").mkdir(parents=True, mode=0o777)
    os.chmod(base2 / f"skillmake-{os.getuid()}", 0o777)
    folder = hermetic._private(str(base2))
    assert folder is not None and (folder.stat().st_mode & 0o777) == 0o700


def test_visible_markers_looks_at_every_folder_above(tmp_path: Path) -> None:
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "AGENTS.md").write_text("x")
    (tmp_path / "a" / "b" / ".git").mkdir()
    (tmp_path / "a" / "b" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    seen = hermetic.visible_markers(tmp_path / "a" / "b" / "c")
    assert seen[:2] == [str(tmp_path / "a" / "b" / ".git"), str(tmp_path / "a" / "AGENTS.md")]


def test_an_empty_marker_folder_is_not_visible(tmp_path: Path) -> None:
    """The codex CLI makes an empty <tmp>/.codex while it runs (a mount target of its sandbox): other trials
    started meanwhile must still run there. A marker folder with anything in it still counts."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / ".codex").mkdir()
    (tmp_path / "a" / ".claude").mkdir()
    assert hermetic.visible_markers(tmp_path / "a" / "b") == []
    (tmp_path / "a" / ".claude" / "settings.json").write_text("{}")
    assert hermetic.visible_markers(tmp_path / "a" / "b") == [str(tmp_path / "a" / ".claude")]


# -- staging ---------------------------------------------------------------------------------------------------------

def _digest(data: bytes) -> str:
    return digest_bytes(data)


def test_a_file_with_other_content_than_its_key_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "SKILL.md"
    src.write_bytes(b"ITER=BBB\n")
    with pytest.raises(Changed, match="changed since the run was planned"):
        copy_verified(str(src), tmp_path / "out" / "SKILL.md", _digest(b"ITER=AAA\n"), what="skill 's': SKILL.md")
    copy_verified(str(src), tmp_path / "out" / "SKILL.md", _digest(b"ITER=BBB\n"), what="x")
    assert (tmp_path / "out" / "SKILL.md").read_bytes() == b"ITER=BBB\n"


def test_a_fifo_or_a_missing_file_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(Changed, match="no longer a regular file"):
        copy_verified(str(tmp_path / "pipe"), tmp_path / "out", _digest(b""), what="x")
    with pytest.raises(Changed, match="cannot be read since"):
        copy_verified(str(tmp_path / "nope"), tmp_path / "out", _digest(b""), what="x")


def test_the_staged_skill_holds_exactly_the_files_of_its_manifest(tmp_path: Path) -> None:
    top = tmp_path / "skill"
    (top / "scripts").mkdir(parents=True)
    (top / "SKILL.md").write_text("body\n")
    (top / "scripts" / "run.sh").write_text("echo\n")
    os.chmod(top / "scripts" / "run.sh", 0o755)
    (top / "extra.md").write_text("not in the manifest\n")
    manifest = {"kind": "folder", "files": {"SKILL.md": _digest(b"body\n"), "scripts/run.sh": _digest(b"echo\n")}}
    staged = stage_skill(Skill(name="s", path=str(top), kind="folder"), canonical_json(manifest), tmp_path / "st")
    files = sorted(str(p.relative_to(staged.path)) for p in Path(staged.path).rglob("*") if p.is_file())
    assert files == ["SKILL.md", "scripts/run.sh"]
    assert os.access(Path(staged.path) / "scripts" / "run.sh", os.X_OK)


def test_an_agent_program_other_than_its_key_is_refused(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("print(1)\n")
    fragment = canonical_json({"kind": "command", "program_files": {"agent.py": _digest(b"print(1)\n")}})
    check_programs(fragment, str(tmp_path), when="before")
    (tmp_path / "agent.py").write_text("print(2)\n")
    with pytest.raises(Changed, match=r"agent\.py changed while"):
        check_programs(fragment, str(tmp_path), when="while")


def test_an_api_agent_is_sent_the_system_prompt_its_key_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillmake.run import trial
    from skillmake.run.project import Project
    from tests.fakeapi import FakeAPI, Reply

    root = tmp_path / "proj"
    (root / "skills" / "s").mkdir(parents=True)
    (root / "skills" / "s" / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nthe body\n")
    (root / "AGENTS.md").write_text("AGENTS-V1: the instructions the key was computed from\n")
    (root / "s.eval.yaml").write_text("skill: skills/s\nagent: {kind: anthropic, model: claude-sonnet-4-6}\n"
                                      "cases:\n  - id: a\n    prompt: hello\n"
                                      "    checks: [{type: min_length, length: 1}]\n")
    with FakeAPI() as api:
        for name, value in api.env().items():
            monkeypatch.setenv(name, value)
        api.script = lambda request: Reply.text("hi")
        project = Project.open(str(root))
        spec = project.specs[0]
        case, arm = spec.cases[0], spec.arms[0]
        tkey = project.keys.trial_key(spec, case, arm, 0)  # planned with V1
        (root / "AGENTS.md").write_text("AGENTS-V2: saved while the run goes on\n")
        record = trial.execute(project, spec, case, arm, 0, tkey).record
        assert record["outcome"] == "completed", record["error"]
        assert len(api.requests) == 1
        assert api.requests[0].contains("AGENTS-V1") and not api.requests[0].contains("AGENTS-V2")


def _aged(folder: Path) -> None:
    """`folder` as if last changed a minute ago: old enough for problem() to remember what it holds."""
    old = folder.stat().st_mtime - 60
    os.utime(folder, (old, old))


def test_a_marker_made_above_after_a_first_look_is_seen_by_the_next_trial(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hermetic, "_MARKERS_SEEN", {})
    workspace = tmp_path / "a" / "b" / "trial" / "workspace"
    workspace.mkdir(parents=True)
    for folder in (tmp_path / "a", tmp_path / "a" / "b"):
        _aged(folder)
    assert hermetic.problem(workspace) is None
    assert str(tmp_path / "a") in hermetic._MARKERS_SEEN  # remembered: the next look is one stat
    (tmp_path / "a" / "AGENTS.md").write_text("be someone else\n")  # the folder's mtime moves
    error = hermetic.problem(workspace)
    assert error is not None and str(tmp_path / "a" / "AGENTS.md") in error.render()


def test_an_empty_marker_folder_that_fills_later_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hermetic, "_MARKERS_SEEN", {})
    workspace = tmp_path / "a" / "trial" / "workspace"
    workspace.mkdir(parents=True)
    (tmp_path / "a" / ".claude").mkdir()
    _aged(tmp_path / "a")
    assert hermetic.problem(workspace) is None  # an empty marker folder tells an agent nothing
    assert str(tmp_path / "a") in hermetic._MARKERS_SEEN
    (tmp_path / "a" / ".claude" / "settings.json").write_text("{}")  # a's own mtime does not move
    error = hermetic.problem(workspace)
    assert error is not None and ".claude" in error.render()


def test_a_folder_changed_just_now_is_looked_into_again_every_time(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hermetic, "_MARKERS_SEEN", {})
    workspace = tmp_path / "fresh" / "trial" / "workspace"
    workspace.mkdir(parents=True)
    assert hermetic.problem(workspace) is None
    assert str(tmp_path / "fresh") not in hermetic._MARKERS_SEEN  # a change in the same tick would not show


def _stage_twice_setup(tmp_path: Path) -> tuple[Skill, bytes, Path]:
    top = tmp_path / "skill"
    (top / "scripts").mkdir(parents=True)
    (top / "SKILL.md").write_text("body\n")
    (top / "scripts" / "run.sh").write_text("echo\n")
    manifest = {"kind": "folder", "files": {"SKILL.md": _digest(b"body\n"), "scripts/run.sh": _digest(b"echo\n")}}
    return Skill(name="s", path=str(top), kind="folder"), canonical_json(manifest), tmp_path / "trial" / "skill"


def test_a_spare_folders_untouched_staged_skill_is_kept_not_written_again(tmp_path: Path) -> None:
    from skillmake.run.workspace import _strip

    skill, manifest, dest = _stage_twice_setup(tmp_path)
    staged = Path(stage_skill(skill, manifest, dest).path)
    inodes = {p.name: p.stat().st_ino for p in staged.rglob("*") if p.is_file()}
    _strip(str(dest), 0o755)  # the trial is over: its folder is emptied for the next one
    assert {p.name: p.stat().st_ino for p in staged.rglob("*") if p.is_file()} == inodes  # kept: as staged
    again = Path(stage_skill(skill, manifest, dest).path)
    assert {p.name: p.stat().st_ino for p in again.rglob("*") if p.is_file()} == inodes  # no file made again
    assert (again / "SKILL.md").read_text() == "body\n"


def test_a_staged_skill_file_an_agent_changed_is_never_kept(tmp_path: Path) -> None:
    from skillmake.run.workspace import _strip

    skill, manifest, dest = _stage_twice_setup(tmp_path)
    staged = Path(stage_skill(skill, manifest, dest).path)
    st = (staged / "SKILL.md").stat()
    (staged / "SKILL.md").write_text("evil\n")  # same size, times set back: only its ctime tells
    os.utime(staged / "SKILL.md", ns=(st.st_atime_ns, st.st_mtime_ns))
    _strip(str(dest), 0o755)
    assert not (staged / "SKILL.md").exists() and (staged / "scripts" / "run.sh").exists()
    assert (Path(stage_skill(skill, manifest, dest).path) / "SKILL.md").read_text() == "body\n"


def test_a_kept_skill_is_verified_against_its_source_and_another_skills_files_go(tmp_path: Path) -> None:
    from skillmake.run.workspace import _strip

    skill, manifest, dest = _stage_twice_setup(tmp_path)
    stage_skill(skill, manifest, dest)
    _strip(str(dest), 0o755)
    (Path(skill.path) / "SKILL.md").write_text("edited after planning\n")  # the key still names "body"
    with pytest.raises(Changed, match="changed since the run was planned"):
        stage_skill(skill, manifest, dest)
    _strip(str(dest), 0o755)
    (Path(skill.path) / "SKILL.md").write_text("body\n")
    other = {"kind": "folder", "files": {"SKILL.md": _digest(b"body\n")}}  # no scripts/ in this one
    staged = stage_skill(skill, canonical_json(other), dest)
    files = sorted(str(p.relative_to(staged.path)) for p in Path(staged.path).rglob("*") if p.is_file())
    assert files == ["SKILL.md"]


def test_a_spare_that_kept_a_file_where_the_next_skill_has_a_folder_stages_it(tmp_path: Path) -> None:
    from skillmake.run.workspace import _strip

    first = tmp_path / "first"
    first.mkdir()
    (first / "scripts").write_text("a file here\n")
    a = {"kind": "folder", "files": {"scripts": _digest(b"a file here\n")}}
    dest = tmp_path / "trial" / "skill"
    stage_skill(Skill(name="s", path=str(first), kind="folder"), canonical_json(a), dest)
    _strip(str(dest), 0o755)  # kept: untouched
    second = tmp_path / "second"
    (second / "scripts").mkdir(parents=True)
    (second / "scripts" / "run.sh").write_text("echo\n")
    b = {"kind": "folder", "files": {"scripts/run.sh": _digest(b"echo\n")}}
    staged = stage_skill(Skill(name="s", path=str(second), kind="folder"), canonical_json(b), dest)
    assert (Path(staged.path) / "scripts" / "run.sh").read_text() == "echo\n"


def test_a_spare_with_a_folder_where_the_next_skill_has_a_file_and_a_link_stages_files(tmp_path: Path) -> None:
    from skillmake.run.workspace import _strip

    skill, manifest, dest = _stage_twice_setup(tmp_path)
    staged = Path(stage_skill(skill, manifest, dest).path)
    _strip(str(dest), 0o755)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the skill's\n")
    (staged / "SKILL.md").unlink()
    (staged / "SKILL.md").mkdir()  # a folder where a file goes, with something in it
    (staged / "SKILL.md" / "x").write_text("x\n")
    (staged / "scripts" / "run.sh").unlink()
    (staged / "scripts" / "run.sh").symlink_to(outside)  # a link where a file goes: never written through
    (staged / "old" / "deep").mkdir(parents=True)  # folders no file of the skill needs
    again = Path(stage_skill(skill, manifest, dest).path)
    assert (again / "SKILL.md").read_text() == "body\n" and not (again / "scripts" / "run.sh").is_symlink()
    assert outside.read_text() == "not the skill's\n" and not (again / "old").exists()


def test_staging_into_a_spare_lists_each_of_its_folders_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillmake.run.workspace import _strip

    skill, manifest, dest = _stage_twice_setup(tmp_path)
    stage_skill(skill, manifest, dest)
    _strip(str(dest), 0o755)
    listed: list[str] = []
    real_scandir, real_listdir = os.scandir, os.listdir
    monkeypatch.setattr(os, "scandir", lambda p=".": (listed.append(os.fspath(p)), real_scandir(p))[1])
    monkeypatch.setattr(os, "listdir", lambda p=".": (listed.append(os.fspath(p)), real_listdir(p))[1])
    stage_skill(skill, manifest, dest)
    assert sorted(listed) == sorted(str(p) for p in (dest, dest / "s", dest / "s" / "scripts"))


def test_real_folder_is_realpath_through_links_relative_and_missing(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "real" / "trial" / "workspace").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path)
    for folder in (tmp_path / "link" / "trial" / "workspace", "link/trial/../trial/workspace", tmp_path / "missing",
                   tmp_path / "real" / ".." / "link"):
        assert hermetic.real_folder(folder) == os.path.realpath(folder)


def test_a_marker_above_a_linked_work_root_is_seen_where_the_link_leads(tmp_path: Path) -> None:
    (tmp_path / "elsewhere" / "root" / "trial" / "workspace").mkdir(parents=True)
    (tmp_path / "elsewhere" / "CLAUDE.md").write_text("instructions\n")
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "root").symlink_to(tmp_path / "elsewhere" / "root")
    problem = hermetic.problem(tmp_path / "clean" / "root" / "trial" / "workspace")
    assert problem is not None and str(tmp_path / "elsewhere" / "CLAUDE.md") in problem.render()


def test_a_spare_holding_exactly_the_skill_is_staged_without_listing_and_another_is_pruned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillmake.run.workspace import _strip

    skill, manifest, dest = _stage_twice_setup(tmp_path)
    staged = Path(stage_skill(skill, manifest, dest).path)
    held = _strip(str(dest), 0o755)
    assert (held.files, held.folders) == ({"s/SKILL.md", "s/scripts/run.sh"}, {"s", "s/scripts"})
    listed: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p=".": (listed.append(os.fspath(p)), real_scandir(p))[1])
    inode = (staged / "SKILL.md").stat().st_ino
    assert Path(stage_skill(skill, manifest, dest, held=held).path) == staged
    assert listed == [] and (staged / "SKILL.md").stat().st_ino == inode  # kept, checked, not listed
    (staged / "SKILL.md").write_text("changed after the release\n")  # what `held` says no longer holds
    assert (Path(stage_skill(skill, manifest, dest, held=held).path) / "SKILL.md").read_text() == "body\n"
    other = canonical_json({"kind": "folder", "files": {"SKILL.md": _digest(b"body\n")}})
    staged = Path(stage_skill(skill, other, dest, held=held).path)  # held names more than this skill stages
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*")) == ["s", "s/SKILL.md"]


def test_a_spare_with_a_skill_deeper_than_the_recursion_limit_is_emptied(tmp_path: Path) -> None:
    import sys

    from skillmake.run.workspace import _strip

    deep = tmp_path / "skill"
    path = str(deep)
    os.mkdir(path)
    for _ in range(300):  # deeper than the limit set below; shallow enough for pytest's own (recursive) clean-up
        path += "/d"
        os.mkdir(path)
    Path(path, "x.txt").write_text("not staged\n")
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(150)
    try:
        held = _strip(str(deep), 0o755)
    finally:
        sys.setrecursionlimit(old)
    assert not Path(path, "x.txt").exists() and held.files == frozenset() and len(held.folders) == 300
