"""The viewer's data collection and pages: what each page shows, and that nothing an agent wrote reaches a page as
markup (script, closing tags, attribute breakers, javascript: links, SVG and HTML artifacts)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import orjson
import pytest

from skillmake.view import artifacts, data, markdown, site, transcript
from skillmake.view.pages import Pages
from tests.browser.synthetic import HOSTILE, PNG, SVG, build, with_triggers

# Markup the hostile outputs try to smuggle in; none may appear as a real tag or attribute.
_BAD_TAGS = {"iframe", "object", "embed", "svg", "img"}


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Collector()
    parser.feed(html)
    return parser.tags


def assert_inert(html: str) -> None:
    """Every script is the viewer's own file or a JSON data block; no handler attribute; no dangerous URL; no
    element an agent could have injected."""
    for tag, attrs in _tags(html):
        if tag == "script":
            assert attrs.get("type") == "application/json" or (attrs.get("src") or "").endswith("assets/viewer.js")
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        for name in ("href", "src", "action"):
            value = (attrs.get(name) or "").strip().lower()
            assert not value.startswith(("javascript:", "data:", "vbscript:")), (tag, attrs)
        if tag == "img":
            assert re.search(r"files/[0-9a-f]{64}\.(png|jpg|gif|webp)$", attrs.get("src") or ""), attrs
            continue
        assert tag not in _BAD_TAGS, (tag, attrs)
    # A data block cannot be closed early by the text inside it.
    for block in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S):
        assert "<" not in block


@pytest.fixture
def hostile(tmp_path: Path) -> Pages:
    built = build(tmp_path / "p", hostile=True, cases=2)
    with_triggers(built, "spec", hostile=True)
    return Pages(data.Source(state_dir=built.state, store=built.store, specs=built.specs), served=True, token="tok")


def test_every_page_of_a_hostile_store_is_inert(hostile: Pages) -> None:
    rendered = [hostile.index(), hostile.spec("spec"), hostile.case("spec", "case-0000"), hostile.compare("spec")]
    for page in rendered:
        assert page is not None
        assert_inert(page.html)
    case = rendered[2]
    assert case is not None
    assert "&lt;script&gt;window.__pwned" in case.html  # shown as text
    assert "[click me](javascript:" in case.html  # a javascript: link stays text in the rendered markdown
    assert 'download="evil.svg"' in case.html and ".bin" in case.links.files.__repr__()


def test_textarea_and_attribute_breakers_are_escaped(hostile: Pages, tmp_path: Path) -> None:
    from skillmake.view import feedback

    path = feedback.path_of(hostile.source.reports_dir, "spec")
    feedback.write(path, feedback.Feedback(notes={"eval-0-with_skill-run-1": {"feedback": HOSTILE, "timestamp": "t"}}))
    page = hostile.case("spec", "case-0000")
    assert page is not None
    assert_inert(page.html)
    textarea = re.search(r'<textarea id="fb-eval-0-with_skill-run-1"[^>]*>(.*?)</textarea>', page.html, re.S)
    assert textarea is not None and "&lt;/textarea&gt;" in textarea.group(1)
    spec = hostile.spec("spec")
    assert spec is not None and "&lt;/textarea&gt;" in spec.html


def test_markdown_keeps_only_harmless_links() -> None:
    html = markdown.render("# T\n[a](https://x.example) [b](javascript:alert(1)) [c]( JaVaScRiPt:x) "
                           "[d](data:text/html,x) [e](#anchor)\n<b>raw</b>\n```\n<script>x</script>\n```")
    assert '<a href="https://x.example"' in html and '<a href="#anchor"' in html
    assert "javascript" not in "".join(a.get("href") or "" for _, a in _tags(html))
    assert "&lt;b&gt;raw&lt;/b&gt;" in html and "&lt;script&gt;" in html
    assert markdown.safe_href("java\tscript:alert(1)") is None
    assert markdown.safe_href("\x01javascript:x") is None


@pytest.mark.parametrize(("name", "blob", "kind"), [
    ("chart.png", PNG, "image"), ("evil.svg", SVG, "binary"), ("x.png", b"<html><script>1</script>", "text"),
    ("page.html", b"<p>hi</p>", "binary"), ("a.md", b"# x", "markdown"), ("t.csv", b"a,b\n1,2\n", "csv"),
    ("d.json", b'{"a": 1}', "json"), ("blob.bin", b"\x00\x01\x02", "binary"), ("notes.txt", b"hello", "text"),
])
def test_artifacts_are_previewed_by_what_they_are(name: str, blob: bytes, kind: str) -> None:
    assert artifacts.kind_of(name, blob) == kind
    html = artifacts.preview(name, blob, f"files/{'a' * 64}.{artifacts.extension(kind, blob)}")
    assert_inert(html)
    if kind == "csv":
        assert "<th>a</th>" in html and "<td>2</td>" in html
    if kind == "json":
        assert "&quot;a&quot;: 1" in html


def test_large_text_is_truncated_with_a_link_to_the_whole_file() -> None:
    html = artifacts.preview("big.txt", b"x" * (artifacts.TEXT_LIMIT + 10), "files/abc.txt")
    assert 'href="files/abc.txt"' in html and "the whole file" in html
    assert html.count("x") < artifacts.TEXT_LIMIT + 100


def test_transcripts_of_each_agent_are_read() -> None:
    claude = b"\n".join(orjson.dumps(e) for e in [
        {"type": "system", "subtype": "init", "model": "m", "tools": ["Skill"], "skills": ["s"]},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "hi"}, {"type": "tool_use", "name": "Skill", "input": {"skill": "s"}}]}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}},
        {"type": "result", "subtype": "success", "num_turns": 1}]) + b"\nnot json\n"
    kinds = [(x.role, x.kind, x.name) for x in transcript.entries(claude)]
    assert ("assistant", "tool_use", "Skill") in kinds and ("tool", "tool_result", "") in kinds
    codex = b"\n".join(orjson.dumps(e) for e in [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "item.completed", "item": {"type": "command_execution", "command": "ls", "exit_code": 0}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "done"}},
        {"type": "turn.completed", "usage": {"input_tokens": 3}}])
    assert [x.name for x in transcript.entries(codex) if x.kind == "tool_use"] == ["shell"]
    api = orjson.dumps({"request": {"system": "sys", "messages": [{"role": "user", "content": "q"}]},
                        "response": {"content": [{"type": "text", "text": "a"}]}})
    assert [x.text for x in transcript.entries(api)] == ["sys", "q", "a"]
    assert transcript.entries(None) == [] and transcript.entries(b"\x00garbage") == []


def test_data_collects_reports_views_and_feedback_ids(tmp_path: Path) -> None:
    built = build(tmp_path / "p", specs=2, cases=2, trials=3)
    source = data.Source(state_dir=built.state, store=built.store, specs=built.specs)
    assert data.spec_names(source) == ["spec-00", "spec-01"]
    assert data.spec_names(data.Source(state_dir=built.state, store=built.store, only=("spec-01",))) == ["spec-01"]
    report = data.report_of(source, "spec-00")
    assert report is not None
    ids = data.run_ids(source, report)
    # skill-creator's run ids: eval-<id>-<config>-run-<n> with several runs
    assert ids["eval-1-without_skill-run-3"] == ("case-0001", "without_skill", 2)
    assert data.outcomes(source, "spec-00", "case-0000", "with_skill", 3) == ["fail", "pass", "pass"]
    view = data.trial_view(source, "spec-00", "case-0000", "with_skill", 0)
    assert view.outcome == "fail" and data.staged_inputs(source, view.record) == {
        "venues.csv": data.staged_inputs(source, view.record)["venues.csv"]}
    assert "notes/extra.txt" in data.workspace_files(source, view.record)
    assert data.trial_view(source, "spec-00", "nope", "with_skill", 0).outcome == "missing"
    (built.state / "reports" / "spec-01" / "report.json").write_text("{broken")
    assert data.report_of(source, "spec-01") is None
    assert Pages(source, served=False).index().html.count("data-row") == 1  # the broken one is left out


def test_a_report_with_triggers_shows_rates_and_one_without_does_not(tmp_path: Path) -> None:
    built = build(tmp_path / "p", specs=2, cases=1, trials=1)
    with_triggers(built, "spec-00")
    source = data.Source(state_dir=built.state, store=built.store, specs=built.specs)
    pages = Pages(source, served=False)
    index = pages.index().html
    assert "2/2" in index and "0.67 / 0.33" in index
    spec = pages.spec("spec-00")
    assert spec is not None and 'id="triggers"' in spec.html and "q-weather" in spec.html
    other = pages.spec("spec-01")
    assert other is not None and 'id="triggers"' not in other.html


def test_two_runs_compare_with_explain_reasons(tmp_path: Path) -> None:
    built = build(tmp_path / "p", cases=2, trials=1, fail_every=0)
    source = data.Source(state_dir=built.state, store=built.store, specs=built.specs)
    first = data.report_of(source, "spec")
    assert first is not None
    # A second run: the skill changed (another skill digest in case-0000's trial) and that case now fails.
    built2 = build(tmp_path / "p", cases=2, trials=1, fail_every=2, now="2026-01-03T00:00:00+00:00", run_id="r2")
    folder = built2.state / "runs" / "spec" / "case-0000" / "with_skill" / "trial-0"
    record = orjson.loads((folder / "trial.json").read_bytes())
    skill = built2.store.put_json({"files": {"SKILL.md": "sha256:" + "1" * 64}})
    old_skill = built2.store.put_json({"files": {"SKILL.md": "sha256:" + "2" * 64}})
    first_row = next(r for r in first["rows"] if r["case"] == "case-0000" and r["arm"] == "with_skill")
    old = orjson.loads(built2.store.action_path(first_row["trial_keys"][0]).read_bytes())
    old["inputs"]["skill"] = old_skill
    old["key"] = "sha256:" + "3" * 64
    built2.store.action_path(old["key"]).parent.mkdir(parents=True, exist_ok=True)
    built2.store.action_path(old["key"]).write_bytes(orjson.dumps(old))
    first_row["trial_keys"] = [old["key"]]
    record["inputs"]["skill"] = skill
    built2.store.action_path(record["key"]).write_bytes(orjson.dumps(record))
    import shutil

    from skillmake.results.report import report_digest

    # Only the hand-made first run is kept (each run archives its own report: drop those copies).
    shutil.rmtree(built.state / "reports" / "spec" / "archive", ignore_errors=True)
    (built.state / "reports" / "spec" / "archive").mkdir()

    (built.state / "reports" / "spec" / "archive" / f"{report_digest(first)[7:]}.json").write_bytes(orjson.dumps(first))
    history = built.state / "reports" / "spec" / "history.jsonl"
    history.write_bytes(orjson.dumps({"digest": report_digest(first), "ts": "t0", "gates_passed": True})
                        + b"\n" + history.read_bytes())
    page = Pages(source, served=True, token="t").compare("spec")
    assert page is not None
    assert "skill file SKILL.md changed" in page.html and "case-0000" in page.html
    assert "1.00 → 0.00" in page.html
    # Each side's arm rate with its 95% Wilson interval: the older run's with_skill passed 2/2.
    assert first["arms"]["with_skill"]["passed"] == first["arms"]["with_skill"]["n"] == 2
    assert '1.00 <span class="ci mute">[0.34, 1.00]</span>' in page.html


def test_static_export_is_self_contained_and_incremental(tmp_path: Path) -> None:
    built = build(tmp_path / "p", cases=2, trials=1, hostile=True)
    source = data.Source(state_dir=built.state, store=built.store, specs=built.specs)
    out = site.export(source, tmp_path / "site")
    pages = sorted(out.rglob("*.html"))
    assert {p.relative_to(out).as_posix() for p in pages} >= {
        "index.html", "specs/spec/index.html", "specs/spec/compare.html", "specs/spec/cases/case-0000.html"}
    for page in pages:
        html = page.read_text()
        assert_inert(html)
        assert not re.search(r'(?:src|href)="(?:https?:)?//', html), page  # nothing from outside
        for ref in re.findall(r'(?<![\w-])(?:src|href)="([^"#?]+)', html):
            if not ref.startswith(("mailto:", "https:", "http:")):
                assert (page.parent / ref).resolve().exists(), (page, ref)
    svg = [p for p in (out / "files").iterdir() if p.read_bytes() == SVG]
    assert svg and svg[0].suffix == ".bin"  # never served or opened as SVG
    case_page = out / "specs" / "spec" / "cases" / "case-0000.html"
    before = case_page.stat().st_mtime_ns
    site.export(source, tmp_path / "site")
    assert case_page.stat().st_mtime_ns == before  # nothing changed: nothing rendered again
    (built.state / "reports" / "spec" / "feedback.json").write_text(
        '{"reviews": [{"run_id": "eval-0-with_skill", "feedback": "nice", "timestamp": "t"}], "status": "complete"}')
    site.export(source, tmp_path / "site")
    assert "nice" in case_page.read_text()
    assert orjson.loads((out / "specs" / "spec" / "feedback.json").read_bytes())["status"] == "complete"
