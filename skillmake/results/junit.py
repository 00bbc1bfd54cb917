"""JUnit XML: one testcase per case × arm, failures listing the failed checks with their evidence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from xml.etree import ElementTree as ET

from skillmake.results.report import ci_text, paired_text


def _rate(row: Mapping[str, Any]) -> str:
    """"pass rate 0.50, 95% Wilson interval [0.09, 0.91]" from the report's numbers (empty for an older report)."""
    ci = ci_text(row.get("pass_rate_ci"))
    return f"pass rate {row['pass_rate']:.2f}, 95% Wilson interval {ci}" if ci and row["pass_rate"] is not None \
        else ""


def _properties(suite: ET.Element, report: Mapping[str, Any]) -> None:
    """The suite's <properties>: each arm's pass rate and 95% interval, and the paired baseline delta's."""
    props = []
    for name, arm in report["arms"].items():
        if arm.get("pass_rate_ci"):
            props += [(f"{name}.pass_rate", f"{arm['pass_rate']:.2f}"),
                      (f"{name}.pass_rate_ci", ci_text(arm["pass_rate_ci"]))]
    baseline = report.get("baseline") or {}
    paired = paired_text(baseline.get("paired"))
    if paired and baseline["delta"]["pass_rate"] is not None:
        props += [("baseline.delta.pass_rate", f"{baseline['delta']['pass_rate']:+.2f}"),
                  ("baseline.delta.pass_rate_ci", paired)]
    if props:
        holder = ET.SubElement(suite, "properties")
        for name, value in props:
            ET.SubElement(holder, "property", name=name, value=value)


def _failure_text(row: Mapping[str, Any]) -> str:
    lines = []
    for item in row["failures"]:
        label = f"[{item['id']}] " if item["id"] else ""
        lines.append(f"trial {item['k']}: {label}{item['text']} — {item['evidence']}")
    return "\n".join(lines)


def _tci(query: Mapping[str, Any]) -> str:
    ci = ci_text(query.get("trigger_rate_ci"))
    return f" (trigger rate {query['trigger_rate']:.2f}, 95% Wilson interval {ci})" if ci else ""


def _trigger_cases(suite: ET.Element, spec: str, section: Mapping[str, Any] | None, counts: dict[str, int]) -> None:
    """One testcase per trigger query (classname <spec>.trigger): it fails when its trigger rate is on the wrong
    side of the threshold; skipped when it has no completed run (or the trigger tests did not run)."""
    for q in (section or {}).get("queries", ()):
        counts["tests"] += 1
        case = ET.SubElement(suite, "testcase", classname=f"{spec}.trigger", name=q["id"])
        expect = "should trigger" if q["should_trigger"] else "should not trigger"
        if not q["runs"]:
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=f"no completed run ({q['errors']} without a result)")
        elif not q["pass"]:
            counts["failures"] += 1
            failure = ET.SubElement(case, "failure", type="TriggerFailure",
                                    message=f"{expect}: fired in {q['triggers']}/{q['runs']} runs{_tci(q)}")
            failure.text = f"query: {q['query']}"
        else:
            out = ET.SubElement(case, "system-out")
            out.text = f"{expect}: fired in {q['triggers']}/{q['runs']} runs{_tci(q)}"


def _adaptive_case(case: ET.Element, report: Mapping[str, Any], row: Mapping[str, Any],
                   counts: dict[str, int]) -> None:
    """An adaptive cell (trials: {min, max, decide}) is what its sequence decided: pass, a failure below `decide`,
    or inconclusive — a failure of its own type under `inconclusive: fail`, skipped (with why) under `warn`."""
    block = row["adaptive"]
    rate = f" ({_rate(row)})" if _rate(row) else ""
    said = f"{row['passed']}/{row['n']} trials passed{rate}"
    decide = f"{block['decide']:.2f}"
    if block["decision"] == "pass":
        ET.SubElement(case, "system-out").text = (f"{said}; surely above {decide}, decided after {block['used']} of "
                                                  f"{block['max']} trials")
    elif block["decision"] == "inconclusive" and (report["spec"].get("adaptive") or {}).get("inconclusive") == "warn":
        counts["skipped"] += 1
        ET.SubElement(case, "skipped", message=f"inconclusive after {block['max']} trials: {said}; it may be either "
                                               f"side of {decide}")
    else:
        counts["failures"] += 1
        kind, what = {"fail": ("EvalFailure", f"surely below {decide}, decided after {block['used']} of "
                                              f"{block['max']} trials"),
                      "inconclusive": ("Inconclusive", f"inconclusive after {block['max']} trials: it may be either "
                                                       f"side of {decide}")}.get(
            block["decision"], ("EvalFailure", "undecided: trials are missing"))
        failure = ET.SubElement(case, "failure", type=kind, message=f"{said}; {what}")
        failure.text = _failure_text(row)


def junit_xml(reports: Sequence[Mapping[str, Any]]) -> str:
    """A <testsuites> document: one <testsuite> per spec, one <testcase> per case × arm.

    A cell fails unless every one of its trials passed; a cell with no graded trial is skipped;
    a cell of an arm without the skill (the baseline) never fails, its results go to system-out.
    The spec's verdict is one more testcase, "verdict", failing with every reason when the spec
    fails (thresholds, required cases, trials that errored or have no grade), so CI shows why the
    run failed even when every case passed.
    """
    root = ET.Element("testsuites", name="skillmake")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for report in reports:
        spec = report["spec"]["name"]
        suite = ET.SubElement(root, "testsuite", name=spec)
        _properties(suite, report)
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        for row in report["rows"]:
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=f"{spec}.{row['arm']}", name=row["case"])
            if row["n"] == 0:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message="not run (not selected)" if row.get("not_selected")
                              else "no graded trials")
            elif row.get("adaptive") and report["arms"][row["arm"]]["skill"]:
                _adaptive_case(case, report, row, counts)
            elif not report["arms"][row["arm"]]["skill"]:
                # A baseline is expected to fail: it is measured, not gated, so never a CI failure.
                out = ET.SubElement(case, "system-out")
                rate = f" ({_rate(row)})" if _rate(row) else ""
                out.text = f"baseline: {row['passed']}/{row['n']} trials passed{rate}\n{_failure_text(row)}".rstrip()
            elif row["passed"] < row["n"]:
                counts["failures"] += 1
                rate = f" ({_rate(row)})" if _rate(row) else ""
                failure = ET.SubElement(case, "failure", type="EvalFailure",
                                        message=f"{row['passed']}/{row['n']} trials passed{rate}")
                failure.text = _failure_text(row)
            elif _rate(row):
                ET.SubElement(case, "system-out").text = f"{row['passed']}/{row['n']} trials passed ({_rate(row)})"
        _trigger_cases(suite, spec, report.get("triggers"), counts)
        verdict = report["verdict"]
        counts["tests"] += 1
        case = ET.SubElement(suite, "testcase", classname=f"{spec}.verdict", name="verdict")
        if not verdict["passed"]:
            counts["failures"] += 1
            reasons = verdict["reasons"]
            failure = ET.SubElement(case, "failure", type="VerdictFailure",
                                    message=reasons[0] if reasons else f"{spec} failed")
            failure.text = "\n".join(reasons)
        if verdict.get("warnings"):
            ET.SubElement(case, "system-out").text = "\n".join(f"warning: {w}" for w in verdict["warnings"])
        for name, value in counts.items():
            suite.set(name, str(value))
            totals[name] += value
        suite.set("errors", "0")
    for name, value in totals.items():
        root.set(name, str(value))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
