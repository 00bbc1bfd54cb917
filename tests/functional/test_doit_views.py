"""doit's own views of skillmake's tasks: `info` says why, `list --deps` names the files, `clean` is quiet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .project import Project, copy_of, populated_with_dodo

PLUGIN = '[tool.doit.plugins.command]\nclean = "skillmake.engine.clean:Clean"\n'


def doit(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "doit", *args], cwd=project.root, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The project with the three-line dodo.py after its first plain `doit` run, copied from one built once."""
    return copy_of(populated_with_dodo(tmp_path_factory), tmp_path / "proj")


def test_info_says_why_a_trial_and_its_grade_are_stale(project: Project) -> None:
    fresh = doit(project, "info", "trial:alpha/two/with_skill/0")
    assert "status     : up-to-date" in fresh.stdout
    assert "reads alpha.eval.yaml, skills/alpha/SKILL.md, skills/alpha/reference.md, fixtures/shared.txt" \
        in fresh.stdout
    project.write("skills/alpha/reference.md", "changed notes\n")
    project.replace("alpha.eval.yaml", "prompt: say two", "prompt: say two now")
    info = doit(project, "info", "trial:alpha/two/with_skill/0")
    assert info.returncode == 1, info.stderr  # doit info's own exit status for a task that would run
    assert "status     : run" in info.stdout
    assert "- skill file reference.md changed; case field prompt changed (args=[], kwargs={})" in info.stdout
    assert "evaluate to false: False" not in info.stdout
    assert "- its trial will run" in doit(project, "info", "grade:alpha/two/with_skill/0").stdout
    assert "- case field prompt changed (args" in doit(project, "info", "trial:alpha/two/without_skill/1").stdout
    assert "some of its trials or grades will run" in doit(project, "info", "report:alpha").stdout
    # The reason is the one `skillmake explain` gives.
    explain = subprocess.run([sys.executable, "-m", "skillmake", "explain"], cwd=project.root, capture_output=True,
                             text=True, timeout=300)
    assert "trial:alpha/two/with_skill/0  skill file reference.md changed; case field prompt changed" \
        in explain.stdout


def test_list_deps_names_the_files_a_trial_reads_and_status_stays_true(project: Project) -> None:
    listed = doit(project, "list", "--deps", "trial:alpha/three/with_skill/1", "trial:beta/five/without_skill/0")
    assert listed.returncode == 0, listed.stderr
    root = project.root
    lines = listed.stdout.splitlines()
    three = lines[lines.index(next(ln for ln in lines if ln.startswith("trial:alpha/three"))) + 1:]
    deps = {ln.strip(" -") for ln in three[:4]}
    assert deps == {str(root / "alpha.eval.yaml"), str(root / "skills/alpha/SKILL.md"),
                    str(root / "skills/alpha/reference.md"), str(root / "fixtures/only3.txt")}
    # The baseline arm does not install the skill, so it does not read it.
    assert str(root / "skills/beta/SKILL.md") not in listed.stdout.split("trial:beta/five/without_skill/0")[1]
    # Listing with status: the action cache decides, not files doit never saw a run of.
    status = doit(project, "list", "--status", "--all", "trial")
    assert "R trial:" not in status.stdout and "U trial:alpha/one/with_skill/0" in status.stdout
    project.write("fixtures/only3.txt", "new\n")
    status = doit(project, "list", "--status", "--all", "trial")
    assert sorted(ln.split()[1] for ln in status.stdout.splitlines() if ln.startswith("R trial:")) == [
        f"trial:alpha/three/{arm}/{k}" for arm in ("with_skill", "without_skill") for k in (0, 1)]


def test_clean_is_one_line_and_leaves_no_empty_folders(project: Project) -> None:
    project.write("pyproject.toml", PLUGIN)
    runs = project.root / ".skillmake" / "runs"
    cleaned = doit(project, "clean", "trial:alpha/one/*")
    assert cleaned.returncode == 0, cleaned.stderr
    assert cleaned.stdout == "skillmake: cleaned 4 trial views\n"
    assert not (runs / "alpha" / "one").exists()  # its arm and case folders went with the last view
    assert (runs / "alpha" / "two" / "with_skill" / "trial-0").is_dir()
    everything = doit(project, "clean", "trial")
    assert everything.stdout == "skillmake: cleaned 20 trial views\n", everything.stdout  # the 4 above are gone
    assert runs.is_dir() and list(runs.iterdir()) == []  # runs/ itself stays
    # The next run checks every view out again, and reuses every result.
    again = subprocess.run([sys.executable, "-m", "doit"], cwd=project.root, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0 and len(project.calls()) == 24
    assert (runs / "alpha" / "one" / "with_skill" / "trial-0" / "trial.json").is_file()


def test_clean_of_one_trial_removes_only_its_view(project: Project) -> None:
    # Without the plugin (doit's own clean), the view and its emptied folders still go, and nothing above.
    for k in (0, 1):
        assert doit(project, "clean", f"trial:beta/five/alt/{k}").returncode == 0
    runs = project.root / ".skillmake" / "runs"
    assert not (runs / "beta" / "five" / "alt").exists()
    assert (runs / "beta" / "five" / "with_skill").is_dir()
