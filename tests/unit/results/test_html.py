"""The HTML report: content traceable to the report, untrusted text escaped, a well-formed offline page."""

from __future__ import annotations

import copy
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from skillmake.results import build_report
from skillmake.results.html import html_report
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Thresholds

sys.path.insert(0, str(Path(__file__).parent))
from results_fixtures import grade_record, make_spec, scenario, trial_record

TS = "2026-11-22T20:10:00Z"
_VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr", "source"}


class _Tags(HTMLParser):
    """Checks every non-void tag is closed in order; collects attributes and visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.seen: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.append((tag, dict(attrs)))
        self.in_style = tag == "style"
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        self.in_style = False
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if not self.in_style:
            self.text.append(data)


def parse(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    parser.close()
    assert parser.errors == []
    assert parser.stack == []
    return parser


def words(tags: _Tags) -> str:
    """The page's visible text with whitespace collapsed, so a table row reads as one line."""
    return " ".join(" ".join(tags.text).split())


def report_for(*, trials: Any = None, grades: Any = None, **spec_kw: Any) -> dict[str, Any]:
    if trials is None:
        trials, grades = scenario()
    return build_report(make_spec(**spec_kw), trials, grades, generated=TS)


def hostile() -> dict[str, Any]:
    """A report whose failure evidence (agent output) and text carry markup."""
    trials, grades = [], []
    for k in range(2):
        t = trial_record("greeting", WITH_SKILL, k)
        trials.append(t)
        grades.append(grade_record(t, "fail", ("x<b>", False, '<script>alert("pwn")</script> & "q"')))
    return report_for(trials=trials, grades=grades, baseline=False, cases=("greeting",))


def test_page_is_well_formed_and_self_contained() -> None:
    page = html_report(report_for())
    assert page.startswith("<!DOCTYPE html>")
    tags = parse(page)
    names = [t for t, _ in tags.seen]
    for block in ("html", "head", "body", "main", "table", "details", "section"):
        assert block in names
    assert "script" not in names
    assert "http://" not in page and "https://" not in page and "@import" not in page
    assert "<link" not in page and "src=" not in page
    assert "prefers-color-scheme:dark" in page


def test_title_verdict_and_arm_numbers() -> None:
    report = report_for(thresholds=Thresholds(min_pass_rate=0.5))
    page = html_report(report)
    tags = parse(page)
    text = " ".join(tags.text)
    assert "<title>skillmake · shout — shout</title>" in page
    assert report["passed"] and "passed" in text and "FAILED" not in text
    assert 'class="verdict pass"' in page
    # Arm rows: passed/n, 95% CI, mean score, stability, pass@k, pass^k, cases passed, tokens, cost, mean time.
    line = words(tags)
    assert "with_skill 3/4 [0.30, 0.95] 0.75 0.50 1.00 0.62 1/2 4,000 $0.0400 2.0 s" in line
    assert "without_skill baseline 0/4 [0.00, 0.49] 0.25 1.00 0.00 0.00 0/2 6,000 $0.0400 3.0 s" in line
    assert "Baseline: with_skill vs without_skill" in text and "+0.75" in text
    assert "required" not in text


def test_failing_thresholds_are_in_the_banner() -> None:
    report = report_for(thresholds=Thresholds(min_pass_rate=0.9), required=("question",))
    assert not report["passed"]
    page = html_report(report)
    text = " ".join(parse(page).text)
    assert "FAILED" in text and 'class="verdict fail"' in page
    for verdict in report["thresholds"]:
        if not verdict["passed"]:
            assert verdict["message"] in text
    assert "required" in text


