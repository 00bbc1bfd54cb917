"""One run, the same intervals everywhere: report.json, the terminal, JUnit, the HTML report, benchmark.json and the
viewer's static pages show the 95% Wilson intervals and the paired baseline delta computed once, in results; and
a min_pass_rate on the lower bound fails a run its point estimate would pass."""

from __future__ import annotations

import math
import re
from html import escape
from pathlib import Path
from xml.etree import ElementTree as ET

import orjson

from .project import Project

# Passes trial k of a case and arm while k is below that cell's count: 7/10 and 9/10 with the skill, 2/10 and 5/10
# without it.
AGENT = '''\
import os
passes = {("seven", "with_skill"): 7, ("seven", "without_skill"): 2, ("nine", "with_skill"): 9,
          ("nine", "without_skill"): 5}
env = os.environ
k = int(env["SKILLMAKE_TRIAL"])
print("PASS" if k < passes[(env["SKILLMAKE_CASE"], env["SKILLMAKE_ARM"])] else "FAIL")
'''

SPEC = '''\
skill: skills/sure
agent: {kind: command, command: [python3, agent.py]}
trials: 10
baseline: true
thresholds:
  min_pass_rate: {value: 0.75, on: lower}
cases:
  - id: seven
    prompt: go seven
    checks: [{type: contains, needle: PASS}]
  - id: nine
    prompt: go nine
    checks: [{type: contains, needle: PASS}]
'''

