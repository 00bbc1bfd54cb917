"""A report whose results are those of the report.json it replaces keeps that one's time, run and spent/reused,
byte for byte once written; changed results, a missing or an older report give the new one as built."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from skillmake.results import build_report, report_digest
from skillmake.results.publish import REPORT_FILE, publish
from skillmake.results.report import settled

sys.path.insert(0, str(Path(__file__).parent))
from results_fixtures import make_spec, scenario


def built(generated: str, run_id: str, *, ran_by: str = "run-1") -> dict:
    trials, grades = scenario()
    for r in [*trials, *grades]:
        r["run_id"] = ran_by
    return build_report(make_spec(), trials, grades, generated=generated, run_id=run_id)


def test_same_results_keep_the_earlier_reports_run_fields() -> None:
    earlier = built("2026-01-01T00:00:00+00:00", "run-1")
    later = built("2026-02-02T00:00:00+00:00", "run-2")
    kept = settled(later, orjson.loads(orjson.dumps(earlier)))
    assert orjson.dumps(kept) == orjson.dumps(earlier)
    assert kept["usage"]["spent"] == earlier["usage"]["spent"] != later["usage"]["spent"]
    assert report_digest(kept) == report_digest(later)


def test_changed_results_or_no_earlier_report_give_the_new_one() -> None:
    later = built("2026-02-02T00:00:00+00:00", "run-2")
    assert settled(later, None) is later
    other = built("2026-01-01T00:00:00+00:00", "run-1")
    other["rows"][0]["passed"] += 1
    assert settled(later, other) is later


def test_publishing_the_same_results_again_leaves_report_json_as_it_was(tmp_path: Path) -> None:
    trials, grades = scenario()
    spec = make_spec()
    first = publish(tmp_path, spec, trials, grades, now="2026-01-01T00:00:00+00:00", run_id="run-1")
    path = tmp_path / REPORT_FILE
    before = path.stat()
    second = publish(tmp_path, spec, trials, grades, now="2026-02-02T00:00:00+00:00", run_id="run-2")
    after = path.stat()
    assert second.report == first.report and not second.appended
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    grades[0]["outcome"] = "fail" if grades[0]["outcome"] == "pass" else "pass"
    third = publish(tmp_path, spec, trials, grades, now="2026-03-03T00:00:00+00:00", run_id="run-3")
    assert third.report["generated"] == "2026-03-03T00:00:00+00:00" and third.report["run_id"] == "run-3"
    assert orjson.loads(path.read_bytes())["run_id"] == "run-3"
