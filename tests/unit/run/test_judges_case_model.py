"""A case's own judge model (eva's `cases[].judge.model`, native `cases[].judge.model`): the run's --judge-model
first, then the case's, then the spec's; and a spec whose cases name none keeps every key it had."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillmake.core.errors import SpecErrors
from skillmake.run.grade import judge_part
from skillmake.run.judges.preflight import judge_problems
from skillmake.run.judges.resolve import choose, judge_key
from skillmake.run.keys import KeyMaker, grade_part
from skillmake.spec.loader import load_spec
from skillmake.spec.model import Spec

PLAIN = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
judge: {model: claude-haiku-4-5}
baseline: true
cases:
  - id: a
    prompt: do it
    rubric: Is it done?
    expectations: [The output says done]
"""
# Computed by the code before cases had a judge model of their own (issue 10, before the third wave).
PLAIN_JUDGE_PART = "sha256:8ad92a17433d87a2fcbf224563a0d468432e1f95f43200dd554cc346b3913c48"
PLAIN_GRADE_PART = "sha256:94c1d1be6f4616f43c60ad2ac5dd82acaa3adb1070b8ac1846d948f6e428e8ee"
PLAIN_TRIAL_KEY = "sha256:aebbdaabf6510501bb94a7e7f2d66e21cefa9b8c1dce5b047608c2b7e71403dc"

TWO = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
judge: {model: claude-haiku-4-5}
cases:
  - id: a
    prompt: do it
    rubric: Is it done?
  - id: b
    prompt: do that
    rubric: Is that done?
    judge: {model: claude-opus-4-7}
"""


def load(root: Path, text: str) -> Spec:
    if not (root / "skills/s/SKILL.md").exists():
        (root / "skills/s").mkdir(parents=True)
        (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
        (root / "agent.py").write_text("print('hi')\n")
    (root / "p.eval.yaml").write_text(text)
    return load_spec(str(root / "p.eval.yaml"), root=str(root))


def test_a_spec_whose_cases_name_no_judge_model_keeps_its_keys(tmp_path: Path) -> None:
    spec = load(tmp_path, PLAIN)
    case = spec.cases[0]
    assert case.judge_model is None
    assert judge_part(spec, case).digest == PLAIN_JUDGE_PART
    assert grade_part(spec, case).digest == PLAIN_GRADE_PART
    assert KeyMaker(str(tmp_path)).trial_key(spec, case, spec.arms[0], 0).key == PLAIN_TRIAL_KEY


def test_the_spec_s_model_written_on_its_case_judges_alike(tmp_path: Path) -> None:
    """Where the model is written changes nothing: the judge part holds the resolved model, not its place."""
    moved = PLAIN.replace("judge: {model: claude-haiku-4-5}\n", "").replace(
        "    rubric:", "    judge: {model: claude-haiku-4-5}\n    rubric:")
    spec = load(tmp_path, moved)
    assert spec.cases[0].judge_model == "claude-haiku-4-5" and spec.judge.model is None
    assert judge_part(spec, spec.cases[0]).digest == PLAIN_JUDGE_PART
    assert grade_part(spec, spec.cases[0]).digest == PLAIN_GRADE_PART


def test_the_case_s_model_wins_over_the_spec_s_and_changes_that_case_s_judge_only(tmp_path: Path) -> None:
    spec = load(tmp_path, TWO)
    a, b = spec.cases
    assert (a.judge_model, b.judge_model) == (None, "claude-opus-4-7")
    assert (choose(spec, a, environ={}).model, choose(spec, b, environ={}).model) == (
        "claude-haiku-4-5", "claude-opus-4-7")
    assert choose(spec, environ={}).model == "claude-haiku-4-5"  # no case: the spec's, as before
    assert judge_key(spec, b)["model"] == "claude-opus-4-7" and judge_key(spec, a)["model"] == "claude-haiku-4-5"
    before = load(tmp_path, TWO.replace("    judge: {model: claude-opus-4-7}\n", ""))
    assert judge_part(spec, a).digest == judge_part(before, before.cases[0]).digest
    assert judge_part(spec, b).digest != judge_part(before, before.cases[1]).digest


def test_the_run_s_judge_model_wins_over_the_case_s(tmp_path: Path) -> None:
    spec = load(tmp_path, TWO)
    env = {"SKILLMAKE_JUDGE_MODEL": "claude-sonnet-4-6"}
    assert {choose(spec, c, environ=env).model for c in spec.cases} == {"claude-sonnet-4-6"}


def test_a_case_model_of_another_family_takes_its_own_provider(tmp_path: Path) -> None:
    spec = load(tmp_path, TWO.replace("judge: {model: claude-haiku-4-5}", "judge: {provider: claude-code}")
                .replace("claude-opus-4-7", "gpt-5.4"))
    a, b = spec.cases
    assert (choose(spec, a, environ={}).provider, choose(spec, a, environ={}).model) == (
        "claude-code", "claude-sonnet-4-6")
    chosen = choose(spec, b, environ={})
    assert (chosen.provider, chosen.model, chosen.source) == ("openai", "gpt-5.4", "cases[1].judge.model")
    same_family = load(tmp_path, TWO.replace("judge: {model: claude-haiku-4-5}", "judge: {provider: claude-code}"))
    assert choose(same_family, same_family.cases[1], environ={}).provider == "claude-code"


def test_a_run_s_provider_drops_a_case_model_of_another_family(tmp_path: Path) -> None:
    spec = load(tmp_path, TWO)
    chosen = choose(spec, spec.cases[1], environ={"SKILLMAKE_JUDGE_PROVIDER": "openai"})
    assert (chosen.provider, chosen.model) == ("openai", "gpt-5.4")


def test_preflight_checks_the_judge_of_every_case(tmp_path: Path) -> None:
    spec = load(tmp_path, TWO.replace("claude-opus-4-7", "gpt-5.4"))
    problems = judge_problems([spec], environ={"ANTHROPIC_API_KEY": "k"})
    assert len(problems) == 1 and "OPENAI_API_KEY" in problems[0] and "cases[1].judge.model" in problems[0]
    assert judge_problems([spec], environ={"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}) == []
    assert judge_problems([load(tmp_path, TWO)], environ={"ANTHROPIC_API_KEY": "k"}) == []


def test_a_case_judge_takes_only_a_model(tmp_path: Path) -> None:
    with pytest.raises(SpecErrors, match=r"/cases/1/judge"):
        load(tmp_path, TWO.replace("{model: claude-opus-4-7}", "{model: claude-opus-4-7, provider: openai}"))
    with pytest.raises(SpecErrors, match=r"/cases/1/judge/model"):
        load(tmp_path, TWO.replace("{model: claude-opus-4-7}", "{model: ' '}"))
