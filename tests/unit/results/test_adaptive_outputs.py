"""The inconclusive verdict shown as such in JUnit, HTML and the terminal, from a report an adaptive run wrote
(tests/data/schemas/report/good/adaptive-trials.json: good decided pass, bad decided fail, mid inconclusive)."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from skillmake.results import junit_xml, render_summary
from skillmake.results.html import html_report

REPORT: dict[str, Any] = json.loads((Path(__file__).resolve().parents[2] / "data/schemas/report/good/"
                                     "adaptive-trials.json").read_text())


def _warned() -> dict[str, Any]:
    report = copy.deepcopy(REPORT)
    report["spec"]["adaptive"]["inconclusive"] = "warn"
    report["verdict"] = {"passed": False, "reasons": [r for r in report["verdict"]["reasons"] if "'mid'" not in r],
                         "inconclusive": 1, "warnings": ["a: case 'mid' under with_skill: inconclusive: …"]}
    return report


def _cases(xml: str) -> dict[str, ET.Element]:
    return {c.get("name", ""): c for c in ET.fromstring(xml.split("\n", 1)[1]).iter("testcase")}


def test_junit_shows_each_decision() -> None:
    cases = _cases(junit_xml([REPORT]))
    assert cases["good"].find("failure") is None  # decided above: a pass
    assert "surely above 0.50, decided after 9 of 20 trials" in (cases["good"].findtext("system-out") or "")
    bad = cases["bad"].find("failure")
    assert bad is not None and bad.get("type") == "EvalFailure" and "surely below 0.50" in bad.get("message", "")
    mid = cases["mid"].find("failure")
    assert mid is not None and mid.get("type") == "Inconclusive"
    assert "inconclusive after 20 trials" in mid.get("message", "")


def test_junit_skips_an_inconclusive_case_that_only_warns() -> None:
    xml = junit_xml([_warned()])
    mid = _cases(xml)["mid"]
    assert mid.find("failure") is None
    skipped = mid.find("skipped")
    assert skipped is not None and "inconclusive after 20 trials" in skipped.get("message", "")
    assert "warning: a: case 'mid'" in (_cases(xml)["verdict"].findtext("system-out") or "")


def test_html_tags_each_cell_and_says_what_was_saved() -> None:
    page = html_report(REPORT)
    assert '<span class="tag" title="adaptive trials: decide 0.50">pass after 9/20</span>' in page
    assert "fail after 9/20</span>" in page and "inconclusive after 20/20</span>" in page
    assert "FAILED (1 inconclusive)" in page
    assert "adaptive: stopped at 38 of 60 trials" in page
    assert "warning: a: case &#x27;mid&#x27;" in html_report(_warned())


def test_terminal_shows_each_decision() -> None:
    text = render_summary([REPORT])
    assert "3–20 adaptive trials per case, decide 0.50" in text
    assert "INCONCLUSIVE @20/20" in text and "pass @9/20" in text and "fail @9/20" in text
    assert "adaptive: stopped at 38 of 60 trials (3 cells of up to 20; 2 decided, 1 inconclusive); 22 trials saved" \
        in text
    assert "? a: case 'mid' under with_skill: inconclusive" in render_summary([_warned()])
