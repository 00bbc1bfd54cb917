"""The viewer in a real browser (headless Chromium): load, filter, open a case, write feedback, reload and see it;
keyboard navigation; hostile outputs that never run; the static export read without script."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillmake.view import data, site
from skillmake.view.server import ViewServer
from tests.browser.synthetic import build, with_triggers


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ViewServer, data.Source]]:
    built = build(tmp_path / "p", specs=2, cases=4, trials=2)
    with_triggers(built, "spec-00")
    source = data.Source(state_dir=built.state, store=built.store, specs=built.specs)
    server = ViewServer(source)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server, source
    server.shutdown()
    server.server_close()
    thread.join()


def visible_rows(page: Any) -> int:
    return int(page.locator("tr[data-row]:visible").count())


def test_load_filter_open_a_case_write_feedback_reload(page: Any, served: tuple[ViewServer, data.Source],
                                                       shots: Path) -> None:
    server, source = served
    page.goto(server.url)
    assert visible_rows(page) == 2
    assert page.locator("[data-count]").inner_text() == "2 of 2 shown"
    page.fill("input[name=q]", "spec-01")
    assert visible_rows(page) == 1
    page.fill("input[name=q]", "")
    page.screenshot(path=str(shots / "index.png"))

    page.click("text=spec-00")
    page.wait_for_url("**/specs/spec-00/index.html")
    assert visible_rows(page) == 4
    page.check("input[name=failures]")
    failing = visible_rows(page)
    assert 0 < failing <= 4
    page.select_option("select[name=arm]", "with_skill")
    assert page.locator("th span[data-arm=without_skill]").is_hidden()
    with_failing = visible_rows(page)
    assert with_failing < 4  # the baseline fails everywhere; with the skill, only some cases do
    page.uncheck("input[name=failures]")
    page.select_option("select[name=tag]", "slow")
    assert visible_rows(page) == 2
    page.select_option("select[name=tag]", "")
    page.select_option("select[name=arm]", "")
    assert page.locator("#triggers").is_visible()
    page.screenshot(path=str(shots / "spec.png"), full_page=True)

    page.locator("h1").click()  # out of the filter fields: keys now move between cases
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url("**/cases/case-0001.html")
    assert "task 1 of spec-00" in page.locator(".prompt").inner_text()
    assert page.locator("article.card").count() == 4  # 2 arms × 2 trials, side by side
    note = "The table misses the phone column <b>really</b>"
    form = page.locator("form.fb[data-run-id='eval-1-with_skill-run-2']")
    form.locator("textarea").fill(note)
    form.locator("button[type=submit]").click()
    # A locator's own wait: a string predicate (wait_for_function) would be eval'd in the page, which the CSP
    # forbids whenever Playwright cannot bypass it.
    from playwright.sync_api import expect  # conftest skips (outside CI) when playwright is missing

    expect(form.locator(".saved")).to_have_text(re.compile(r"^saved "))
    page.screenshot(path=str(shots / "case.png"))
    page.reload()
    assert page.locator("form.fb[data-run-id='eval-1-with_skill-run-2'] textarea").input_value() == note
    saved = json.loads((source.reports_dir / "spec-00" / "feedback.json").read_text())
    assert saved["reviews"][0]["run_id"] == "eval-1-with_skill-run-2" and saved["reviews"][0]["feedback"] == note

    page.keyboard.press("j")  # the next case the spec page showed
    page.wait_for_url("**/cases/case-0002.html")
    page.keyboard.press("u")
    page.wait_for_url("**/specs/spec-00/index.html#cases")
    assert "✎ 1" in page.locator("tr[data-href$='case-0001.html']").inner_text()
    assert page.blocked == [] and page.errors == []


def test_hostile_outputs_never_run(page: Any, tmp_path: Path, shots: Path) -> None:
    built = build(tmp_path / "p", cases=2, trials=1, hostile=True)
    with_triggers(built, "spec", hostile=True)
    source = data.Source(state_dir=built.state, store=built.store, specs=built.specs)
    (source.reports_dir / "spec" / "feedback.json").write_text(json.dumps({
        "reviews": [{"run_id": "eval-0-with_skill", "feedback": "</textarea><script>window.__pwned='fb'</script>",
                     "timestamp": "t"}], "status": "in_progress"}))
    server = ViewServer(source)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        for path in ("", "specs/spec/index.html", "specs/spec/cases/case-0000.html", "specs/spec/compare.html"):
            page.goto(server.url + path)
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            for link in page.locator(".md a").all():
                link.hover()
            page.mouse.move(300, 300)
            page.wait_for_timeout(100)
            assert page.evaluate("window.__pwned") is None, path
            assert page.evaluate("document.querySelectorAll('script:not([src]):not([type=\"application/json\"])')"
                                 ".length") == 0
            assert page.evaluate("document.querySelectorAll('iframe, object, embed, svg').length") == 0
        page.goto(server.url + "specs/spec/cases/case-0000.html")
        page.screenshot(path=str(shots / "hostile-case.png"))
        note = page.locator("form.fb[data-run-id='eval-0-with_skill'] textarea").input_value()
        assert note == "</textarea><script>window.__pwned='fb'</script>"  # the note as written, as text
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert page.blocked == [] and page.errors == []


def test_static_export_reads_without_script_and_keeps_notes_in_the_browser(browser: Any, tmp_path: Path,
                                                                           shots: Path) -> None:
    built = build(tmp_path / "p", cases=3, trials=1)
    out = site.export(data.Source(state_dir=built.state, store=built.store, specs=built.specs), tmp_path / "site")
    reader = browser.new_context(java_script_enabled=False)
    try:
        tab = reader.new_page()
        tab.goto((out / "index.html").as_uri())
        assert tab.locator("tr[data-row]").count() == 1
        assert tab.locator("[data-filters]").is_hidden()  # no controls that would do nothing
        tab.goto((out / "specs" / "spec" / "cases" / "case-0000.html").as_uri())
        assert tab.locator("article.card").count() == 2
        assert "Blue Door Cafe" in tab.locator("article.card pre.out").first.inner_text()
        assert tab.locator("img.art").first.evaluate("img => img.naturalWidth") == 1  # the PNG loads from files/
        tab.screenshot(path=str(shots / "static-no-js.png"))
    finally:
        reader.close()
    context = browser.new_context(accept_downloads=True)
    try:
        tab = context.new_page()
        tab.goto((out / "specs" / "spec" / "cases" / "case-0000.html").as_uri())
        form = tab.locator("form.fb").first
        form.locator("textarea").fill("kept locally")
        form.locator("button[type=submit]").click()
        assert "kept in this browser" in form.locator(".saved").inner_text()
        tab.goto((out / "specs" / "spec" / "index.html").as_uri())
        with tab.expect_download() as download:
            tab.click("[data-feedback-download]")
        saved = json.loads(Path(download.value.path()).read_text())
        assert saved["reviews"][0]["feedback"] == "kept locally"
    finally:
        context.close()
