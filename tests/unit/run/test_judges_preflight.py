"""judge_problems: before any trial runs, every spec whose cases need a judge can reach one (no network)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillmake.run.judges import judge_case, judge_problems, resolve
from skillmake.spec.model import AgentConfig, Case, JudgeConfig, Skill, Spec
from tests.fakeapi import FakeAPI
from tests.fakeapi.claude_cli import FakeClaude

JUDGED = Case(id="judged", index=0, prompt="p", rubric="Is it right?")
PLAIN = Case(id="plain", index=1, prompt="p")
FIX = "; set it, or change judge.provider"


def make_spec(name: str = "demo", *, cases: tuple[Case, ...] = (JUDGED, PLAIN), **judge: Any) -> Spec:
    return Spec(name=name, path=f"/p/{name}.eval.yaml", relpath=f"{name}.eval.yaml",
                skill=Skill(name="demo", path="/p/demo", kind="folder"), agent=AgentConfig(kind="command"),
                arms=(), cases=cases, judge=JudgeConfig(**judge))


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_AUTH_TOKEN", resolve.PROVIDER_ENV, "SKILLMAKE_CLAUDE"):
        monkeypatch.delenv(name, raising=False)


def test_specs_without_judged_cases_need_nothing() -> None:
    assert judge_problems([make_spec(cases=(PLAIN,)), make_spec(cases=())]) == []


def test_a_missing_anthropic_key_names_the_variable_and_the_fix() -> None:
    assert judge_problems([make_spec("adder")]) == [
        "spec adder: the judge needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) (judge provider anthropic, "
        "the default)" + FIX]


@pytest.mark.parametrize("variable", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
def test_an_anthropic_key_or_token_is_enough(variable: str) -> None:
    assert judge_problems([make_spec()], environ={variable: "sk-x"}) == []


def test_openai_inferred_from_the_model() -> None:
    [line] = judge_problems([make_spec(model="gpt-5.4")], environ={"ANTHROPIC_API_KEY": "sk-x"})
    assert line == ("spec demo: the judge needs OPENAI_API_KEY (or CODEX_API_KEY) (judge provider openai, "
                    "inferred from judge.model 'gpt-5.4')" + FIX)
    assert judge_problems([make_spec(model="gpt-5.4")], environ={"CODEX_API_KEY": "sk-x"}) == []


def test_the_provider_variable_and_the_spec_are_named_as_the_source() -> None:
    [line] = judge_problems([make_spec()], environ={resolve.PROVIDER_ENV: "openai"})
    assert "OPENAI_API_KEY" in line and "from $SKILLMAKE_JUDGE_PROVIDER" in line
    [line] = judge_problems([make_spec(provider="openai")], environ={})
    assert "OPENAI_API_KEY" in line and "from judge.provider" in line


def test_an_unsupported_provider() -> None:
    assert judge_problems([make_spec(provider="gemini")], environ={"OPENAI_API_KEY": "k"}) == [
        "spec demo: judge provider 'gemini' (from judge.provider) is not supported; "
        "set it to one of anthropic, openai, claude-code, codex"]


@pytest.mark.parametrize("url", ["localhost:8080", "ftp://example.com", "http://", "api.anthropic.com"])
def test_a_base_url_that_is_no_http_url(url: str) -> None:
    [line] = judge_problems([make_spec()], environ={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": url})
    assert line.startswith(f"spec demo: ANTHROPIC_BASE_URL={url.rstrip('/')!r} is not an http(s) URL")
    assert line.endswith("or unset it to use the provider's own")


def test_a_good_base_url_passes() -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    assert judge_problems([make_spec(model="gpt-5.4")], environ=env) == []


def test_claude_code_needs_the_cli_but_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(tmp_path / "no-such-claude"))
    [line] = judge_problems([make_spec(provider="claude-code")], environ={})
    assert line.startswith("spec demo: the judge needs the claude CLI (judge provider claude-code, from "
                           "judge.provider); install it")
    assert "SKILLMAKE_CLAUDE" in line and line.endswith("or change judge.provider")
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(FakeClaude(tmp_path).path))
    assert judge_problems([make_spec(provider="claude-code")], environ={}) == []  # a login pays


def test_one_line_per_spec_in_order() -> None:
    specs = [make_spec("b"), make_spec("plain", cases=(PLAIN,)), make_spec("a", model="gpt-5.4"),
             make_spec("c", model="gpt-5.4-mini", provider="openai")]
    lines = judge_problems(specs, environ={})
    assert [line.split(":")[0] for line in lines] == ["spec b", "spec a", "spec c"]
    assert ["ANTHROPIC_API_KEY" in lines[0], "OPENAI_API_KEY" in lines[1], "OPENAI_API_KEY" in lines[2]] == [
        True, True, True]


def test_reads_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert len(judge_problems([make_spec()])) == 1
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-x")
    assert judge_problems([make_spec()]) == []


def test_agrees_with_the_judge_and_makes_no_call(fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    spec = make_spec()
    assert judge_problems([spec]) != []
    out = judge_case(spec, JUDGED, output="x", files={})
    assert out.error is not None and "ANTHROPIC_API_KEY" in out.error  # what the build would have hit
    assert fake_api.count() == 0
