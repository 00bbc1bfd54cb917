"""Adaptive trials (`trials: {min, max, decide}`), proven by counting agent calls: each cell stops at the first look
where its confidence sequence decides, stored trials count, and the outcome never depends on thread timing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from .project import Project, copy_of, template

# decide 0.5, looks after 3, 6, 9, 12 trials: all-pass and all-fail cells decide at 9 (the sequence needs 7 equal
# outcomes at 0.5); a cell alternating pass/fail never leaves 0.5 and is inconclusive at max.
SPEC = """\
skill: skills/a
agent: {kind: command, command: [python3, agent.py]}
trials: {min: 3, max: 12, decide: 0.5}
cases:
  - id: good
    prompt: good
    checks: [{type: contains, needle: PASS}]
  - id: bad
    prompt: bad
    checks: [{type: contains, needle: PASS}]
  - id: mid
    prompt: mid
    checks: [{type: contains, needle: PASS}]
"""

AGENT = """\
import os
from pathlib import Path
env = os.environ
with open(Path(__file__).resolve().parent / "calls.log", "a") as log:
    log.write(env["SKILLMAKE_CASE"] + " " + env["SKILLMAKE_ARM"] + " " + env["SKILLMAKE_TRIAL"] + "\\n")
case, k = env["SKILLMAKE_CASE"], int(env["SKILLMAKE_TRIAL"])
print("PASS" if case == "good" or (case == "mid" and k % 2 == 0) else "no")
"""

FILES = {"skills/a/SKILL.md": "---\nname: a\ndescription: d\n---\nbody\n", "agent.py": AGENT, "a.eval.yaml": SPEC}
FIRST: dict[str, Any] = {}


def _build(root: Path) -> Project:
    project = Project.empty(root, FILES)
    run = project.run("-n", "2")
    FIRST.update(code=run.code, out=run.out, err=run.err, calls=project.calls())
    return project


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return template(tmp_path_factory, "adaptive", _build)


@pytest.fixture
def project(built: Path, tmp_path: Path) -> Project:
    return copy_of(built, tmp_path / "proj")


def _report(project: Project) -> dict[str, Any]:
    return orjson.loads((project.root / ".skillmake/reports/a/report.json").read_bytes())


def _by_case(calls: list[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for line in calls:
        case, _, k = line.split()
        out.setdefault(case, []).append(int(k))
    return {case: sorted(ks) for case, ks in out.items()}


def test_each_cell_stops_at_its_first_decision(built: Path) -> None:
    assert FIRST["code"] == 1, FIRST["out"]  # bad is surely below 0.5, mid is inconclusive (fail by default)
    # 30 calls, not the fixed plan's 36: good and bad stop at the look after 9 trials, mid runs to max
    assert _by_case(FIRST["calls"]) == {"good": list(range(9)), "bad": list(range(9)), "mid": list(range(12))}
    out = str(FIRST["out"])
    assert "adaptive: stopped at 30 of 36 trials" in out
    assert "ran 30 trials" in out
    report = orjson.loads((built / ".skillmake/reports/a/report.json").read_bytes())
    rows = {r["case"]: r for r in report["rows"]}
    assert {c: (r["n"], r["passed"], r["adaptive"]["decision"], r["adaptive"]["used"], r["adaptive"]["saved"])
            for c, r in rows.items()} == {"good": (9, 9, "pass", 9, 3), "bad": (9, 0, "fail", 9, 3),
                                          "mid": (12, 6, "inconclusive", 12, 0)}
    assert report["counts"] == {"graded": 30, "expected": 30}
    assert report["verdict"]["inconclusive"] == 1
    reasons = report["verdict"]["reasons"]
    assert any("'bad' under with_skill: pass rate surely below 0.50 (0/9 passed; decided after 9 of 12" in r
               for r in reasons)
    assert any("'mid' under with_skill: inconclusive" in r for r in reasons)
    assert not any("'good'" in r for r in reasons)
    # a trial that was not needed has no view: no folder past trial-8 for good
    assert sorted(p.name for p in (built / ".skillmake/runs/a/good/with_skill").glob("trial-*")) == \
        [f"trial-{k}" for k in range(9)]


def test_the_viewer_and_benchmark_json_show_each_decision(project: Project) -> None:
    """The viewer's pages: each cell's decision, the verdict's inconclusive count, and no card for a trial not run;
    benchmark.json's configuration: how many cases each decision went to."""
    assert project.run("report").agent_calls == 0  # writes the viewer's static pages
    site = project.root / ".skillmake/site/specs/a"
    spec_page = (site / "index.html").read_text()
    assert '<span class="tag">pass after 9/12</span>' in spec_page
    assert '<span class="tag bad">inconclusive after 12/12</span>' in spec_page
    assert "1 inconclusive" in spec_page and "adaptive: stopped at 30 of 36 trials" in spec_page
    index = (project.root / ".skillmake/site/index.html").read_text()
    assert "1 inconclusive" in index and "2 cell(s) failing with the skill" in index  # bad and mid; good passed
    benchmark = orjson.loads((project.root / ".skillmake/reports/a/benchmark.json").read_bytes())
    config = benchmark["iterations"][-1]["configurations"][0]
    assert config["skillmake"]["adaptive"] == {"pass": 1, "fail": 1, "inconclusive": 1, "undecided": 0,
                                               "trials_saved": 6}
    case_page = (site / "cases/good.html").read_text()
    assert "with_skill · trial 8 " in case_page and "with_skill · trial 9 " not in case_page


