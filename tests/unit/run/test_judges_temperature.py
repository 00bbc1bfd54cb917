"""judge.temperature: read from the spec, sent to the API judges, and part of the grade key only when set — so every
grade key made before the setting existed stays valid (pinned digests below)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillmake.core.errors import SpecErrors
from skillmake.run import grade
from skillmake.run.judges import judge_case, resolve
from skillmake.spec.loader import load_spec
from tests.fakeapi import FakeAPI, Reply
from tests.fakeapi.fixtures import judged_by_fake_api
from tests.unit.run.test_judges_key import CASE, grade_key, make_spec

# Computed before judge.temperature existed: a spec that does not set it must keep these exactly.
PINNED = {
    "default": ({}, "sha256:0c02feab9f72b8beff4a5c5bb19fc79acc20c081c7468b7cfd36c22c677cef6a",
                "sha256:46f95b31fcfb2ecc17ff7f2172a0c06091f00dc5c7501ab767b6548071ff03c6"),
    "openai": ({"provider": "openai"}, "sha256:437b660b3cd7078913335f5cf9c1ce1d25ab03c327208dcbb8a31a61380f7144",
               "sha256:7d11a0b1a0a37aa1b054c9cc07b4be29ec89c6b801032656f218c72bdf409cdd"),
    "haiku, threshold 3": ({"provider": "anthropic", "model": "claude-haiku-4-5", "pass_threshold": 3},
                           "sha256:d21b1911405918907ec3227b8074abe47c304097c135283f112febd73813e6c8",
                           "sha256:631e1a0d22351fc478e57d52a8a49c451d7204a706af3c0564a2df80a79da93a"),
}
KEY = "sk-test-temperature-1234567890"


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(resolve.PROVIDER_ENV, raising=False)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    with judged_by_fake_api(monkeypatch, KEY) as fake:
        yield fake


@pytest.mark.parametrize("name", PINNED)
def test_a_spec_without_temperature_keeps_its_grade_keys(name: str) -> None:
    judge, part, key = PINNED[name]
    assert grade.judge_part(make_spec(**judge), CASE).digest == part
    assert grade_key(make_spec(**judge)) == key
    assert b"temperature" not in grade.judge_part(make_spec(**judge), CASE).data


def test_setting_a_temperature_changes_the_grade_key_and_each_value_has_its_own() -> None:
    keys = {t: grade_key(make_spec(temperature=t)) for t in (0.0, 0.5, 1.0)}
    assert len(set(keys.values())) == 3
    assert PINNED["default"][2] not in keys.values()  # 0 is a setting too: not the same as "unset"
    assert b'"temperature":0.5' in grade.judge_part(make_spec(temperature=0.5), CASE).data


def spec_file(tmp_path: Path, judge: str) -> str:
    (tmp_path / "skill").mkdir(exist_ok=True)
    (tmp_path / "skill" / "SKILL.md").write_text("---\nname: skill\ndescription: d\n---\nbody\n")
    path = tmp_path / "t.eval.yaml"
    path.write_text(f"skill: skill\nagent: {{kind: command, command: [echo]}}\njudge: {judge}\n"
                    "cases:\n  - {id: a, prompt: p, rubric: r}\n")
    return str(path)


def test_the_spec_reads_it_and_the_schema_bounds_it(tmp_path: Path) -> None:
    spec = load_spec(spec_file(tmp_path, "{model: claude-sonnet-4-6, temperature: 0.7}"), root=str(tmp_path))
    assert spec.judge.temperature == 0.7
    assert load_spec(spec_file(tmp_path, "{model: claude-sonnet-4-6}"), root=str(tmp_path)).judge.temperature is None
    for bad in ("2.5", "-0.1", "hot"):
        with pytest.raises(SpecErrors, match="/judge/temperature"):
            load_spec(spec_file(tmp_path, f"{{temperature: {bad}}}"), root=str(tmp_path))


def verdict() -> Reply:
    return Reply.tool_use("record_verdict", {"score": 5, "reason": "ok"})


def body_of(api: FakeAPI) -> dict[str, Any]:
    return api.requests[-1].json or {}


def test_anthropic_gets_it_in_the_body_only_when_set(api: FakeAPI) -> None:
    api.enqueue(verdict(), verdict(), endpoint="/v1/messages")
    assert judge_case(make_spec(), CASE, output="x", files={}).error is None
    assert "temperature" not in body_of(api)
    assert judge_case(make_spec(temperature=0.3), CASE, output="x", files={}).error is None
    assert body_of(api)["temperature"] == 0.3
    assert body_of(api)["thinking"] == {"type": "disabled"}


def test_openai_sends_the_set_value_even_to_a_model_that_gets_none_by_default(api: FakeAPI) -> None:
    reply = Reply.text('{"score": 5, "reason": "ok"}')
    api.enqueue(reply, reply, reply, endpoint="/v1/chat/completions")
    judge_case(make_spec(provider="openai", model="gpt-4.1"), CASE, output="x", files={})
    assert body_of(api)["temperature"] == 0  # unchanged: 0 where the model takes one
    judge_case(make_spec(provider="openai", model="gpt-5.4"), CASE, output="x", files={})
    assert "temperature" not in body_of(api)  # unchanged: reasoning models get none
    judge_case(make_spec(provider="openai", model="gpt-5.4", temperature=1.0), CASE, output="x", files={})
    assert body_of(api)["temperature"] == 1.0  # the spec asked for it


def test_a_model_that_refuses_it_is_a_judge_error_that_names_the_setting(api: FakeAPI) -> None:
    api.enqueue(Reply.error(400, "temperature is not supported with this model"), endpoint="/v1/messages")
    out = judge_case(make_spec(temperature=0.3), CASE, output="x", files={})
    assert out.error is not None and "judge.temperature" in out.error and KEY not in out.error
