"""What skillmake writes stays in the project: a linked `.skillmake/runs/<spec>` or `reports/<spec>` is never written
or deleted through (the link is replaced by a real folder), and a `store` outside the root is refused unless allowed
deliberately (the real `skillmake` CLI and `doit clean`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skillmake.core.paths import cut_links

from .project import AGENT, Project, copy_of, template

SKILL = "---\nname: a\ndescription: answers\n---\nAnswer in UPPERCASE.\n"
SPEC = """\
skill: skills/a
agent: {kind: command, command: [python3, agent.py]}
trials: 2
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: ONE}]
  - id: two
    prompt: say two
    checks: [{type: contains, needle: TWO}]
"""


@pytest.fixture(autouse=True)
def _no_inherited_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("SKILLMAKE_ROOT", "SKILLMAKE_STORE", "SKILLMAKE_TRIALS", "SKILLMAKE_TIMEOUT", "SKILLMAKE_JOBS",
                "SKILLMAKE_COMMAND_LINE_SETTINGS", "SKILLMAKE_ALLOWED_ROOTS"):
        monkeypatch.delenv(var, raising=False)


def project(root: Path, config: str = "") -> Project:
    return Project.empty(root, {"agent.py": AGENT, "skills/a/SKILL.md": SKILL, "a.eval.yaml": SPEC,
                                "skillmake.toml": config})


def first_run(root: Path) -> Project:
    """The project after its first run (exit 0): built once per test process, each test runs a copy."""
    p = project(root)
    assert p.run().code == 0
    return p


def outside_folder(tmp_path: Path, name: str) -> Path:
    """A folder outside the project shaped like a view or report folder, with something of the user's in it."""
    out = tmp_path / name
    for rel in ("one/with_skill/trial-0/keep.txt", "one/with_skill/trial-9/keep.txt", "gone/keep.txt", "keep.txt",
                "report.json"):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("the user's\n")
    return out


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("linked", ["runs/a", "reports/a", "runs/a/one", "runs/a/one/with_skill",
                                    "reports/a/archive", "site", "site/a"])
def test_a_linked_view_or_report_folder_is_never_written_or_deleted_through(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, linked: str) -> None:
    p = copy_of(template(tmp_path_factory, "state-links", first_run), tmp_path / "proj")  # views and reports
    # exist: the next run would rewrite and prune them
    out = outside_folder(tmp_path, "outside")
    before = snapshot(out)
    state = p.root / ".skillmake"
    target = state / linked
    if target.exists():
        from skillmake.core import fstree

        fstree.remove_tree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(out, target_is_directory=True)
    p.replace("a.eval.yaml", "trials: 2", "trials: 1")  # trial-1 views go: a prune
    run = p.run()
    assert run.code == 0, run.err[-2000:]
    report = p.run("report")  # the viewer's site too
    assert report.code == 0, report.err[-2000:]
    assert snapshot(out) == before  # nothing written, nothing removed
    assert (state / "site/index.html").is_file() and not (state / "site").is_symlink()
    assert not any(q.is_symlink() for q in [state / "runs/a", state / "reports/a", state / "runs/a/one"])
    assert (state / "reports/a/report.json").is_file() and (state / "runs/a/one/with_skill/trial-0").is_dir()
    assert not (state / "runs/a/one/with_skill/trial-1").exists()


def test_doit_clean_removes_a_link_not_what_it_points_at(tmp_path: Path) -> None:
    p = project(tmp_path / "proj")
    p.write("dodo.py", "from skillmake.dodo import *  # noqa: F403\n")
    assert p.run().code == 0
    out = outside_folder(tmp_path, "outside")
    before = snapshot(out)
    from skillmake.core import fstree

    fstree.remove_tree(p.root / ".skillmake/reports/a")
    (p.root / ".skillmake/reports/a").symlink_to(out, target_is_directory=True)
    done = p.run(cmd=[sys.executable, "-m", "doit", "clean", "report"], check_views=False)
    assert done.code == 0, done.err[-2000:]
    assert "Traceback" not in done.err
    assert snapshot(out) == before
    assert not (p.root / ".skillmake/reports/a").exists()


def test_cut_links_removes_the_link_on_the_way_and_only_it(tmp_path: Path) -> None:
    base = tmp_path / "runs"
    (base / "real").mkdir(parents=True)
    out = tmp_path / "out"
    (out / "x").mkdir(parents=True)
    (base / "spec").symlink_to(out)
    assert cut_links(base, base / "spec/x/trial-0") == [str(base / "spec")]
    assert not (base / "spec").exists() and (out / "x").is_dir()
    assert cut_links(base, base / "real/deeper") == []
    (base / "real/child").symlink_to(out)
    (base / "real/file").write_text("kept")
    assert cut_links(base, base / "real", children=True) == [str(base / "real/child")]
    assert (base / "real/file").read_text() == "kept"
    with pytest.raises(ValueError, match="is not under"):
        cut_links(base, tmp_path / "elsewhere")


@pytest.mark.parametrize("store", ["../elsewhere", "{tmp}/elsewhere", "~/elsewhere", "linked"])
def test_a_store_outside_the_root_is_refused_unless_allowed_deliberately(tmp_path: Path, store: str) -> None:
    (tmp_path / "elsewhere").mkdir()
    p = project(tmp_path / "proj", f'store = "{store.format(tmp=tmp_path)}"\n')
    (p.root / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    home = {"HOME": str(tmp_path)}
    for args in (("validate",), ()):
        run = p.run(*args, env=home, check_views=False)
        assert run.code == 2, run.err
        assert run.err.startswith(("skillmake.toml:1:9 /store: store ", "skillmake: skillmake.toml:1:9 /store: store "))
        assert "is outside the project root (it resolves to ../elsewhere)" in run.err
        assert "allow_store_outside_root = true" in run.err
    assert list((tmp_path / "elsewhere").iterdir()) == [] and run.agent_calls == 0
    allowed = p.run(env={**home, "SKILLMAKE_ALLOWED_ROOTS": str(tmp_path / "elsewhere")}, check_views=False)
    assert allowed.code == 0, allowed.err
    p.write("skillmake.toml", f'store = "{store.format(tmp=tmp_path)}"\nallow_store_outside_root = true\n')
    again = p.run(env=home, check_views=False)
    assert (again.code, again.agent_calls) == (0, 0)  # the same store: nothing stale
    assert (tmp_path / "elsewhere/reports/a/report.json").is_file()
    assert not (p.root / ".skillmake").exists()


def test_a_line_separator_in_the_configuration_does_not_shift_its_error_lines(tmp_path: Path) -> None:
    p = project(tmp_path / "proj", 'exclude = ["a\u2028b"]\n\ntrials = 0\n')
    run = p.run("validate", check_views=False)
    assert run.code == 2
    assert run.err.startswith("skillmake.toml:3:10 /trials: 0 is out of range: must be >= 1\n"), run.err
