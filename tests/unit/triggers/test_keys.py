"""Trigger tests: query ids, what a trigger key holds (and does not), the stand-in skill, and the report section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from skillmake.results.triggers import trigger_gates, trigger_reasons, trigger_section
from skillmake.run.keys import KeyMaker
from skillmake.spec.loader import load_spec
from skillmake.spec.model import AgentConfig, Thresholds, TriggerQuery
from skillmake.spec.skillfiles import split_frontmatter
from skillmake.spec.trigger_spec import query_ids, query_items, slug
from skillmake.triggers.keys import TriggerKeys
from skillmake.triggers.stub import stub_text

SPEC = """\
skill: skills/kids
agent: {kind: command, command: [python3, agent.py]}
cases:
  - {id: one, prompt: hi, checks: [{type: contains, needle: hi}]}
trigger_tests:
  agent: {kind: claude-code, model: claude-x}
  runs: 3
  distractors: [{name: weather, description: Forecasts}]
  should_trigger: [find kid activities, {query: fun for children, id: fun}]
  should_not_trigger: [what's the weather]
"""


def _spec(tmp_path: Path, skill: str = "---\nname: kids\ndescription: Kids activities\n---\nBody.\n",
          spec: str = SPEC) -> Any:
    (tmp_path / "skills" / "kids").mkdir(parents=True, exist_ok=True)
    (tmp_path / "skills" / "kids" / "SKILL.md").write_text(skill)
    (tmp_path / "agent.py").write_text("print(1)\n")
    (tmp_path / "kids.eval.yaml").write_text(spec)
    return load_spec(str(tmp_path / "kids.eval.yaml"), root=str(tmp_path))


def test_query_ids_are_slugs_made_unique_and_written_ids_win() -> None:
    data = {"should_trigger": ["Find kid activities!", "find kid   activities?",
                               {"query": "x", "id": "find-kid-activities-2"}],
            "should_not_trigger": ["", "Ünïcode only ☃"]}
    assert query_ids(query_items(data)) == ["find-kid-activities", "find-kid-activities-3", "find-kid-activities-2",
                                            "query", "n-code-only"]
    assert slug("one two three four five six seven eight") == "one-two-three-four-five-six"


def test_the_model_keeps_order_expectations_and_the_trigger_agent(tmp_path: Path) -> None:
    tests = _spec(tmp_path).trigger_tests
    assert [(q.id, q.should_trigger, q.index) for q in tests.queries] == [
        ("find-kid-activities", True, 0), ("fun", True, 1), ("what-s-the-weather", False, 2)]
    assert (tests.agent.kind, tests.agent.model, tests.runs, tests.threshold) == ("claude-code", "claude-x", 3, 0.5)
    assert tests.runnable and [d.name for d in tests.distractors] == ["weather"]


def _keys(tmp_path: Path, **kw: Any) -> list[str]:
    spec = _spec(tmp_path, **kw)
    keys = TriggerKeys(KeyMaker(str(tmp_path)))
    return [keys.key(spec, spec.trigger_tests, q, k).key for q in spec.trigger_tests.queries for k in range(3)]


def test_the_key_holds_the_description_never_the_body(tmp_path: Path) -> None:
    before = _keys(tmp_path)
    assert len(set(before)) == 9
    assert _keys(tmp_path, skill="---\nname: kids\ndescription: Kids activities\n---\nA new body.\n") == before
    (tmp_path / "skills" / "kids" / "notes.md").write_text("a file beside SKILL.md\n")
    assert _keys(tmp_path) == before
    changed = _keys(tmp_path, skill="---\nname: kids\ndescription: Kids activities and more\n---\nBody.\n")
    assert not set(changed) & set(before)
    assert _keys(tmp_path, skill="---\nname: kids\ndescription: Kids activities\ndisable-model-invocation: true\n"
                                  "---\nBody.\n") != before
    # Runs and threshold say how many samples to draw and how to count them: not part of any key.
    assert _keys(tmp_path, spec=SPEC.replace("runs: 3", "runs: 3\n  threshold: 0.8")) == before
    assert _keys(tmp_path, spec=SPEC.replace("Forecasts", "'Forecasts, everywhere'")) != before
    assert _keys(tmp_path, spec=SPEC.replace("model: claude-x", "model: claude-y")) != before


def test_the_stand_in_is_valid_frontmatter_whatever_the_description() -> None:
    hostile = 'Say "hi": then\n---\nname: evil\n# not a comment'
    meta, body = split_frontmatter(stub_text("kids", hostile, {"disable-model-invocation": True}))
    assert meta == {"name": "kids", "description": hostile, "disable-model-invocation": True}
    assert "only the name and the description are under test" in body
    assert yaml.safe_load(stub_text("a", "b").split("---")[1]) == {"name": "a", "description": "b"}


def _q(qid: str, should: bool, i: int = 0) -> TriggerQuery:
    return TriggerQuery(id=qid, query=qid.replace("-", " "), should_trigger=should, index=i)


def _record(fired: list[str], outcome: str = "completed", key: str = "sha256:" + "0" * 64) -> dict[str, Any]:
    return {"key": key, "outcome": outcome, "activation": {"skills": fired}, "usage": {}, "error": "boom",
            "run_id": "r1"}


def test_rates_pass_and_counts_are_over_runs(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    pos, pos2, neg = (q for q in spec.trigger_tests.queries)
    runs = [(pos, 0, _record(["kids"])), (pos, 1, _record([])), (pos, 2, _record(["kids"])),
            (pos2, 0, _record([])), (pos2, 1, _record(["weather"])), (pos2, 2, _record([], "timeout")),
            (neg, 0, _record(["kids"])), (neg, 1, _record([])), (neg, 2, None)]
    section = trigger_section(spec, runs, skill="kids")
    rows = {q["id"]: (q["triggers"], q["runs"], q["errors"], q["trigger_rate"], q["pass"]) for q in section["queries"]}
    assert rows == {"find-kid-activities": (2, 3, 0, 0.666667, True), "fun": (0, 2, 1, 0.0, False),
                    "what-s-the-weather": (1, 2, 1, 0.5, False)}  # 1/2 reaches the 0.5 threshold: it triggered
    s = section["summary"]
    assert (s["tp"], s["fn"], s["fp"], s["tn"]) == (2, 3, 1, 1)
    assert (s["precision"], s["recall"], s["f1"]) == (0.666667, 0.4, 0.5)
    assert (s["passed"], s["failed"], s["accuracy"], s["pass_rate"]) == (1, 2, 0.428571, 0.333333)
    assert section["false_positives"] == ["what-s-the-weather"]
    assert [e["query"] for e in section["errors"]] == ["fun"]
    reasons = trigger_reasons(spec, section)
    assert reasons[0].startswith("kids: 1 trigger trial(s) ended in error or timeout (retried next run); first, fun "
                                 "run 2: boom")
    assert reasons[1] == "kids: 1 trigger trial(s) have not run"
    assert reasons[2].startswith("kids: no trigger thresholds set, so every query must pass: 2 of 3 failed: fun "
                                 "(0/2, should trigger), what-s-the-weather (1/2, should not trigger)")


def test_declared_gates_replace_the_every_query_rule(tmp_path: Path) -> None:
    spec = _spec(tmp_path, spec=SPEC.replace("cases:", "thresholds: {min_trigger_recall: 0.5, min_trigger_f1: 0.9}\n"
                                                        "cases:"))
    pos, pos2, neg = spec.trigger_tests.queries
    runs = [(q, k, _record(["kids"] if q.should_trigger else [])) for q in (pos, pos2, neg) for k in range(3)]
    runs[3] = (pos2, 0, _record([]))  # one miss: recall 5/6
    section = trigger_section(spec, runs, skill="kids")
    gates = {g.metric: (g.value, g.passed) for g in trigger_gates(spec, section)}
    assert gates == {"min_trigger_recall": (0.833333, True), "min_trigger_f1": (0.909091, True)}
    assert trigger_reasons(spec, section) == []


def test_precision_and_recall_follow_skill_creator_when_nothing_was_predicted() -> None:
    from skillmake.spec.model import Skill, Spec, TriggerTests

    tests = TriggerTests(queries=(_q("no-one", False),), agent=AgentConfig(kind="claude-code"), runs=2)
    spec = Spec(name="s", path="/p/s.eval.yaml", relpath="s.eval.yaml", skill=Skill(name="s", path="/p", kind="folder"),
                agent=AgentConfig(kind="command"), arms=(), cases=(), trigger_tests=tests, thresholds=Thresholds())
    section = trigger_section(spec, [(tests.queries[0], 0, _record([])), (tests.queries[0], 1, _record([]))], skill="s")
    assert (section["summary"]["precision"], section["summary"]["recall"]) == (1.0, 1.0)


@pytest.mark.parametrize("kind", ["command", "anthropic", "openai"])
def test_an_agent_without_activation_is_reported_as_not_run(tmp_path: Path, kind: str) -> None:
    extra = "command: [python3, agent.py]" if kind == "command" else "model: m"
    spec = _spec(tmp_path, spec=SPEC.replace("agent: {kind: claude-code, model: claude-x}",
                                             f"agent: {{kind: {kind}, {extra}}}"))
    section = trigger_section(spec, [], skill="kids")
    assert section["skipped"].startswith(f"the {kind} agent shows no skill activation")
    assert trigger_reasons(spec, section) == [] and trigger_gates(spec, section) == []


def test_pins_at_the_edges(tmp_path: Path) -> None:
    """A rate exactly at the threshold fires; a run without a result has no triggered value; with neither precision
    nor recall, F1 is 0; a spec without a skill, or with a prompt file, says why nothing ran."""
    spec = _spec(tmp_path)
    pos, pos2, neg = spec.trigger_tests.queries
    runs = [(pos, 0, _record(["kids"])), (pos, 1, _record([])), (pos, 2, _record([], "error")),
            (pos2, 0, _record([])), (neg, 0, _record(["kids"]))]
    section = trigger_section(spec, runs, skill="kids")
    first = section["queries"][0]
    assert (first["trigger_rate"], first["pass"]) == (0.5, True)
    assert [t["triggered"] for t in first["trials"]] == [True, False, None]
    none = trigger_section(spec, [(pos2, 0, _record([])), (neg, 0, _record(["kids"]))], skill="kids")
    assert (none["summary"]["precision"], none["summary"]["recall"], none["summary"]["f1"]) == (0.0, 0.0, 0.0)
    from dataclasses import replace

    from skillmake.results.triggers import skip_reason
    from skillmake.spec.model import Skill

    assert skip_reason(replace(spec, skill=Skill(name="none", path=spec.path, kind="none"))) is not None
    assert skip_reason(replace(spec, skill=Skill(name="p", path="/p/prompt.xml", kind="prompt"))) is not None
    assert skip_reason(spec) is None


def test_no_run_with_a_result_is_no_result_not_a_perfect_score(tmp_path: Path) -> None:
    """Issue 20 §5: every run erred (tp = fp = fn = 0): precision, recall and F1 are "no result", not 1.00, and a
    should-not-trigger query is not called a false positive."""
    from skillmake.results.summary import trigger_lines

    spec = _spec(tmp_path)
    error = _record([], "error")
    error["error"] = ("claude-code has no credentials; set ANTHROPIC_API_KEY, or create a token with "
                      "`claude setup-token`, export it as CLAUDE_CODE_OAUTH_TOKEN and add `pass_env` " + "x" * 200)
    section = trigger_section(spec, [(q, k, error) for q in spec.trigger_tests.queries for k in range(2)],
                              skill="kids")
    summary = section["summary"]
    assert (summary["precision"], summary["recall"], summary["f1"], summary["accuracy"]) == (None, None, None, None)
    assert section["false_positives"] == []
    lines = trigger_lines(section)
    assert lines[0].endswith("0/3 queries pass; no result (no run finished)")
    assert all("false positive" not in line and "missed" not in line for line in lines), lines
    assert all(line.rstrip().endswith("✗ no result (2 erred)") for line in lines[2:]), lines
    assert trigger_gates(spec, section) == []  # (no min_trigger_* declared)
    # The error's whole text, its fix at the end included, reaches the reason.
    assert trigger_reasons(spec, section)[0].endswith("x" * 200)


def test_recall_has_no_result_when_no_should_trigger_run_finished(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    pos, pos2, neg = spec.trigger_tests.queries
    section = trigger_section(spec, [(pos, 0, _record([], "error")), (pos2, 0, _record([], "error")),
                                     (neg, 0, _record([]))], skill="kids")
    assert (section["summary"]["precision"], section["summary"]["recall"]) == (1.0, None)
    assert section["summary"]["f1"] is None
