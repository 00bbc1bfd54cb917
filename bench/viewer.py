"""Viewer benchmark: a synthetic store of 6,000 trials (+ 6,000 grades), its pages rendered by `skillmake view`'s
server and measured in headless Chromium (Debian's /usr/bin/chromium through Playwright): time to load each page
(performance.now() at the load event), plus the server's render time and the static export's.

    python bench/viewer.py [--specs 10 --cases 150 --trials 2] [--runs 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
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
from common import table  # noqa: E402

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=10)
    parser.add_argument("--cases", type=int, default=150)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", help="build the store here and keep it")
    args = parser.parse_args()
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
