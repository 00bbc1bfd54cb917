"""Pins at the Anthropic judge provider's edges, over the standard library (run/wire.py) against the loopback fake API:
which statuses are retried and which are not, the hint each refusal carries, strict tool use dropped only when a
400 names it, the temperature sent only when set, the server's retry-after honoured, the reply's usage, and the
shared clients (one per set of options and environment, the oldest closed when a ninth arrives). Written for
bench/mutation.py's `anthropic_judge` target: each test kills a one-line bug the other tests let through."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from skillmake.run import sdk
from skillmake.run.judges import anthropic_provider as provider
from skillmake.run.judges import retry
from skillmake.run.judges.base import TOOL_NAME, Endpoint, JudgeCallError, JudgeRequest
from tests.fakeapi import FakeAPI, Reply

KEY = "sk-test-anthropic-pins-0123456789"
MESSAGES = "/v1/messages"
VERDICT = {"passed": True}


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        yield fake


@pytest.fixture
def waits(judge_waits: list[float]) -> list[float]:
    return judge_waits


def endpoint(api: FakeAPI) -> Endpoint:
    return Endpoint(provider="anthropic", model="claude-sonnet-4-6", base_url=api.url, api_key=KEY)


def request(temperature: float | None = None) -> JudgeRequest:
    return JudgeRequest(judge="rubric", system="judge it", user="the output", temperature=temperature,
                        schema={"type": "object", "properties": {"passed": {"type": "boolean"}}})


def bodies(api: FakeAPI) -> list[dict[str, Any]]:
    return [r.json or {} for r in api.requests if r.path == MESSAGES]


@pytest.mark.parametrize("status", [408, 409, 429, 500, 529, 599])
def test_these_statuses_are_retried(api: FakeAPI, waits: list[float], status: int) -> None:
    api.enqueue(Reply.error(status, "busy", retry_after=0.25), Reply.tool_use(TOOL_NAME, VERDICT), endpoint=MESSAGES)
    reply = provider.complete(request(), endpoint(api))
    assert reply.data == VERDICT and reply.usage.requests == 2
    assert waits == [0.25]  # the server's retry-after, in seconds


@pytest.mark.parametrize(("status", "hint"), [
    (401, "check ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL)"),
    (403, "check ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL)"),
    (404, "check the judge model name (judge.model) and ANTHROPIC_BASE_URL"),
    (400, "check the judge settings (judge.model, judge.provider)"),
    (402, "check the judge settings (judge.model, judge.provider)"),
    (410, "check the judge settings (judge.model, judge.provider)"),
    (430, "check the judge settings (judge.model, judge.provider)"),
])
def test_these_are_not_retried_and_say_what_to_check(api: FakeAPI, waits: list[float], status: int,
                                                     hint: str) -> None:
    api.enqueue(Reply.error(status, "refused"), endpoint=MESSAGES)
    with pytest.raises(JudgeCallError) as err:
        provider.complete(request(), endpoint(api))
    assert err.value.message.startswith(f"Anthropic API answered HTTP {status}: ")
    assert err.value.message.endswith("; " + hint) and err.value.requests == 1
    assert waits == [] and len(bodies(api)) == 1


def test_a_refused_temperature_is_named_in_the_hint(api: FakeAPI) -> None:
    api.enqueue(Reply.error(400, "temperature is not supported"), endpoint=MESSAGES)
    with pytest.raises(JudgeCallError) as err:
        provider.complete(request(temperature=0.3), endpoint(api))
    assert err.value.message.endswith("judge.temperature: remove it if the model takes none)")


def test_the_temperature_is_sent_only_when_set_and_strict_tool_use_always(api: FakeAPI) -> None:
    api.enqueue(Reply.tool_use(TOOL_NAME, VERDICT), Reply.tool_use(TOOL_NAME, VERDICT), endpoint=MESSAGES)
    provider.complete(request(), endpoint(api))
    provider.complete(request(temperature=0.3), endpoint(api))
    plain, warm = bodies(api)
    assert "temperature" not in plain and warm["temperature"] == 0.3
    for body in (plain, warm):
        assert body["tools"][0]["strict"] is True and body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
        assert body["thinking"] == {"type": "disabled"}


def test_strict_tool_use_is_dropped_only_when_a_400_names_it(api: FakeAPI, waits: list[float]) -> None:
    api.enqueue(Reply.error(400, "strict tool use is not supported for this model"),
                Reply.tool_use(TOOL_NAME, VERDICT), endpoint=MESSAGES)
    reply = provider.complete(request(), endpoint(api))
    first, second = bodies(api)
    assert first["tools"][0]["strict"] is True and "strict" not in second["tools"][0]
    assert reply.usage.requests == 2 and waits == [0.0]


def test_a_reply_cut_off_at_max_tokens_is_an_error_counting_its_request(api: FakeAPI) -> None:
    api.enqueue(Reply.turn(Reply.text("I think"), stop_reason="max_tokens"), endpoint=MESSAGES)
    with pytest.raises(JudgeCallError) as err:
        provider.complete(request(), endpoint(api))
    assert err.value.message == "the judge's reply was cut off at max_tokens=8192" and err.value.requests == 1


def test_usage_and_cost_come_from_the_reply(api: FakeAPI) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 50, "cache_read_input_tokens": 200,
             "cache_creation_input_tokens": 10}
    api.enqueue(Reply.tool_use(TOOL_NAME, VERDICT, text="because", usage=usage), endpoint=MESSAGES)
    fixed = "The rubric every trial of the case is judged by. " * 100  # a prefix long enough to be cached
    cached = JudgeRequest(judge="rubric", system="judge it", user=fixed + "the output", shared=len(fixed),
                          schema=request().schema)
    reply = provider.complete(cached, endpoint(api))
    u = reply.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_creation_tokens, u.requests) == (
        1000, 50, 200, 10, 1)
    assert u.cost_usd is not None and u.cost_usd > 0
    assert reply.text == "because"


def test_the_judge_needs_no_sdk(api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str, *, what: str) -> Any:
        raise sdk.MissingSDK(name, what=what)

    monkeypatch.setattr(sdk, "load", missing)
    monkeypatch.setitem(sys.modules, "anthropic", None)  # `import anthropic` now fails, as on an install without it
    api.enqueue(Reply.tool_use(TOOL_NAME, VERDICT), endpoint=MESSAGES)
    assert provider.complete(request(), endpoint(api)).data == VERDICT
    sent = api.requests[0].headers
    assert (sent["x-api-key"], sent["anthropic-version"], sent["content-type"]) == (KEY, "2023-06-01",
                                                                                  "application/json")


def test_an_auth_token_is_sent_as_a_bearer_token(api: FakeAPI) -> None:
    api.enqueue(Reply.tool_use(TOOL_NAME, VERDICT), endpoint=MESSAGES)
    token = Endpoint(provider="anthropic", model="claude-sonnet-4-6", base_url=api.url, auth_token="tok-123456789")
    provider.complete(request(), token)
    assert api.requests[0].headers["authorization"] == "Bearer tok-123456789"
    assert "x-api-key" not in api.requests[0].headers


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after-ms": "1500"}, 1.5), ({"retry-after": "2"}, 2.0),
    ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # the finer one first
    ({"retry-after": "-3"}, 0.0), ({"retry-after": "Wed, 21 Oct 2020 07:28:00 GMT"}, 0.0),  # a date gone by
    ({"retry-after-ms": "soon", "retry-after": "4"}, 4.0), ({}, None), (None, None),
])
def test_retry_after_reads_the_servers_wait(headers: dict[str, str] | None, seconds: float | None) -> None:
    assert provider.retry_after(headers) == seconds


class Client:
    made: ClassVar[list[Client]] = []

    def __init__(self, **options: Any) -> None:
        self.options, self.closed = options, 0
        Client.made.append(self)

    def close(self) -> None:
        self.closed += 1


@pytest.fixture
def clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Client]]:
    monkeypatch.setattr(provider, "_CLIENTS", type(provider._CLIENTS)())
    Client.made = []
    yield Client.made


def test_one_client_per_options_and_environment(clients: list[Client], monkeypatch: pytest.MonkeyPatch) -> None:
    a = provider.shared_client(Client, base_url="http://a")
    assert provider.shared_client(Client, base_url="http://a") is a
    b = provider.shared_client(Client, base_url="http://b")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "another")
    c = provider.shared_client(Client, base_url="http://a")  # the SDK reads the environment: a new client
    assert len({id(a), id(b), id(c)}) == 3 and len(clients) == 3


def test_the_ninth_client_closes_the_least_recently_used(clients: list[Client]) -> None:
    first = provider.shared_client(Client, n=0)
    for n in range(1, 8):
        provider.shared_client(Client, n=n)
    assert provider.shared_client(Client, n=0) is first  # used again: now the newest
    provider.shared_client(Client, n=8)  # the ninth: n=1, the least recently used, goes and is closed
    assert [c.options["n"] for c in clients if c.closed] == [1]
    assert len(provider._CLIENTS) == 8 and first.closed == 0
    assert provider.shared_client(Client, n=0) is first


def test_at_exit_this_processs_clients_are_closed_and_forgotten(clients: list[Client]) -> None:
    mine = provider.shared_client(Client, n=0)
    theirs = Client(n=1)
    provider._CLIENTS[(-1, Client, "a parent's")] = theirs  # a client made by another process (before a fork)
    provider._close_clients()
    assert (mine.closed, theirs.closed) == (1, 0) and len(provider._CLIENTS) == 0


def test_a_client_that_fails_to_close_is_not_an_error(clients: list[Client]) -> None:
    class Broken(Client):
        def close(self) -> None:
            raise OSError("already gone")

    provider._close(Broken())  # no exception


def test_an_unreachable_api_is_retried_then_named(waits: list[float]) -> None:
    dead = Endpoint(provider="anthropic", model="claude-sonnet-4-6", base_url="http://127.0.0.1:9", api_key=KEY)
    with pytest.raises(JudgeCallError) as err:
        provider.complete(request(), dead)
    assert err.value.message.startswith("cannot reach the Anthropic API at http://127.0.0.1:9")
    assert err.value.requests == retry.MAX_ATTEMPTS and len(waits) == retry.MAX_ATTEMPTS - 1


def test_an_unreadable_reply_is_retried(api: FakeAPI, waits: list[float]) -> None:
    api.enqueue(Reply.raw("<html>gateway</html>", content_type="application/json"),
                Reply.tool_use(TOOL_NAME, VERDICT), endpoint=MESSAGES)
    reply = provider.complete(request(), endpoint(api))
    assert reply.data == VERDICT and reply.usage.requests == 2 and len(waits) == 1


def test_no_credentials_at_all_is_an_error_before_any_request(api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    bare = Endpoint(provider="anthropic", model="claude-sonnet-4-6", base_url=api.url)
    with pytest.raises(JudgeCallError) as err:
        provider.complete(request(), bare)
    assert err.value.message.startswith("no Anthropic credentials for the judge") and err.value.requests == 0
    assert api.requests == []


def test_only_the_verdict_tool_is_read(api: FakeAPI) -> None:
    api.enqueue(Reply.turn(Reply.tool_use("other_tool", {"passed": False}), Reply.tool_use(TOOL_NAME, VERDICT)),
                endpoint=MESSAGES)
    assert provider.complete(request(), endpoint(api)).data == VERDICT
