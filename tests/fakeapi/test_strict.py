"""The fake refuses what the real Messages API refuses, with its status, error shape and wording: an empty or
whitespace-only text block, an empty message, more than four cache_control breakpoints (in a call, a token count and
a batch's request); and, as the real API, it caches no prefix shorter than the model's minimum."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from skillmake.run import wire
from tests.fakeapi import FakeAPI, Reply
from tests.fakeapi.anthropic_wire import cache_minimum

EPHEMERAL = {"type": "ephemeral"}
LONG = "A sentence of the fixed prefix that every call repeats. " * 100  # 5,600 characters: ~1,400 tokens


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        yield fake


@pytest.fixture(autouse=True)
def fresh(api: FakeAPI) -> None:
    api.reset()
    api.default = Reply.text("ok", usage={"input_tokens": 10, "output_tokens": 1,
                                          "cache_creation_input_tokens": 1400, "cache_read_input_tokens": 0})


def post(api: FakeAPI, body: dict[str, Any], path: str = "/v1/messages") -> tuple[int, Any]:
    response = wire.post_json(api.url + path, {"model": "claude-sonnet-4-6", "max_tokens": 10, **body},
                              headers={"anthropic-version": "2023-06-01"}, timeout=5)
    return response.status, wire.read_json(response)


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": list(blocks)}]}


@pytest.mark.parametrize(("body", "message"), [
    (user({"type": "text", "text": ""}), "messages: text content blocks must be non-empty"),
    (user({"type": "text", "text": "  \n"}), "messages: text content blocks must contain non-whitespace text"),
    ({"system": [{"type": "text", "text": ""}], **user({"type": "text", "text": "hi"})},
     "system: text content blocks must be non-empty"),
    (user({"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": ""}]}),
     "messages: text content blocks must be non-empty"),
    ({"messages": [{"role": "user", "content": ""}]},
     "messages.0: all messages must have non-empty content except for the optional final assistant message"),
    (user(*[{"type": "text", "text": f"part {i}", "cache_control": EPHEMERAL} for i in range(5)]),
     "A maximum of 4 blocks with cache_control may be provided. Found 5."),
    ({"system": [{"type": "text", "text": "s", "cache_control": EPHEMERAL}],
      "tools": [{"name": f"t{i}", "input_schema": {"type": "object"}, "cache_control": EPHEMERAL} for i in range(2)],
      **user(*[{"type": "text", "text": f"part {i}", "cache_control": EPHEMERAL} for i in range(2)])},
     "A maximum of 4 blocks with cache_control may be provided. Found 5."),
])
@pytest.mark.parametrize("path", ["/v1/messages", "/v1/messages/count_tokens"])
def test_what_the_api_refuses_is_a_400_in_its_shape(api: FakeAPI, body: dict[str, Any], message: str,
                                                    path: str) -> None:
    status, data = post(api, body, path)
    assert status == 400 and data["type"] == "error"
    assert data["error"] == {"type": "invalid_request_error", "message": message}
    assert [problem for _, problem in api.rejected] == [message]


def test_four_breakpoints_and_a_final_empty_assistant_turn_are_accepted(api: FakeAPI) -> None:
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": f"part {i}",
                                                       "cache_control": EPHEMERAL} for i in range(4)]},
                         {"role": "assistant", "content": ""}]}
    assert post(api, body)[0] == 200 and api.rejected == []


def test_a_batch_request_the_api_refuses_is_errored_with_its_message(api: FakeAPI) -> None:
    api.batches.polls = 0
    good = {"model": "claude-sonnet-4-6", "max_tokens": 10, **user({"type": "text", "text": "hi"})}
    bad = {**good, **user({"type": "text", "text": ""})}
    created = wire.read_json(wire.post_json(api.url + "/v1/messages/batches",
                                            {"requests": [{"custom_id": "a", "params": good},
                                                          {"custom_id": "b", "params": bad}]},
                                            headers={}, timeout=5))
    results = api.batches._anthropic_results(api.batches._batches[created["id"]]).decode().splitlines()
    import json

    kinds = {row["custom_id"]: row["result"] for row in map(json.loads, results)}
    assert kinds["a"]["type"] == "succeeded"
    assert kinds["b"]["error"]["error"]["message"] == "messages: text content blocks must be non-empty"


def test_the_cache_minimum_of_each_model() -> None:
    assert [cache_minimum(m) for m in ("claude-sonnet-4-6", "claude-haiku-4-5", "claude-opus-4-6",
                                       "claude-3-5-haiku-latest", "claude-opus-4-1")] == [1024, 4096, 4096, 2048, 1024]


def test_a_prefix_below_the_minimum_is_not_cached(api: FakeAPI) -> None:
    """The real API answers a short cacheable prefix as if it were not marked: no cache write, no cache read, every
    token counted as input."""
    status, data = post(api, user({"type": "text", "text": "short", "cache_control": EPHEMERAL},
                                  {"type": "text", "text": "the rest"}))
    assert status == 200
    assert data["usage"]["cache_creation_input_tokens"] == 0 and data["usage"]["cache_read_input_tokens"] == 0
    assert data["usage"]["input_tokens"] == 10 + 1400


def test_a_prefix_over_the_minimum_is_cached_as_scripted(api: FakeAPI) -> None:
    status, data = post(api, user({"type": "text", "text": LONG, "cache_control": EPHEMERAL},
                                  {"type": "text", "text": "the rest"}))
    assert status == 200 and data["usage"]["cache_creation_input_tokens"] == 1400


def test_the_prefix_counts_the_tools_and_the_system_before_the_breakpoint(api: FakeAPI) -> None:
    body = {"system": [{"type": "text", "text": LONG}],
            **user({"type": "text", "text": "short", "cache_control": EPHEMERAL}, {"type": "text", "text": "x"})}
    assert post(api, body)[1]["usage"]["cache_creation_input_tokens"] == 1400
    haiku = {**body, "model": "claude-haiku-4-5"}  # 4,096 tokens for Haiku 4.5: ~1,400 are not enough
    assert post(api, haiku)[1]["usage"]["cache_creation_input_tokens"] == 0


def test_no_breakpoint_no_cache(api: FakeAPI) -> None:
    body = {"system": LONG, **user({"type": "text", "text": "x"})}
    assert post(api, body)[1]["usage"]["cache_creation_input_tokens"] == 0
