"""run/wire.py, the judges' HTTP client without an SDK, against the loopback fake API: a connection kept alive and
reused, one the server dropped replaced once, the environment's proxy used (and NO_PROXY honoured), a timeout
reported as one, and an error status handed back, not raised."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from skillmake.run import wire
from tests.fakeapi import FakeAPI, Reply


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        yield fake


@pytest.fixture(autouse=True)
def fresh(api: FakeAPI) -> None:
    api.reset()
    wire.close_all()


def idle() -> list[object]:
    return [conn for conns in wire._idle.values() for conn in conns]


def test_a_connection_is_kept_alive_and_reused(api: FakeAPI) -> None:
    api.default = Reply.text("hi")
    first = wire.post_json(api.url + "/v1/messages", {"model": "m"}, headers={"x-api-key": "k"}, timeout=5)
    (conn,) = idle()
    second = wire.post_json(api.url + "/v1/messages", {"model": "m"}, headers={"x-api-key": "k"}, timeout=5)
    assert (first.status, second.status) == (200, 200) and idle() == [conn]
    assert wire.read_json(second)["content"][0]["text"] == "hi"
    assert api.requests[0].json == {"model": "m"} and api.requests[0].headers["x-api-key"] == "k"


def test_a_connection_the_server_dropped_is_replaced_once(api: FakeAPI) -> None:
    api.default = Reply.text("hi")
    wire.post_json(api.url + "/v1/messages", {}, headers={}, timeout=5)
    (stale,) = idle()
    api._server.drop_connections()  # the server closes its side of the kept-alive connection
    again = wire.post_json(api.url + "/v1/messages", {}, headers={}, timeout=5)
    assert again.status == 200 and idle() != [stale]


def test_an_error_status_is_returned_with_its_headers(api: FakeAPI) -> None:
    api.enqueue(Reply.error(429, "slow down", retry_after=2))
    response = wire.post_json(api.url + "/v1/messages", {}, headers={}, timeout=5)
    assert response.status == 429 and response.get("Retry-After") == "2"


def test_a_hang_is_a_timeout(api: FakeAPI) -> None:
    api.enqueue(Reply.fault("hang", seconds=5))
    with pytest.raises(wire.WireError) as err:
        wire.post_json(api.url + "/v1/messages", {}, headers={}, timeout=0.3)
    assert err.value.timed_out


def test_the_environments_proxy_is_used_unless_no_proxy_names_the_host(api: FakeAPI,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    api.default = Reply.text("via the proxy")
    monkeypatch.setenv("HTTP_PROXY", api.url)  # the fake answers as a proxy would pass it on
    monkeypatch.setenv("NO_PROXY", "localhost")
    response = wire.post_json("http://api.example.invalid/v1/messages", {}, headers={}, timeout=5)
    assert response.status == 200 and api.requests[-1].headers["host"] == "api.example.invalid"
    monkeypatch.setenv("NO_PROXY", "api.example.invalid")
    with pytest.raises(wire.WireError):  # no proxy for it now: a direct connection, which the tests forbid
        wire.post_json("http://api.example.invalid/v1/messages", {}, headers={}, timeout=5)


def test_only_http_urls(api: FakeAPI) -> None:
    with pytest.raises(wire.WireError, match="not an http"):
        wire.post_json("ftp://127.0.0.1/x", {}, headers={}, timeout=1)
