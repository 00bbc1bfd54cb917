"""The rate limiter through the real providers' code and SDKs against the loopback fake API's limits: the fake never
sees more requests in flight than the cap (judges and API agents alike), a retry-after (milliseconds, whole seconds,
an HTTP date) pauses every thread of the run, not only the one that got it, and no grade fails on a rate limit or an
overload the provider recovers from."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from skillmake.run import ratelimit
from skillmake.run.agents import TrialRequest, get_agent
from skillmake.run.judges import anthropic_provider, openai_provider
from skillmake.run.judges.base import TOOL_NAME, Endpoint, JudgeCallError, JudgeRequest
from skillmake.spec.model import AgentConfig, Case, Skill, Spec
from tests.fakeapi import FAKE_KEY, FakeAPI, Reply

VERDICT = {"passed": True}
REQUEST = JudgeRequest(judge="rubric", system="judge it", user="the output",
                       schema={"type": "object", "properties": {"passed": {"type": "boolean"}}})


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        yield fake


@pytest.fixture(autouse=True)
def fresh(api: FakeAPI) -> Iterator[None]:
    api.reset()
    api.limit()
    yield
    api.limit()


def anthropic(api: FakeAPI, model: str = "claude-sonnet-4-6") -> Endpoint:
    return Endpoint(provider="anthropic", model=model, base_url=api.url, api_key=FAKE_KEY)


def judge_all(api: FakeAPI, calls: int, threads: int, *, provider: Any = anthropic_provider,
              target: Endpoint | None = None) -> list[bool]:
    target = target or anthropic(api)

    def one(_: int) -> bool:
        try:
            return provider.complete(REQUEST, target).data == VERDICT
        except JudgeCallError:
            return False

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(one, range(calls)))


class Unlimited:
    """What the judges did before the limiter: no shared cap, no shared pause."""

    class _Slot:
        def report(self, status: int | None, retry_after: float | None = None) -> None:
            pass

    @contextlib.contextmanager
    def slot(self, provider: str, model: str, *, deadline: float | None = None) -> Iterator[Any]:
        yield self._Slot()


@pytest.mark.parametrize("shared", [True, False], ids=["limiter", "without"])
def test_the_fake_never_sees_more_judge_requests_in_flight_than_the_cap(api: FakeAPI, shared: bool) -> None:
    api.default = Reply.tool_use(TOOL_NAME, VERDICT)
    limits = api.limit(latency=0.2)
    ratelimit.configure(max_connections=3)
    if not shared:
        ratelimit.install(Unlimited())
    assert all(judge_all(api, 16, 8))
    assert (limits.peak <= 3) is shared  # without the shared cap, 8 threads put more than 3 in flight


def test_openai_judges_have_their_own_cap(api: FakeAPI) -> None:
    api.default = Reply.text('{"passed": true}')
    limits = api.limit(latency=0.05)
    ratelimit.configure(max_connections=2)
    target = Endpoint(provider="openai", model="gpt-5.4", base_url=api.openai_url, api_key=FAKE_KEY)
    assert all(judge_all(api, 8, 6, provider=openai_provider, target=target))
    assert limits.peak == 2


class Recording(ratelimit.LocalLimiter):
    """The local limiter, noting when each slot was granted and what each attempt reported (time.monotonic)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.granted: list[float] = []
        self.reports: list[tuple[float, int | None, float | None]] = []

    @contextlib.contextmanager
    def slot(self, provider: str, model: str, *, deadline: float | None = None) -> Iterator[Any]:
        recording = self

        class Noted:
            def __init__(self, inner: Any) -> None:
                self.inner = inner

            def report(self, status: int | None, retry_after: float | None = None) -> None:
                recording.reports.append((time.monotonic(), status, retry_after))
                self.inner.report(status, retry_after)

        with super().slot(provider, model, deadline=deadline) as inner:
            self.granted.append(time.monotonic())
            yield Noted(inner)

    def granted_in_pauses(self) -> list[float]:
        """Slots granted while a pause a 429 asked for was running: none, if every thread honours it."""
        return [g for t, status, wait in self.reports if status == 429 and wait
                for g in self.granted if t < g < t + wait - 0.01]


@pytest.mark.parametrize("form", ["ms", "seconds", "date"])
def test_a_retry_after_pauses_every_thread_and_no_grade_fails(api: FakeAPI, form: str) -> None:
    api.default = Reply.tool_use(TOOL_NAME, VERDICT)
    limits = api.limit(rate=3, retry_after=form)
    recording = Recording()
    ratelimit.install(recording)
    assert all(judge_all(api, 8, 4))
    assert limits.limited >= 1 and limits.admitted == 8
    pushed = [wait for _, status, wait in recording.reports if status == 429]
    assert len(pushed) == limits.limited and all(wait is not None and wait > 0 for wait in pushed)  # read, any form
    assert recording.granted_in_pauses() == []


def test_an_overloaded_provider_shrinks_the_cap_and_every_grade_passes(api: FakeAPI) -> None:
    api.default = Reply.tool_use(TOOL_NAME, VERDICT)
    limits = api.limit(overload=2, latency=0.05)
    ratelimit.configure(max_connections=6)
    assert all(judge_all(api, 16, 6))
    cap = ratelimit.current().stats()[("anthropic", "claude-sonnet-4-6")]  # type: ignore[attr-defined]
    assert limits.overloaded >= 1 and cap.push_backs == limits.overloaded and cap.cap < 6


def trial(tmp_path: Path, k: int) -> TrialRequest:
    agent = AgentConfig(kind="anthropic", model="claude-haiku-4-5")
    case = Case(id="c1", index=0, prompt="Say hi.")
    skill = Skill(name="demo", path=str(tmp_path / "skill"), kind="folder")
    spec = Spec(name="demo", path=str(tmp_path / "demo.eval.yaml"), relpath="demo.eval.yaml", skill=skill,
                agent=agent, arms=(), cases=(case,))
    return TrialRequest(spec=spec, case=case, arm_name="with_skill", k=k, agent=agent, skill=skill,
                        prompt="Say hi.", system_prompt=None, workspace=str(tmp_path), home=str(tmp_path / "home"),
                        env=api_env, timeout=20.0)


api_env: dict[str, str] = {}


def test_api_agents_share_the_cap_and_honour_a_pause(api: FakeAPI, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in api.anthropic_env().items():
        monkeypatch.setenv(name, value)
    api.default = Reply.text("hi")
    limits = api.limit(rate=4, latency=0.05)
    recording = Recording(max_connections=2)
    ratelimit.install(recording)
    agent = get_agent("anthropic")
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda k: agent.run(trial(tmp_path, k)), range(8)))
    assert [r.outcome for r in results] == ["completed"] * 8
    assert limits.peak <= 2 and limits.admitted == 8
    assert [status for _, status, _ in recording.reports].count(429) == limits.limited
    assert recording.granted_in_pauses() == []
