"""Viewer benchmark: a synthetic store of 6,000 trials (+ 6,000 grades), its pages rendered by `skillmake view`'s
server and measured in headless Chromium (Debian's /usr/bin/chromium through Playwright): time to load each page
(performance.now() at the load event), plus the server's render time and the static export's.

`--command`: the `skillmake report` command instead, on a real project after its first run (command agent):
the site from scratch, then `report` again with nothing changed (the files it rewrote counted), each against the
project's no-op `skillmake`; `--before DIR` runs the same two on an older checkout of skillmake, in the same run.

    python bench/viewer.py [--specs 10 --cases 150 --trials 2] [--runs 3] [--keep DIR]
    python bench/viewer.py --command [--specs 10 --cases 150 --trials 2] [--before DIR] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from common import measure, table  # noqa: E402

from skillmake.view import data, site  # noqa: E402
from skillmake.view.server import ViewServer  # noqa: E402
from tests.browser.conftest import CHROMIUM, FLAGS  # noqa: E402
from tests.browser.synthetic import build  # noqa: E402


def _load_ms(page: object, url: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        page.goto(url, wait_until="load")  # type: ignore[attr-defined]
        times.append(float(page.evaluate("performance.now()")))  # type: ignore[attr-defined]
    return statistics.median(times)


def _fetch_ms(url: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        with urllib.request.urlopen(url) as resp:  # 127.0.0.1: our own server
            resp.read()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            st = path.stat()
            out[str(path)] = (st.st_ino, st.st_mtime_ns)
    return out


def _timed(tree: Path, project: Path, *argv: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    wall, _, code = measure([sys.executable, "-m", "skillmake", *argv], cwd=str(project), env=env)
    if code != 0:
        raise SystemExit(f"skillmake {' '.join(argv)} exited {code} in {project} (skillmake of {tree})")
    return wall


def command(args: argparse.Namespace) -> int:
    """`skillmake report` on a populated project: from scratch, then with nothing changed, vs the no-op."""
    from noop import build_suite

    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="skillmake-bench-report-"))
    project = base / "suite"
    if not (project / ".skillmake").exists():
        shutil.rmtree(project, ignore_errors=True)
        project.mkdir(parents=True)
        n = build_suite(project, specs=args.specs, cases=args.cases, trials=args.trials)
        print(f"populating the store: {n} trials with -j 4 …", flush=True)
        start = time.perf_counter()
        _timed(REPO, project, "-q", "-j", "4")
        print(f"  first run: {time.perf_counter() - start:.1f}s", flush=True)
    total = args.specs * args.cases * 2 * args.trials
    state = project / ".skillmake"
    sides = ([("before", Path(args.before).resolve())] if args.before else []) + [("this tree", REPO)]
    measured = []
    for label, tree in sides:
        shutil.rmtree(state / "site", ignore_errors=True)
        first = _timed(tree, project, "report")
        written = _files(state / "site")
        before = {**written, **_files(state / "reports")}
        again = _timed(tree, project, "report")
        after = {**_files(state / "site"), **_files(state / "reports")}
        rewritten = sum(1 for k, v in after.items() if before.get(k) != v)
        measured.append((label, first, again, len(written), rewritten))
    _timed(REPO, project)  # the run after a re-render settles what the report tasks stamp; then the no-op
    noop = sorted(_timed(REPO, project) for _ in range(args.runs))[args.runs // 2]
    rows = [[label, f"{first:.2f} s", f"{first / noop:.1f}×", f"{files:,}", f"{again:.2f} s", f"{again / noop:.1f}×",
             f"{rewritten:,}"] for label, first, again, files, rewritten in measured]
    print(f"\n`skillmake report` over {args.specs} specs × {args.cases} cases × 2 arms × {args.trials} trials = "
          f"{total:,} trials; the no-op `skillmake` (this tree, median of {args.runs}): {noop:.2f} s\n")
    print(table(["skillmake", "site from scratch", "× no-op", "site files", "again, nothing changed", "× no-op",
                 "files rewritten"], rows))
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=10)
    parser.add_argument("--cases", type=int, default=150)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", help="build the store here and keep it")
    parser.add_argument("--command", action="store_true", help="bench the `skillmake report` command instead")
    parser.add_argument("--before", help="with --command: an older checkout of skillmake to pair with")
    args = parser.parse_args()
    if args.command:
        return command(args)
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="skillmake-bench-viewer-"))
    total = args.specs * args.cases * 2 * args.trials
    start = time.perf_counter()
    built = build(root, specs=args.specs, cases=args.cases, trials=args.trials, files=False)
    build_s = time.perf_counter() - start
    source = data.Source(state_dir=built.state, store=built.store, specs=built.specs)
    start = time.perf_counter()
    site.export(source, root / "site")
    export_s = time.perf_counter() - start
    start = time.perf_counter()
    site.export(source, root / "site")
    again_s = time.perf_counter() - start
    server = ViewServer(source)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    first = data.spec_names(source)[0]
    pages = {"index (all specs)": "", f"spec page ({args.cases * 2 * args.trials:,} trials)":
             f"specs/{first}/index.html", "case page": f"specs/{first}/cases/case-0000.html"}
    from playwright.sync_api import sync_playwright

    rows = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page()
            for label, path in pages.items():
                served = _fetch_ms(server.url + path, args.runs)
                loaded = _load_ms(page, server.url + path, args.runs)
                static = _load_ms(page, (root / "site" / (path or "index.html")).as_uri(), args.runs)
                rows.append([label, f"{served:.0f} ms", f"{loaded:.0f} ms", f"{static:.0f} ms"])
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    print(f"viewer over {args.specs} specs × {args.cases} cases × 2 arms × {args.trials} trials = {total:,} trials "
          f"(store built in {build_s:.1f}s; static export {export_s:.1f}s, again with nothing changed {again_s:.2f}s)")
    print(table(["page", "server render", "Chromium load (served)", "Chromium load (static file)"], rows))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