def test_cells_show_counts_deltas_failures_and_keys() -> None:
    report = report_for()
    page = html_report(report)
    tags = parse(page)
    text = " ".join(tags.text)
    rows = [t for t, a in tags.seen if t == "tr" and a.get("class") in ("skill", "baseline")]
    assert len(rows) == len(report["arms"]) + len(report["rows"])
    assert "pass@2" in text and "pass^2" in text
    # question × with_skill: 1/2, pass@2 1.00, pass^2 0.25, Δ baseline +0.50; its failure from trial 1.
    assert "1/2" in text and "0.25" in text and "+0.50" in text
    assert "no match for /^[A-Z !]+$/ in 'hello'" in text and "ends with ?" in text and "trial 1" in text
    assert "2 failure(s)" in text
    titles = {a.get("title") for _, a in tags.seen}
    for row in report["rows"]:
        for key in row["trial_keys"] + row["grade_keys"]:
            assert key in titles  # full key in a title, a short one visible
            assert key.removeprefix("sha256:")[:10] in text
    assert "Δ prev" not in text


def test_untrusted_text_is_escaped() -> None:
    page = html_report(hostile())
    assert "<script>" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(&quot;pwn&quot;)&lt;/script&gt; &amp; &quot;q&quot;" in page
    tags = parse(page)
    assert "script" not in [t for t, _ in tags.seen]
    assert '<script>alert("pwn")</script> & "q"' in " ".join(tags.text)
    assert "check x<b>" in " ".join(tags.text)


def test_markup_in_names_is_escaped() -> None:
    report = copy.deepcopy(report_for())
    report["spec"]["name"] = "<img src=x onerror=alert(1)>"
    report["thresholds"] = [{"spec": "s", "metric": "min_pass_rate", "arm": WITH_SKILL, "value": 0.1,
                              "threshold": 0.9, "passed": True, "message": "<u>met</u>", "case": None}]
    report["verdict"] = {"passed": False, "reasons": ["<i>gate</i>"]}
    report["passed"] = False
    page = html_report(report)
    assert "<img" not in page and "<i>" not in page and "&lt;i&gt;gate&lt;/i&gt;" in page
    assert "<u>" not in page and "&lt;u&gt;met&lt;/u&gt;" in page
    parse(page)


def test_banner_lists_every_reason_of_the_verdict() -> None:
    """The banner shows the report's verdict, not the thresholds alone: an error trial fails the page."""
    t = trial_record("greeting", WITH_SKILL, 0, outcome="error", error="API 500: overloaded")
    spec = make_spec(trials=1, baseline=False, cases=("greeting",), thresholds=Thresholds(min_pass_rate=0.0))
    report = build_report(spec, [t], [grade_record(t, "error")], generated=TS)
    assert report["thresholds"][0]["passed"] and not report["verdict"]["passed"]
    page = html_report(report)
    text = " ".join(parse(page).text)
    assert "FAILED" in text and 'class="verdict fail"' in page
    for reason in report["verdict"]["reasons"]:
        assert reason in text
    assert "API 500: overloaded" in text and "1 threshold(s) met" in text


def test_delta_against_previous() -> None:
    previous = report_for()
    trials, grades = scenario(salt="v2", question_with=(True, True))
    current = report_for(trials=trials, grades=grades)
    page = html_report(current, previous=previous)
    tags = parse(page)
    text = " ".join(tags.text)
    assert "Δ prev" in text and f"compared with {TS}" in text
    titles = [a.get("title") or "" for _, a in tags.seen]
    # question × with_skill went 0.50 → 1.00 with new trial keys; the arm 0.75 → 1.00.
    assert any(t.startswith("was 0.50; trials re-run, re-graded") for t in titles)
    assert "previous pass rate 0.75" in titles
    assert "+0.25" in text
    assert any(t.startswith("was 0.00; same records") for t in titles)  # the baseline did not change


def test_ungraded_and_error_cells_are_flagged() -> None:
    t0 = trial_record("greeting", WITH_SKILL, 0, tokens=None, cost=None)
    t1 = trial_record("greeting", WITHOUT_SKILL, 0, tokens=None, cost=None)
    grades = [grade_record(t0, "error"), grade_record(t1, "pass", ("a", True, "ok"))]
    report = report_for(trials=[t0, t1], grades=grades, cases=("greeting", "question"))
    page = html_report(report)
    text = " ".join(parse(page).text)
    assert "1 error" in text and "trial outcome error" in text and "boom" in text
    assert "0/2 graded" in text and "no graded trials" in text
    assert "tokens —" in text and "cost —" in text
    assert WITHOUT_SKILL in text and "baseline" in text
