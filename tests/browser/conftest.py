"""Headless Chromium for the viewer's browser tests: Debian's /usr/bin/chromium driven by Playwright (its driver
ships in the wheel; no browser is ever downloaded), one browser for the session, a fresh context per test, and
no request leaving 127.0.0.1. Under CI=true these tests run or fail; elsewhere they skip, saying why."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from skillmake.view import data
from skillmake.view.server import ViewServer

CHROMIUM = os.environ.get("SKILLMAKE_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"]
REPO = Path(__file__).resolve().parents[2]


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"{CHROMIUM} is missing (apt-get install chromium; scripts/setup.sh does it)"
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    why = _missing()
    if why is not None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"the browser tests must run in CI: {why}")
        print(f"\nskipping the browser tests: {why}")
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)  # a fresh temporary profile
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page in a fresh context that may reach 127.0.0.1 only: every other request is aborted and recorded."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, java_script_enabled=True)
    blocked: list[str] = []

    def guard(route: Any) -> None:
        url = route.request.url
        host = urlsplit(url).hostname or ""
        if url.startswith(("data:", "blob:", "about:")) or host in ("127.0.0.1", "localhost") or \
                url.startswith("file:"):
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    context.route("**/*", guard)
    tab = context.new_page()
    tab.blocked = blocked
    tab.errors = []
    tab.on("pageerror", lambda exc: tab.errors.append(str(exc)))
    tab.on("dialog", lambda dialog: (tab.errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    yield tab
    context.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where screenshots go: artifacts/screenshots/ under CI (kept as CI artifacts), else the test's tmp folder."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes") or os.environ.get("SKILLMAKE_SCREENSHOTS"):
        folder = REPO / "artifacts" / "screenshots"
        folder.mkdir(parents=True, exist_ok=True)
        ignore = REPO / "artifacts" / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n")  # never committed by accident
        return folder
    return tmp_path


class Served:
    def __init__(self, server: ViewServer, thread: threading.Thread) -> None:
        self.server = server
        self.thread = thread
        self.url = server.url

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def serve(source: data.Source) -> Served:
    server = ViewServer(source)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return Served(server, thread)


def copy_screenshot(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
