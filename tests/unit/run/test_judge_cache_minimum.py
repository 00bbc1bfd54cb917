"""Anthropic caches no prefix shorter than the model's minimum (1,024 tokens; 4,096 for Opus 4.5+ and Haiku 4.5), and
the fake API answers as the real one does. A judge whose fixed part cannot reach the minimum sends its prompt unmarked,
and a grade records no cache saving it did not get."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from skillmake.run.judges import anthropic_provider as provider
from skillmake.run.judges.base import TOOL_NAME, Endpoint, JudgeRequest
from tests.fakeapi import FakeAPI, Reply
from tests.fakeapi.anthropic_wire import cache_minimum as fake_minimum

SCHEMA = {"type": "object", "properties": {"passed": {"type": "boolean"}}}
SHORT = "<rubric>Is the greeting friendly?</rubric>\n\n"  # a typical one-line rubric's fixed part
LONG = "<rubric>" + "Score the greeting against each of these points, quoting the output. " * 60 + "</rubric>\n\n"
MODELS = ["claude-sonnet-4-6", "claude-haiku-4-5", "claude-opus-4-6", "claude-opus-4-1", "claude-3-5-haiku-latest"]


def judged(fixed: str) -> JudgeRequest:
    return JudgeRequest(judge="rubric", system="You grade the output of an AI agent.",
                        user=fixed + "<output>hi</output>", schema=SCHEMA, shared=len(fixed))


def content(fixed: str, model: str) -> Any:
    return provider.params(judged(fixed), Endpoint(provider="anthropic", model=model))["messages"][0]["content"]


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        yield fake


def test_the_minimum_of_each_model_as_the_fake_knows_it() -> None:
    assert [provider.cache_minimum(m) for m in MODELS] == [1024, 4096, 4096, 1024, 2048]
    assert [provider.cache_minimum(m) for m in MODELS] == [fake_minimum(m) for m in MODELS]


def test_a_fixed_part_that_cannot_reach_a_4096_token_minimum_is_not_marked() -> None:
    for model in ("claude-haiku-4-5", "claude-opus-4-6"):
        assert content(SHORT, model) == judged(SHORT).user  # one string: nothing marked cacheable
        fixed, rest = content(LONG * 3, model)
        assert fixed["cache_control"] == {"type": "ephemeral"} and fixed["text"] + rest["text"] == judged(LONG * 3).user


def test_on_sonnet_a_fixed_part_that_might_reach_the_minimum_is_still_marked() -> None:
    """The bound is one byte a token: a prefix of more bytes than 1,024 tokens may be cached, so it stays marked
    (marking costs nothing when it is not)."""
    fixed, _ = content(LONG, "claude-sonnet-4-6")
    assert fixed["cache_control"] == {"type": "ephemeral"}


def test_a_short_prefix_earns_no_recorded_saving(api: FakeAPI) -> None:
    """A script that claims cache reads for a one-line rubric on Haiku 4.5 gets what the real API would answer: every
    token is input, priced at the full rate."""
    api.reset()
    api.default = Reply.tool_use(TOOL_NAME, {"passed": True}, usage={
        "input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 5000, "cache_creation_input_tokens": 0})
    endpoint = Endpoint(provider="anthropic", model="claude-haiku-4-5", base_url=api.url, api_key="sk-test-min-0123")
    usage = provider.complete(judged(SHORT), endpoint).usage
    assert (usage.input_tokens, usage.cache_read_tokens) == (5100, 0)
    long_usage = provider.complete(judged(LONG * 12), endpoint).usage  # ~12,600 tokens of fixed part: cached
    assert (long_usage.input_tokens, long_usage.cache_read_tokens) == (100, 5000)