def test_a_rerun_and_an_unrelated_edit_cost_nothing(project: Project) -> None:
    again = project.run()
    assert again.agent_calls == 0
    assert "30 trials and 30 grades up to date" in again.out + again.err or again.trials == 0
    project.replace("a.eval.yaml", "prompt: good\n", "prompt: good\n    description: the good one\n")
    project.replace("a.eval.yaml", "    prompt: bad", "    # still bad\n    prompt: bad")
    edited = project.run()
    assert (edited.agent_calls, edited.grades) == (0, 0), edited.out + edited.err


def test_raising_max_runs_only_what_the_sequence_still_needs(project: Project) -> None:
    project.replace("a.eval.yaml", "max: 12", "max: 20")
    explained = project.run("explain")
    assert "would run up to 8 trials" in explained.out and explained.agent_calls == 0
    run = project.run("-n", "2")
    # good and bad stay decided from their stored trials; only mid, undecided at 12, runs on — to its new max
    assert _by_case(project.calls()[-run.agent_calls:]) == {"mid": list(range(12, 20))}
    assert run.agent_calls == 8
    rows = {r["case"]: r for r in _report(project)["rows"]}
    assert (rows["mid"]["n"], rows["mid"]["adaptive"]["decision"]) == (20, "inconclusive")
    assert (rows["good"]["n"], rows["good"]["adaptive"]["used"]) == (9, 9)


def test_the_result_does_not_depend_on_thread_timing(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "p4", FILES)
    run = project.run("-n", "4")
    assert sorted(project.calls()) == sorted(FIRST["calls"])
    assert run.agent_calls == 30
    assert "adaptive: stopped at 30 of 36 trials" in run.out


def test_inconclusive_fails_or_warns_as_the_spec_says(project: Project) -> None:
    text = project.read("a.eval.yaml")
    project.write("a.eval.yaml", text.replace("  - id: bad\n    prompt: bad\n    checks: [{type: contains, needle: "
                                              "PASS}]\n", ""))
    failing = project.run()
    assert (failing.code, failing.agent_calls) == (1, 0)
    assert "inconclusive" in failing.out
    project.replace("a.eval.yaml", "decide: 0.5}", "decide: 0.5, inconclusive: warn}")
    warned = project.run()
    assert (warned.code, warned.agent_calls) == (0, 0), warned.out + warned.err
    assert "ok (1 inconclusive: warn)" in warned.out
    assert "? a: case 'mid' under with_skill: inconclusive" in warned.out
    verdict = _report(project)["verdict"]
    assert verdict["passed"] and verdict["reasons"] == [] and verdict["inconclusive"] == 1
    assert len(verdict["warnings"]) == 1


def test_a_trial_count_on_the_command_line_replaces_the_adaptive_plan(project: Project) -> None:
    run = project.run("--trials", "4")
    assert run.agent_calls == 0  # trials 0-3 of every cell are stored
    report = _report(project)
    assert [r["n"] for r in report["rows"]] == [4, 4, 4]
    assert not any("adaptive" in r for r in report["rows"]) and "adaptive" not in report["spec"]


def test_the_adaptive_flag_runs_a_fixed_count_spec_adaptively(tmp_path: Path) -> None:
    spec = ("skill: skills/a\nagent: {kind: command, command: [python3, agent.py]}\ntrials: 2\n"
            "thresholds: {min_pass_rate: 0.8}\ncases:\n  - id: bad\n    prompt: bad\n"
            "    checks: [{type: contains, needle: PASS}]\n")
    project = Project.empty(tmp_path / "flag", {**FILES, "a.eval.yaml": spec})
    run = project.run("--adaptive")
    # decided below 0.8 (its min_pass_rate) at the first look: 3 trials, where the flag's plan allows 30
    assert run.agent_calls == 3, run.out + run.err
    assert "adaptive: stopped at 3 of 30 trials" in run.out
    row = _report(project)["rows"][0]
    assert (row["n"], row["adaptive"]["decision"], row["adaptive"]["max"]) == (3, "fail", 30)
    fixed = project.run()
    assert fixed.agent_calls == 0 and "adaptive" not in _report(project)["rows"][0]  # back to its 2 trials
    again = project.run(env={"SKILLMAKE_ADAPTIVE": "1"})
    assert again.agent_calls == 0 and _report(project)["rows"][0]["adaptive"]["used"] == 3
