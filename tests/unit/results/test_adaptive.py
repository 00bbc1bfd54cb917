"""A report's adaptive rows, gates and calls-saved line (results/adaptive.py), from grade records built here."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from skillmake.results import adaptive
from skillmake.results.verdict import spec_verdict
from skillmake.spec.model import Adaptive, AgentConfig, Arm, Case, Skill, Spec

RULE = Adaptive(least=3, most=12, decide=0.5, batch=3)


def _spec(rule: Adaptive = RULE, *, baseline: bool = False) -> Spec:
    agent = AgentConfig(kind="command", command=("true",))
    arms = (Arm(name="with_skill", agent=agent, skill=True),) + (
        (Arm(name="without_skill", agent=agent, skill=False),) if baseline else ())
    skill = Skill(name="s", path="/p/s", kind="folder")
    return Spec(name="s", path="/p/s.eval.yaml", relpath="s.eval.yaml", skill=skill, agent=agent, arms=arms,
                cases=(Case(id="c", index=0, prompt="p"),), trials=rule.most, adaptive=rule)


def _grades(outcomes: list[str]) -> list[dict[str, Any]]:
    return [{"labels": {"k": k, "case": "c", "arm": "with_skill"}, "outcome": o} for k, o in enumerate(outcomes)]


def _row(outcomes: list[str], rule: Adaptive = RULE, arm: str = "with_skill") -> dict[str, Any]:
    block, expected = adaptive.row_block(rule, _grades(outcomes))
    passed = outcomes.count("pass")
    return {"case": "c", "arm": arm, "n": len(outcomes), "passed": passed, "expected": expected,
            "pass_rate": passed / len(outcomes) if outcomes else None, "adaptive": block}


@pytest.mark.parametrize(("outcomes", "decision", "used", "saved", "expected"), [
    (["pass"] * 9, "pass", 9, 3, 9),
    (["fail"] * 9, "fail", 9, 3, 9),
    (["cheat"] * 9, "fail", 9, 3, 9),  # a cheat is a verdict, and not a pass
    (["pass", "fail"] * 6, "inconclusive", 12, 0, 12),
    (["pass"] * 4, "undecided", None, 0, 6),  # undecided after 3, the look after 6 still missing
    (["pass", "error", "pass"], "undecided", None, 0, 3),  # an error is no evidence: the cell waits for it
])
def test_row_block(outcomes: list[str], decision: str, used: int | None, saved: int, expected: int) -> None:
    block, need = adaptive.row_block(RULE, _grades(outcomes))
    assert (block["decision"], block["used"], block["saved"], need) == (decision, used, saved, expected)
    assert block["max"] == 12 and block["decide"] == 0.5


def test_gates_pass_fail_and_inconclusive_by_the_spec_setting() -> None:
    spec = _spec()
    good, bad, mid = _row(["pass"] * 9), _row(["fail"] * 9), _row(["pass", "fail"] * 6)
    gates = adaptive.gates(spec, [good, bad, mid])
    assert [g["passed"] for g in gates] == [True, False, False]
    assert gates[0]["message"] == ("s: case 'c' under with_skill: pass rate surely above 0.50 (9/9 passed; decided "
                                   "after 9 of 12 trials)")
    assert "surely below 0.50 (0/9 passed" in gates[1]["message"]
    assert "inconclusive: after 12 of 12 trials (6/12 passed)" in gates[2]["message"]
    warn = _spec(Adaptive(least=3, most=12, decide=0.5, batch=3, inconclusive="warn"))
    assert [g["passed"] for g in adaptive.gates(warn, [good, bad, mid])] == [True, False, True]
    assert adaptive.warnings(warn, [mid]) == [adaptive.gates(warn, [mid])[0]["message"]]
    assert adaptive.warnings(spec, [mid]) == []


def test_the_baseline_arm_is_sampled_adaptively_but_not_gated() -> None:
    spec = _spec(baseline=True)
    assert adaptive.gates(spec, [_row(["fail"] * 9, arm="without_skill")]) == []
    assert adaptive.inconclusive(spec, [_row(["pass", "fail"] * 6, arm="without_skill")]) == 0


def test_verdict_carries_the_inconclusive_count_and_warnings() -> None:
    warn = _spec(Adaptive(least=3, most=12, decide=0.5, batch=3, inconclusive="warn"))
    mid = _row(["pass", "fail"] * 6)
    report = {"rows": [mid], "counts": {"expected": 12, "graded": 12},
              "thresholds": adaptive.gates(warn, [mid])}
    verdict = spec_verdict(warn, report, [], [])
    assert verdict["passed"] and verdict["inconclusive"] == 1 and len(verdict["warnings"]) == 1
    # no default gate with adaptive trials: the failed trials of an inconclusive case are not "every trial must pass"
    assert verdict["reasons"] == []


def test_saved_line() -> None:
    report = {"rows": [_row(["pass"] * 9), _row(["fail"] * 9), _row(["pass", "fail"] * 6)]}
    assert adaptive.saved_line(report) == ("adaptive: stopped at 30 of 36 trials (3 cells of up to 12; 2 decided, "
                                           "1 inconclusive); 6 trials saved")
    assert adaptive.saved_line({"rows": [{"case": "c"}]}) is None


def test_an_undecided_cell_has_saved_nothing_and_its_missing_trials_are_not_run_yet() -> None:
    """A run stopped before any look (Ctrl-C): the line said 'stopped at 0 of 36 trials …; 36 trials saved', the
    verdict '3 of 3 trials have no grade' and the gate '0/0 passed of the 0 trials graded so far'. Nothing was
    saved (the cells are undecided), and the trials they need were never run."""
    spec = _spec()
    fresh, decided, waiting = _row([]), _row(["pass"] * 9), _row(["pass"] * 4)
    line = adaptive.saved_line({"rows": [fresh, decided, waiting]})
    assert line == ("adaptive: 13 of up to 36 trials graded so far (3 cells of up to 12; 1 decided, 0 inconclusive, "
                    "2 undecided: `skillmake` runs them on to a decision); 3 trials saved by the decided ones")
    assert adaptive.gates(spec, [fresh])[0]["message"] == (
        "s: case 'c' under with_skill: undecided: none of the 3 trials before its first look has a grade yet; run "
        "`skillmake`")
    report = {"rows": [fresh], "counts": {"expected": 3, "graded": 0}, "thresholds": adaptive.gates(spec, [fresh])}
    reasons = spec_verdict(spec, report, [], [])["reasons"]
    assert reasons[0] == ("s: 3 of the 3 trials its cases need by their next look have no grade yet (not run: the "
                          "run stopped early, or max was raised); run `skillmake` to run them")
    assert adaptive.missing_reason(dataclasses.replace(spec, adaptive=None), 1, 3) is None  # fixed: its own words