Z = 1.959963984540054


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson (1927), written out: (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n)."""
    p = successes / n
    centre, spread = p + Z**2 / (2 * n), Z * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2))
    return (centre - spread) / (1 + Z**2 / n), (centre + spread) / (1 + Z**2 / n)


def shown(low: float, high: float, *, signed: bool = False) -> str:
    f = "{:+.2f}" if signed else "{:.2f}"
    return f"[{f.format(low)}, {f.format(high)}]"


def test_one_run_shows_the_same_intervals_everywhere(tmp_path: Path) -> None:
    project = Project.empty(tmp_path, {
        "agent.py": AGENT, "sure.eval.yaml": SPEC,
        "skills/sure/SKILL.md": "---\nname: sure\ndescription: says PASS\n---\nSay PASS.\n"})
    run = project.run()
    # with_skill passes 16/20 (0.80 ≥ 0.75), but the lower end of its interval is 0.58: the gate fails.
    assert run.code == 1, run.out + run.err
    reports = tmp_path / ".skillmake/reports/sure"
    report = orjson.loads((reports / "report.json").read_bytes())
    rows = {(r["case"], r["arm"]): r for r in report["rows"]}

    expected = {("seven", "with_skill"): (7, 10), ("seven", "without_skill"): (2, 10),
                ("nine", "with_skill"): (9, 10), ("nine", "without_skill"): (5, 10)}
    for cell, (passed, n) in expected.items():
        low, high = wilson(passed, n)
        ci = rows[cell]["pass_rate_ci"]
        assert (ci["low"], ci["high"]) == (round(low, 6), round(high, 6)), cell
    assert shown(*wilson(7, 10)) == "[0.40, 0.89]"  # 7/10 → [0.3968, 0.8922]
    arm_low, arm_high = wilson(16, 20)
    arm = report["arms"]["with_skill"]
    assert (arm["pass_rate"], arm["pass_rate_ci"]) == (0.8, {"low": round(arm_low, 6), "high": round(arm_high, 6)})

    # Paired over the two cases: d = 0.7 − 0.2 = 0.5 and 0.9 − 0.5 = 0.4; mean 0.45; sd = √((0.05² + 0.05²) / 1)
    # = 0.0707; se = sd / √2 = 0.05; interval 0.45 ± 1.96 · 0.05.
    paired = report["baseline"]["paired"]
    assert paired["cases"] == 2 and paired["mean"] == 0.45 and paired["se"] == 0.05
    d_low, d_high = 0.45 - Z * 0.05, 0.45 + Z * 0.05
    assert (paired["ci"]["low"], paired["ci"]["high"]) == (round(d_low, 6), round(d_high, 6))

    gate = report["thresholds"][0]
    assert (gate["metric"], gate["bound"], gate["passed"]) == ("min_pass_rate", "lower", False)
    message = (f"sure: with_skill pass rate lower bound {arm_low:.2f} < min_pass_rate 0.75 (pass rate 0.80, "
               f"95% Wilson interval {shown(arm_low, arm_high)} over 20 trials)")
    assert gate["message"] == message and report["verdict"]["reasons"] == [message]

    # The terminal: each row's rate and interval, the arms' and the paired delta's, the gate's reason.
    out = run.out
    assert re.search(r"seven\s+with_skill\s+7/10\s+0\.70 \[0\.40, 0\.89\]", out), out
    assert re.search(r"nine\s+without_skill\s+5/10\s+0\.50 " + re.escape(shown(*wilson(5, 10))), out), out
    assert (f"95% intervals: with_skill {shown(arm_low, arm_high)}; without_skill {shown(*wilson(7, 20))}; "
            f"baseline Δ +0.45 {shown(d_low, d_high, signed=True)} paired over 2 cases, se 0.05") in out
    assert f"✗ {message}" in out

    # JUnit: the failing cell's message, a passing baseline's output, the suite's properties, the gate.
    junit = ET.parse(reports / "junit.xml").getroot()
    cases = {(c.get("classname"), c.get("name")): c for c in junit.iter("testcase")}
    failure = cases[("sure.with_skill", "seven")].find("failure")
    assert failure is not None
    assert failure.get("message") == "7/10 trials passed (pass rate 0.70, 95% Wilson interval [0.40, 0.89])"
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert props["with_skill.pass_rate_ci"] == shown(arm_low, arm_high)
    assert props["baseline.delta.pass_rate_ci"] == f"{shown(d_low, d_high, signed=True)} paired over 2 cases, se 0.05"
    verdict = cases[("sure.verdict", "verdict")].find("failure")
    assert verdict is not None and verdict.get("message") == message

    # The HTML report: the same intervals, the paired delta's, the gate's message.
    html = (reports / "report.html").read_text()
    for passed, n in [(7, 10), (2, 10), (9, 10), (5, 10), (16, 20), (7, 20)]:
        assert shown(*wilson(passed, n)) in html, (passed, n)
    assert f"{shown(d_low, d_high, signed=True)} paired over 2 cases, se 0.05" in html
    assert escape(message) in html

    # benchmark.json: skill-creator's shape, with the report's numbers under skillmake's own key.
    bench = orjson.loads((reports / "benchmark.json").read_bytes())["iterations"][-1]
    configs = {c["name"]: c for c in bench["configurations"]}
    assert configs["with_skill"]["skillmake"] == {"n": 20, "passed": 16, "pass_rate": 0.8,
                                                  "pass_rate_ci": arm["pass_rate_ci"]}
    assert bench["skillmake"]["baseline"] == {"pass_rate_delta": 0.45, "paired": paired}

    # The viewer's static pages.
    site = tmp_path / "site"
    assert project.run("view", "--export", str(site)).code == 0
    pages = "".join(p.read_text() for p in site.rglob("*.html"))
    assert shown(arm_low, arm_high) in pages and "0.70 [0.40, 0.89]" in pages
    assert f"{shown(d_low, d_high, signed=True)} paired over 2 cases, se 0.05" in pages


def test_a_point_threshold_keeps_its_meaning_and_the_bound_is_named_only_when_asked(tmp_path: Path) -> None:
    project = Project.empty(tmp_path, {
        "agent.py": AGENT, "sure.eval.yaml": SPEC.replace("{value: 0.75, on: lower}", "0.75"),
        "skills/sure/SKILL.md": "---\nname: sure\ndescription: says PASS\n---\nSay PASS.\n"})
    run = project.run()
    assert run.code == 0, run.out + run.err
    report = orjson.loads((tmp_path / ".skillmake/reports/sure/report.json").read_bytes())
    gate = report["thresholds"][0]
    assert (gate["bound"], gate["value"], gate["passed"]) == ("point", 0.8, True)
    assert gate["message"] == "sure: with_skill pass rate 0.80 >= min_pass_rate 0.75"
    # Stating the bound explicitly as the point is the same gate; the edit re-renders with no call.
    project.replace("sure.eval.yaml", "min_pass_rate: 0.75", "min_pass_rate: {value: 0.75, on: point}")
    again = project.run()
    assert (again.code, again.agent_calls) == (0, 0)
    # On the upper bound, a threshold above the point passes: 0.80 < 0.85 ≤ the upper end 0.92.
    project.replace("sure.eval.yaml", "{value: 0.75, on: point}", "{value: 0.85, on: upper}")
    upper = project.run()
    assert (upper.code, upper.agent_calls) == (0, 0), upper.out + upper.err
    report = orjson.loads((tmp_path / ".skillmake/reports/sure/report.json").read_bytes())
    assert report["thresholds"][0]["bound"] == "upper" and report["thresholds"][0]["passed"]
    assert report["thresholds"][0]["value"] == round(wilson(16, 20)[1], 6)
