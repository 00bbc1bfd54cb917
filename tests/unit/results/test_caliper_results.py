"""caliper's pass@k, 1 − (1 − c/n)^k, beside the unbiased estimator: in every report.json, first-class for a
spec read from caliper (terminal table, arm line, HTML), and an older report.json still reads back."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from skillmake.core.stats import arm_stats, cell_stats, pass_at_k, pass_at_k_caliper
from skillmake.results import build_report, read_report, render_summary, write_report
from skillmake.results.html import html_report
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Spec
from skillmake.spec.schema import validate_record

sys.path.insert(0, str(Path(__file__).parent))
from results_fixtures import make_spec, scenario

REPO = Path(__file__).resolve().parents[3]
TS = "2026-11-23T10:00:00Z"


def caliper_spec() -> Spec:
    return dataclasses.replace(make_spec(), format="caliper")


def report_of(spec: Spec) -> dict[str, Any]:
    trials, grades = scenario()  # greeting 2/2 with the skill, question 1/2; 0/2 each without
    report = build_report(spec, trials, grades, generated=TS)
    validate_record("report.schema.json", report, what="report")
    return report


def row(report: dict[str, Any], case: str, arm: str) -> dict[str, Any]:
    return next(r for r in report["rows"] if r["case"] == case and r["arm"] == arm)


def test_caliper_formula_matches_its_readme() -> None:
    # caliper's README: 2 of 3 → 96.3%; its baseline 1 of 3 → 70.4%; delta +25.9%.
    assert round(pass_at_k_caliper(3, 2, 3), 3) == 0.963
    assert round(pass_at_k_caliper(3, 1, 3), 3) == 0.704
    assert (pass_at_k_caliper(3, 0, 3), pass_at_k_caliper(3, 3, 3)) == (0.0, 1.0)
    assert pass_at_k_caliper(4, 1, 2) == pytest.approx(1 - 0.75 ** 2)  # c/n with k < n
    assert pass_at_k(3, 2, 3) == 1.0  # the unbiased estimator differs: it is a separate, named number
    with pytest.raises(ValueError):
        pass_at_k_caliper(3, 4, 3)


def test_cell_and_arm_carry_both_estimators() -> None:
    g = [{"outcome": "pass"}, {"outcome": "fail"}, {"outcome": "pass"}]
    cell = cell_stats(g, k=3)
    assert cell.pass_at_k == 1.0 and cell.pass_at_k_caliper == pytest.approx(1 - (1 / 3) ** 3)
    assert cell_stats([]).pass_at_k_caliper is None
    arm = arm_stats([cell, cell_stats([{"outcome": "fail"}])])
    assert arm.pass_at_k_caliper == pytest.approx((1 - (1 / 3) ** 3) / 2)


def test_every_report_carries_both_each_named() -> None:
    report = report_of(make_spec())
    assert report["spec"]["format"] is None
    question = row(report, "question", WITH_SKILL)
    assert (question["pass_at_k"], question["pass_at_k_caliper"]) == (1.0, 0.75)
    assert report["arms"][WITH_SKILL]["pass_at_k_caliper"] == 0.875
    assert report["arms"][WITHOUT_SKILL]["pass_at_k_caliper"] == 0.0
    assert report["baseline"]["delta"]["pass_at_k_caliper"] == 0.875
    assert report["baseline"]["delta"]["pass_at_k"] == 1.0


def test_a_native_spec_renders_as_before() -> None:
    report = report_of(make_spec())
    text = render_summary([report])
    assert "  case      arm            passed  pass rate (95% CI)  pass@2  Δ base" in text
    assert "caliper" not in text and "unbiased" not in text
    assert "caliper" not in html_report(report)


def test_a_caliper_spec_leads_with_calipers_number() -> None:
    report = report_of(caliper_spec())
    assert report["spec"]["format"] == "caliper"
    text = render_summary([report])
    assert "  case      arm            passed  pass rate (95% CI)  pass@2 (caliper)  pass@2 (unbiased)  Δ base" in text
    assert "  question  with_skill     1/2     0.50 [0.09, 0.91]   0.75              1.00               +0.50" in text
    assert ("with_skill pass@2 (caliper) 0.88; without_skill pass@2 (caliper) 0.00; "
            "baseline Δ pass@2 (caliper) +0.88") in text
    page = html_report(report)
    assert page.index("pass@2 (caliper)") < page.index("pass@2 (unbiased)")
    assert "pass@k (caliper)" in page and "1 − (1 − c/n)^k" in page
    assert "pass@k (caliper) <b>+0.88</b>" in page


def test_an_older_report_still_reads_back_and_renders(tmp_path: Path) -> None:
    """A report.json written before caliper's pass@k (no spec.format, no pass_at_k_caliper) is schema-valid,
    read back, compared with and rendered."""
    old = report_of(caliper_spec())
    del old["spec"]["format"]
    for block in (*old["rows"], *old["arms"].values(), old["baseline"]["delta"]):
        del block["pass_at_k_caliper"]
    path = tmp_path / "report.json"
    path.write_bytes(orjson.dumps(old))
    assert read_report(path) == old
    assert "pass@2  Δ base" in render_summary([old])
    assert "pass@2 (caliper)" not in html_report(old)
    new = report_of(caliper_spec())
    # The same records under the new report: nothing changed (no cell flips because a number was added) …
    assert render_summary([new], previous={"shout": old}).startswith("nothing changed")
    assert "pass@2 (caliper)" in render_summary([new], previous={"shout": old}, ran=1)  # … and it compares
    write_report(tmp_path / "new.json", new)  # validated when written …
    assert read_report(tmp_path / "new.json") == new  # … and when read


def test_a_spec_loaded_from_caliper_says_so() -> None:
    from skillmake.spec.loader import load_spec

    seed = REPO / "tests" / "data" / "seeds" / "caliper" / "quick-start"
    assert load_spec(str(seed / "my-skill.eval.yaml"), root=str(seed)).format == "caliper"
    assert load_spec(str(seed / "my-skill-native.eval.yaml"), root=str(seed)).format is None
