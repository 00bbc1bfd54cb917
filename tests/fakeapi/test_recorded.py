"""Recorded.message_text reads a prompt back whatever its content shape: a string, or text blocks (a cacheable prefix
and the rest, as the judges of compare and of the description optimiser send it), through the real SDKs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from skillmake.compare import comparator
from skillmake.run.judges import anthropic_provider
from skillmake.run.judges.base import Endpoint
from tests.fakeapi import FakeAPI, Reply
from tests.fakeapi.recorded import content_text


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as server:
        server.default = Reply.text("ok")
        yield server


def test_a_judge_prompt_sent_as_cacheable_blocks_reads_back_as_written(api: FakeAPI) -> None:
    import anthropic  # here, not at the top: a worker that only collects this file need not import the SDK

    judged = comparator.request("Greet the user", ("hello A", {}), ("hi B", {"f.txt": b"file B"}))
    body = anthropic_provider.params(judged, Endpoint(provider="anthropic", model="claude-sonnet-4-6"))
    assert isinstance(body["messages"][0]["content"], list)  # what broke the scripts that read a string
    with anthropic.Anthropic(base_url=api.url, api_key="k", max_retries=0, timeout=10) as client:
        client.messages.create(**body)
        client.messages.create(model="m", max_tokens=5, messages=[
            {"role": "user", "content": "plain"}, {"role": "assistant", "content": "yes"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ran"},
                                         {"type": "text", "text": "and then?"}]}])
    blocks, plain = api.requests[-2:]
    assert blocks.message_text(0) == judged.user and "<output_1>\n<output>\nhello A" in blocks.message_text(0)
    assert [plain.message_text(i) for i in (0, 1, 2, -1)] == ["plain", "yes", "and then?", "and then?"]
    assert plain.message_text(3) == "" and plain.message_text(-4) == ""  # no such message


def test_responses_input_parts_and_a_bare_string_input(api: FakeAPI) -> None:
    import openai

    with openai.OpenAI(base_url=api.openai_url, api_key="k", max_retries=0, timeout=10) as client:
        client.responses.create(model="g", input=[{"role": "user", "content": [
            {"type": "input_text", "text": "fixed part, "}, {"type": "input_text", "text": "then the rest"}]}])
        client.responses.create(model="g", input="just this")
    parts, bare = api.requests[-2:]
    assert parts.message_text(0) == "fixed part, then the rest"
    assert bare.message_text(0) == "just this" and bare.message_text(1) == ""


def test_content_text_leaves_out_blocks_without_text_of_their_own() -> None:
    assert content_text([{"type": "image", "source": {"type": "base64", "data": "xx"}},
                         {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
                         {"type": "text", "text": "b"}]) == "ab"
    assert content_text(None) == "" and content_text("s") == "s"
