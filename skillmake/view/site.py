"""The static export of the viewer: `.skillmake/site/` — index, one page per spec, case and comparison, the shared
assets, and copies of the artifacts and records the pages name — self-contained, readable without script.

Written after every run that reports and by `skillmake report`; a spec whose report, history, feedback and tags
are what they were at the last export is not rendered again, so an export after a run that changed little is
cheap even for thousands of trials."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic, fstree
from skillmake.core.canonical import digest_json
from skillmake.core.paths import cut_links
from skillmake.results.report import report_digest
from skillmake.run.project import Project
from skillmake.view import data, feedback
from skillmake.view.html import Links, Rendered, asset
from skillmake.view.pages import Pages

SITE = "site"
VERSION = 1  # of the pages' shape: a new one renders every spec again
STAMPS = ".stamps.json"
FILE_LIMIT = 32 * 1024 * 1024  # an artifact larger than this is not copied (its link says where it is)


def write_site(project: Project, out_dir: str | Path | None = None) -> Path:
    """Export the viewer's pages of every spec with a report into `out_dir` (default `.skillmake/site/`)."""
    out = Path(out_dir) if out_dir is not None else project.state_dir / SITE
    if out_dir is None:  # our own folder: never written through a link out of the project (paths.cut_links)
        cut_links(project.state_dir, out, children=True)
    return export(data.Source.of(project), out, root=project.root)


def refresh_site(project: Project) -> None:
    """write_site for the end of a run or `skillmake report`: a viewer bug must never fail either, so any error
    is one line on stderr (the reports themselves are already written)."""
    try:
        write_site(project)
    except Exception as exc:  # the site is a convenience; the run's verdict stands without it
        print(f"skillmake: the viewer's pages were not written ({type(exc).__name__}: {exc}); the reports are",
              file=sys.stderr, flush=True)


def _write(path: Path, content: bytes) -> None:
    """Write only what changed (a file a reader has open, or a CI cache keyed by mtime, is left alone)."""
    try:
        if path.read_bytes() == content:
            return
    except OSError:
        pass
    atomic.write_bytes(path, content, durable=False)


def _stamp(source: data.Source, name: str, report: dict[str, Any]) -> str:
    """What the spec's pages show, digested: the report's results and the one run field they print (`generated`),
    the spec's feedback, history and tags; not which run last wrote report.json."""
    spec = source.specs.get(name)
    fb = feedback.path_of(source.reports_dir, name)
    try:
        fb_bytes = fb.read_bytes()
    except OSError:
        fb_bytes = b""
    return digest_json({"v": VERSION, "report": report_digest(report), "generated": report.get("generated"),
                        "feedback": fb_bytes.decode("utf-8", "replace"),
                        "history": [r.digest + str(r.archived) for r in data.history(source, name)],
                        "tags": {c.id: list(c.tags) for c in spec.cases} if spec is not None else {}})


def export(source: data.Source, out: Path, *, root: str = "") -> Path:
    out.mkdir(parents=True, exist_ok=True)
    pages = Pages(source, served=False, root=root)
    _write(out / "assets" / "viewer.css", asset("viewer.css"))
    _write(out / "assets" / "viewer.js", asset("viewer.js"))
    old = data.read_json(out / STAMPS)
    stamps: dict[str, Any] = old if isinstance(old, dict) and old.get("v") == VERSION else {"v": VERSION}
    specs: dict[str, Any] = dict(stamps.get("specs") or {})
    names = pages.names()
    reports: dict[str, dict[str, Any]] = {}
    for name in names:
        report = data.report_of(source, name)
        if report is None:
            continue
        reports[name] = report
        data.archive(source, name, report)  # before the stamp: the history now says it is archived
        stamp = _stamp(source, name, report)
        folder = out / "specs" / name
        if (specs.get(name) or {}).get("stamp") == stamp and (folder / "index.html").exists():
            continue
        files, records = _spec_pages(source, pages, name, report, folder)
        specs[name] = {"stamp": stamp, "files": sorted(files)}
        _copy(source, out, files, records)
    for gone in set(specs) - set(names):
        specs.pop(gone)
    _prune(out / "specs", set(names))
    index = pages.index(reports)
    _write(out / "index.html", index.html.encode())
    _copy(source, out, index.links.files, index.links.records)
    _prune_files(out / "files", {f for s in specs.values() for f in s.get("files", ())} | set(index.links.files))
    _write(out / STAMPS, orjson.dumps({"v": VERSION, "specs": specs}))
    return out


def _spec_pages(source: data.Source, pages: Pages, name: str, report: dict[str, Any],
                folder: Path) -> tuple[dict[str, str], set[str]]:
    """Write the spec's own pages and data files; the artifacts and records they link to."""
    rendered: list[Rendered] = []
    spec_page = pages.spec(name, report)
    compare = pages.compare(name, report=report)
    assert spec_page is not None and compare is not None
    _write(folder / "index.html", spec_page.html.encode())
    _write(folder / "compare.html", compare.html.encode())
    rendered += [spec_page, compare]
    cases = list(report["spec"]["cases"])
    for case in cases:
        page = pages.case(name, case, report)
        if page is not None:
            _write(folder / "cases" / f"{case}.html", page.html.encode())
            rendered.append(page)
    _prune_pages(folder / "cases", {f"{c}.html" for c in cases})
    _write(folder / "report.json", orjson.dumps(report, option=orjson.OPT_INDENT_2))
    # The static pages keep notes in the browser; this is the file they start from (and download merged).
    _write(folder / "feedback.json",
           orjson.dumps(data.feedback_of(source, name).document(), option=orjson.OPT_INDENT_2) + b"\n")
    files: dict[str, str] = {}
    records: set[str] = set()
    for page_ in rendered:
        files.update(page_.links.files)
        records |= page_.links.records
    return files, records


def _copy(source: data.Source, out: Path, files: dict[str, str], records: Iterable[str]) -> None:
    for file_name, digest in files.items():
        target = out / "files" / file_name
        if target.exists():
            continue  # named by content: an existing copy is this content
        blob = data.blob(source, digest)
        if blob is not None and len(blob) <= FILE_LIMIT:
            atomic.write_bytes(target, blob, durable=False)
    for key in records:
        raw = data.record_bytes(source, key)
        if raw is not None:
            _write(out / "records" / f"{key.removeprefix('sha256:')}.json", raw)


def _prune(folder: Path, keep: set[str]) -> None:
    try:
        gone = [p for p in folder.iterdir() if p.is_dir() and p.name not in keep]
    except OSError:
        return
    for path in gone:
        fstree.remove_tree(path)


def _prune_pages(folder: Path, keep: set[str]) -> None:
    try:
        gone = [p for p in folder.iterdir() if p.name not in keep]
    except OSError:
        return
    for path in gone:
        path.unlink(missing_ok=True)


def _prune_files(folder: Path, keep: set[str]) -> None:
    _prune_pages(folder, keep)


__all__ = ["Links", "export", "refresh_site", "write_site"]
