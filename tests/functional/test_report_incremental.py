"""`skillmake report` with nothing changed writes nothing: report.json keeps the results' own time and run, and the
static site stamps its pages by what they show, so a second re-render rewrites no page and no report file."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from .project import Project, copy_of, populated


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Project:
    return copy_of(populated(tmp_path_factory), tmp_path / "proj")


def files_of(folder: Path) -> dict[str, tuple[int, int]]:
    """Every regular file under `folder` → (inode, mtime in ns): a file written again (atomically: a new inode;
    in place: a new mtime) shows in either."""
    out = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            st = path.stat()
            out[str(path.relative_to(folder))] = (st.st_ino, st.st_mtime_ns)
    return out


def test_a_second_report_with_nothing_changed_rewrites_no_page(project: Project) -> None:
    state = project.root / ".skillmake"
    first = project.run("report")
    assert first.code == 0, first.err
    pages = [p for p in (state / "site").rglob("*.html")]
    assert len(pages) == 10, pages  # the index; each spec's page, compare page and 3 + 2 case pages
    site_before, reports_before = files_of(state / "site"), files_of(state / "reports")
    second = project.run("report")
    assert second.code == 0, second.err
    site_after, reports_after = files_of(state / "site"), files_of(state / "reports")
    assert site_after == site_before, sorted(k for k in site_after if site_after[k] != site_before.get(k))
    changed = sorted(k for k in reports_after if reports_after[k] != reports_before.get(k))
    assert set(reports_after) == set(reports_before)
    assert not [k for k in changed if k.endswith(("report.json", ".html", "benchmark.json"))], changed


def test_report_json_keeps_the_time_and_run_of_its_results(project: Project) -> None:
    path = project.root / ".skillmake" / "reports" / "alpha" / "report.json"
    ran = orjson.loads(path.read_bytes())
    assert project.run("report").code == 0
    again = orjson.loads(path.read_bytes())
    assert (again["generated"], again["run_id"], again["usage"]) == (ran["generated"], ran["run_id"], ran["usage"])
    # Results that change give a new report: its own time and run, and the site's pages are rendered again.
    project.replace("skills/alpha/SKILL.md", "Answer in UPPERCASE.", "Answer in UPPERCASE, please.")
    assert project.run().code == 0
    site = project.root / ".skillmake" / "site" / "specs" / "alpha" / "index.html"
    before = site.stat().st_mtime_ns
    changed = orjson.loads(path.read_bytes())
    assert changed["run_id"] != ran["run_id"] and changed["generated"] is not None
    assert project.run("report").code == 0
    assert changed["generated"] in site.read_text() and site.stat().st_mtime_ns != before
    assert os.path.exists(project.root / ".skillmake" / "site" / "specs" / "beta" / "index.html")
