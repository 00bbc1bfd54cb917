"""The judge is part of the grade key: another judge model, provider or claude CLI re-judges; nothing else
about the judge's environment does. Checked on grade.judge_part and grade.key_for, without any CLI or API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillmake.run import grade
from skillmake.run.judges import judge_key, resolve
from skillmake.run.keys import KEY_VERSION
from skillmake.spec.model import AgentConfig, Case, JudgeConfig, Skill, Spec
from tests.fakeapi.claude_cli import FakeClaude

CASE = Case(id="c1", index=0, prompt="Summarise.", rubric="Is it faithful?")
TRIAL = {"outcome": "completed", "outputs": {"output": "sha256:" + "0" * 64, "files": {}},
         "inputs": {"key_version": KEY_VERSION}}


def make_spec(**judge: Any) -> Spec:
    return Spec(name="demo", path="/p/demo.eval.yaml", relpath="demo.eval.yaml",
                skill=Skill(name="demo", path="/p/demo", kind="folder"), agent=AgentConfig(kind="command"),
                arms=(), cases=(CASE,), judge=JudgeConfig(**judge))


def grade_key(spec: Spec, case: Case = CASE) -> str:
    return grade.key_for(spec, case, TRIAL)[0]


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(resolve.PROVIDER_ENV, raising=False)


JUDGES = {
    "default": {},
    "another anthropic model": {"model": "claude-opus-4-6"},
    "openai, its default model": {"provider": "openai"},
    "another openai model": {"provider": "openai", "model": "gpt-5.4-mini"},
    "same model through claude-code": {"provider": "claude-code", "model": "claude-sonnet-4-6"},
    # An OpenAI-compatible gateway (OPENAI_BASE_URL) serving the same model: only the provider differs.
    "same model through an openai-compatible gateway": {"provider": "openai", "model": "claude-sonnet-4-6"},
    "same model named explicitly through anthropic": {"provider": "anthropic", "model": "claude-sonnet-4-6"},
}


def test_every_judge_model_and_provider_has_its_own_grade_key(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(FakeClaude(tmp_path).path))
    parts = {name: grade.judge_part(make_spec(**judge), CASE).digest for name, judge in JUDGES.items()}
    keys = {name: grade_key(make_spec(**judge)) for name, judge in JUDGES.items()}
    # The default judge is anthropic claude-sonnet-4-6: naming it explicitly is the same judge.
    assert parts["default"] == parts["same model named explicitly through anthropic"]
    assert keys["default"] == keys["same model named explicitly through anthropic"]
    distinct = [name for name in JUDGES if name != "same model named explicitly through anthropic"]
    assert len({parts[n] for n in distinct}) == len(distinct)
    assert len({keys[n] for n in distinct}) == len(distinct)


def test_the_provider_from_the_environment_moves_the_grade_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = grade_key(make_spec())
    monkeypatch.setenv(resolve.PROVIDER_ENV, "openai")
    assert grade_key(make_spec()) != before


def test_a_new_claude_cli_moves_a_claude_code_grade_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = make_spec(provider="claude-code")
    keys = []
    for folder, version in (("old", "2.1.328 (Claude Code)"), ("new", "2.2.0 (Claude Code)")):
        (tmp_path / folder).mkdir()
        monkeypatch.setenv("SKILLMAKE_CLAUDE", str(FakeClaude(tmp_path / folder, version=version).path))
        keys.append(grade_key(spec))
    assert keys[0] != keys[1]
    assert judge_key(spec, CASE)["cli_version"] == "2.2.0 (Claude Code)"


def test_keys_and_urls_do_not_move_the_grade_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = grade_key(make_spec())
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-one")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-haiku-4-5")  # the agents' model, not the judge's
    assert grade_key(make_spec()) == before


def test_a_case_without_a_judge_ignores_the_judge() -> None:
    plain = Case(id="c2", index=1, prompt="p")
    assert grade_key(make_spec(), plain) == grade_key(make_spec(model="gpt-5.4"), plain)

