"""The fake model API, driven by the real anthropic and openai SDKs (httpx2) over loopback."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx2
import pytest

from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.lazy import lazy

if TYPE_CHECKING:
    import anthropic
    import openai
else:  # imported by the first test that uses them, not in every worker that collects this file (tests/lazy.py)
    anthropic, openai = lazy("anthropic"), lazy("openai")

# conftest.py provides fake_api to every test; importing it here too keeps this file runnable on its own.
from tests.fakeapi.fixtures import fake_api  # noqa: F401

USER: Any = [{"role": "user", "content": "hi"}]


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as server:
        yield server


@pytest.fixture
def claude(api: FakeAPI) -> Iterator[anthropic.Anthropic]:
    # Strict validation: every JSON body must match the SDK's pydantic models exactly, not just parse.
    with anthropic.Anthropic(base_url=api.url, api_key="test-key", max_retries=0, timeout=10,
                             _strict_response_validation=True) as client:
        yield client


@pytest.fixture
def gpt(api: FakeAPI) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=api.openai_url, api_key="test-key", max_retries=0, timeout=10,
                       _strict_response_validation=True) as client:
        yield client


# -- Anthropic Messages ---------------------------------------------------------------------------------------

def test_messages_json(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    api.enqueue(Reply.text("hello", usage={"input_tokens": 10, "output_tokens": 5}), endpoint="/v1/messages")
    message = claude.messages.create(model="claude-test", max_tokens=50, system="be brief", messages=USER)
    assert message.content[0].type == "text" and message.content[0].text == "hello"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (10, 5)
    assert message.stop_reason == "end_turn" and message.model == "claude-test"
    [request] = api.requests
    assert request.path == "/v1/messages" and request.model == "claude-test" and not request.stream
    assert "test-key" in request.headers.get("x-api-key", request.headers.get("authorization", ""))
    assert request.text() == "be brief\nhi"


def test_messages_stream_accumulates_long_text(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    text = "a long answer that the server splits into many deltas " * 5
    api.enqueue(Reply.text(text, stop_reason="max_tokens"))
    with claude.messages.stream(model="m", max_tokens=50, messages=USER) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert len(pieces) > 5 and "".join(pieces) == text
    assert final.stop_reason == "max_tokens" and final.usage.output_tokens == len(text) // 4
    assert api.requests[0].stream


def test_tool_use_stream_then_tool_result(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    args = {"file_path": "out.md", "content": "x" * 100}
    api.enqueue(Reply.tool_use("Write", args, text="writing it"), Reply.text("done"))
    with claude.messages.stream(model="m", max_tokens=50, messages=USER) as stream:
        first = stream.get_final_message()
    assert first.stop_reason == "tool_use"
    text, call = first.content
    assert text.type == "text" and text.text == "writing it"
    assert call.type == "tool_use" and call.name == "Write" and call.input == args
    followup = [*USER, {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "wrote 100"}]}]
    second = claude.messages.create(model="m", max_tokens=50, messages=followup)
    assert second.content[0].type == "text" and second.content[0].text == "done"
    assert [r.turn for r in api.requests] == [0, 1]
    assert api.requests[1].tool_results() == ["wrote 100"]


def test_count_tokens_and_models(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    assert claude.messages.count_tokens(model="m", messages=USER).input_tokens >= 1
    assert "claude-sonnet-4-6" in [m.id for m in claude.models.list().data]
    assert api.count("/v1/messages/count_tokens") == 1 and api.count("/v1/messages") == 0
    assert api.unexpected == []


# -- OpenAI Responses and chat completions --------------------------------------------------------------------

def test_responses_json(api: FakeAPI, gpt: openai.OpenAI) -> None:
    api.enqueue(Reply.text("hi there", usage={"input_tokens": 7, "output_tokens": 3}), endpoint="/v1/responses")
    response = gpt.responses.create(model="gpt-test", instructions="sys", input="question")
    assert response.output_text == "hi there" and response.status == "completed"
    assert response.usage is not None and (response.usage.input_tokens, response.usage.output_tokens) == (7, 3)
    assert api.requests[0].text() == "sys\nquestion"
    assert api.requests[0].headers["authorization"] == "Bearer test-key"


def test_responses_stream_with_function_call(api: FakeAPI, gpt: openai.OpenAI) -> None:
    api.enqueue(Reply.turn(Reply.text("let me look"), Reply.tool_use("shell", {"command": ["ls", "-la"]})))
    with gpt.responses.stream(model="gpt-test", input="list files") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert {"response.output_item.added", "response.output_text.delta", "response.output_item.done",
            "response.function_call_arguments.delta"} <= set(kinds)
    message, call = final.output
    assert message.type == "message" and final.output_text == "let me look"
    assert call.type == "function_call" and call.name == "shell"
    assert json.loads(call.arguments) == {"command": ["ls", "-la"]}
    assert final.usage is not None and final.usage.total_tokens > 0


def test_responses_turn_counts_function_call_items() -> None:
    body = {"input": [{"role": "user", "content": "go"},
                      {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
                      {"type": "function_call", "call_id": "c2", "name": "shell", "arguments": "{}"},
                      {"type": "function_call_output", "call_id": "c1", "output": "ok"},
                      {"type": "function_call_output", "call_id": "c2", "output": "fine"}]}
    request = Recorded(method="POST", path="/v1/responses", query="", headers={}, body=b"", json=body, index=0)
    assert request.turn == 1 and request.tool_results() == ["ok", "fine"]


def test_chat_completions_json_and_stream(api: FakeAPI, gpt: openai.OpenAI) -> None:
    api.enqueue(Reply.text("plain"), Reply.tool_use("lookup", {"q": "weather in Paris today"}))
    assert gpt.chat.completions.create(model="g", messages=USER).choices[0].message.content == "plain"
    chunks = list(gpt.chat.completions.create(model="g", messages=USER, stream=True,
                                              stream_options={"include_usage": True}))
    calls = [c.choices[0].delta.tool_calls[0] for c in chunks if c.choices and c.choices[0].delta.tool_calls]
    arguments = "".join(call.function.arguments or "" for call in calls if call.function)
    assert json.loads(arguments) == {"q": "weather in Paris today"}
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert chunks[-1].usage is not None and chunks[-1].choices == []


# -- scripting --------------------------------------------------------------------------------------------------

def test_queue_order_script_and_default(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    api.enqueue(Reply.text("any"))
    api.enqueue(Reply.text("specific"), endpoint="/v1/messages")
    api.script = lambda req: Reply.text("scripted") if "script me" in req.text() else None
    api.default = Reply.text("default")

    def ask(text: str) -> str:
        block = claude.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": text}])
        return block.content[0].text  # type: ignore[union-attr]

    assert [ask("a"), ask("b"), ask("script me"), ask("c")] == ["specific", "any", "scripted", "default"]
    assert api.count("/v1/messages") == 4 and api.count() == 4


def test_nothing_scripted_is_a_400_and_unexpected(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.BadRequestError, match="nothing queued or scripted"):
        claude.messages.create(model="m", max_tokens=5, messages=USER)
    assert len(api.unexpected) == 1


def test_unknown_path_is_404_in_provider_shape(api: FakeAPI, gpt: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        gpt.embeddings.create(model="e", input="x")
    assert caught.value.body["code"] == "unknown_url"  # type: ignore[index]
    assert [r.path for r in api.unexpected] == ["/v1/embeddings"]


def test_follows_skill(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    marker = "Always answer in UPPERCASE."
    api.script = FakeAPI.follows_skill(marker, Reply.text("HELLO"), lambda req: Reply.text("hello"))
    with_skill = claude.messages.create(model="m", max_tokens=5, system="Skill:\nAlways answer\nin UPPERCASE.",
                                        messages=USER)
    without = claude.messages.create(model="m", max_tokens=5, messages=USER)
    in_tool_result = claude.messages.create(model="m", max_tokens=5, messages=[
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": f"body: {marker}"}]}])
    texts = [m.content[0].text for m in (with_skill, without, in_tool_result)]  # type: ignore[union-attr]
    assert texts == ["HELLO", "hello", "HELLO"]


def test_by_turn_is_stateless(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    api.script = FakeAPI.by_turn(Reply.tool_use("Read", {"path": "a"}), Reply.text("end"))
    first = claude.messages.create(model="m", max_tokens=5, messages=USER)
    again = claude.messages.create(model="m", max_tokens=5, messages=USER)
    later = claude.messages.create(model="m", max_tokens=5, messages=[
        *USER, {"role": "assistant", "content": "x"}, {"role": "user", "content": "y"},
        {"role": "assistant", "content": "z"}, {"role": "user", "content": "w"}])
    assert [first.stop_reason, again.stop_reason, later.stop_reason] == ["tool_use", "tool_use", "end_turn"]


def test_reset_and_concurrent_counting(api: FakeAPI) -> None:
    api.default = Reply.text("ok")
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        with anthropic.Anthropic(base_url=api.url, api_key="k", max_retries=0) as client:
            for _ in range(5):
                client.messages.create(model="m", max_tokens=5, messages=USER)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert api.count("/v1/messages") == 40
    assert sorted(r.index for r in api.requests) == list(range(40))
    api.reset()
    assert api.count() == 0 and api.default is None


# -- faults ---------------------------------------------------------------------------------------------------

def test_429_retry_after_then_success(api: FakeAPI) -> None:
    api.enqueue(Reply.fault("429", retry_after=0.01), Reply.fault("429", retry_after=0.01), Reply.text("finally"))
    with anthropic.Anthropic(base_url=api.url, api_key="k", max_retries=2) as client:
        message = client.messages.create(model="m", max_tokens=5, messages=USER)
    assert message.content[0].text == "finally"  # type: ignore[union-attr]
    assert api.count("/v1/messages") == 3


def test_429_exhausts_retries(api: FakeAPI) -> None:
    api.enqueue(*[Reply.fault("429", retry_after=0.01)] * 3)
    with anthropic.Anthropic(base_url=api.url, api_key="k", max_retries=1) as client, \
            pytest.raises(anthropic.RateLimitError) as caught:
        client.messages.create(model="m", max_tokens=5, messages=USER)
    assert caught.value.response.headers["retry-after"] == "0.01"
    assert caught.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    assert api.count("/v1/messages") == 2 and api.pending() == 1


@pytest.mark.parametrize(("fault", "error"), [("529", "InternalServerError"), ("500", "InternalServerError")])
def test_server_errors_are_retried(api: FakeAPI, fault: str, error: str) -> None:
    api.enqueue(Reply.fault(fault, retry_after=0.01), Reply.fault(fault, retry_after=0.01))
    with anthropic.Anthropic(base_url=api.url, api_key="k", max_retries=1) as client, \
            pytest.raises(getattr(anthropic, error)):
        client.messages.create(model="m", max_tokens=5, messages=USER)
    assert api.count("/v1/messages") == 2


def test_openai_500_retried_then_success(api: FakeAPI) -> None:
    api.enqueue(Reply.fault("500", retry_after=0.01), Reply.text("ok"), endpoint="/v1/responses")
    with openai.OpenAI(base_url=api.openai_url, api_key="k", max_retries=1) as client:
        assert client.responses.create(model="g", input="x").output_text == "ok"
    assert api.count("/v1/responses") == 2


def test_hang_times_out_and_close_does_not_wait() -> None:
    api = FakeAPI()
    api.enqueue(Reply.fault("hang", seconds=60))
    with anthropic.Anthropic(base_url=api.url, api_key="k", max_retries=0, timeout=0.3) as client, \
            pytest.raises(anthropic.APITimeoutError):
        client.messages.create(model="m", max_tokens=5, messages=USER)
    api.close()  # must return although the hung handler would sleep for a minute
    assert not api._thread.is_alive()
    assert not any(t.name == "fakeapi-conn" and t.is_alive() for t in threading.enumerate())


def test_reset_is_a_connection_error(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    api.enqueue(Reply.fault("reset"))
    with pytest.raises(anthropic.APIConnectionError):
        claude.messages.create(model="m", max_tokens=5, messages=USER)


def test_truncated_stream_raises(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    api.enqueue(Reply.fault("truncated"))
    with pytest.raises((httpx2.HTTPError, anthropic.APIError)), \
            claude.messages.stream(model="m", max_tokens=5, messages=USER) as stream:
        stream.get_final_message()


def test_truncated_responses_stream_raises(api: FakeAPI, gpt: openai.OpenAI) -> None:
    api.enqueue(Reply.fault("truncated"))
    with pytest.raises((httpx2.HTTPError, openai.APIError, RuntimeError)), \
            gpt.responses.stream(model="g", input="x") as stream:
        stream.get_final_response()


def test_truncated_json_body_is_a_connection_error(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    api.enqueue(Reply.fault("truncated"))
    with pytest.raises(anthropic.APIConnectionError):
        claude.messages.create(model="m", max_tokens=5, messages=USER)


def test_non_json_200_raises(api: FakeAPI, claude: anthropic.Anthropic, gpt: openai.OpenAI) -> None:
    api.enqueue(Reply.fault("non_json"), Reply.fault("non_json"), Reply.fault("non_json"))
    with pytest.raises(anthropic.APIResponseValidationError):
        claude.messages.create(model="m", max_tokens=5, messages=USER)
    with pytest.raises(openai.APIResponseValidationError):
        gpt.responses.create(model="g", input="x")
    # Without strict validation the SDKs hand back the page as a str: callers must check the type.
    with anthropic.Anthropic(base_url=api.url, api_key="k", max_retries=0) as lax:
        page = lax.messages.create(model="m", max_tokens=5, messages=USER)
    assert isinstance(page, str) and page.startswith("<html>")


def test_stream_error_event(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    api.enqueue(Reply.fault("stream_error"))
    with pytest.raises(anthropic.APIStatusError, match="Overloaded"), \
            claude.messages.stream(model="m", max_tokens=5, messages=USER) as stream:
        stream.get_final_message()


def test_unknown_fault_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        Reply.fault("slow")


def test_close_shuts_idle_keepalive_connections() -> None:
    api = FakeAPI()
    conn = http.client.HTTPConnection(api.url.removeprefix("http://"), timeout=5)
    try:
        conn.request("GET", "/v1/models")
        response = conn.getresponse()
        assert response.status == 200 and json.loads(response.read())["data"]
        assert conn.sock is not None  # kept alive: the handler now blocks reading the next request
        api.close()
        assert conn.sock.recv(1) == b""  # close() shut the kept-alive connection
    finally:
        conn.close()
    assert not any(t.name == "fakeapi-conn" and t.is_alive() for t in threading.enumerate())


def test_fake_api_fixture_serves_and_closes(fake_api: FakeAPI) -> None:  # noqa: F811
    fake_api.default = Reply.text("from the fixture")
    with anthropic.Anthropic(base_url=fake_api.url, api_key="k", max_retries=0) as client:
        reply = client.messages.create(model="m", max_tokens=5, messages=USER)
    assert reply.content[0].text == "from the fixture"  # type: ignore[union-attr]


def test_a_script_that_raises_is_a_clear_500(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    def broken(request: Recorded) -> Reply:
        raise KeyError("missing")

    api.script = broken
    with pytest.raises(anthropic.InternalServerError, match="the script raised KeyError"):
        claude.messages.create(model="m", max_tokens=5, messages=USER)
    assert len(api.errors) == 1 and "KeyError" in api.errors[0]


def test_a_reused_tool_reply_gets_fresh_call_ids(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    api.default = Reply.tool_use("Read", {"path": "a"})
    ids = {claude.messages.create(model="m", max_tokens=5, messages=USER).content[0].id  # type: ignore[union-attr]
           for _ in range(2)}
    assert len(ids) == 2
    api.default = Reply.tool_use("Read", {"path": "a"}, id="toolu_fixed")
    assert claude.messages.create(model="m", max_tokens=5, messages=USER).content[0].id == "toolu_fixed"  # type: ignore[union-attr]


# -- errors with a message, 200s that report a failure, raw bodies -------------------------------------------

def test_an_error_with_a_message_in_each_providers_shape(api: FakeAPI, claude: anthropic.Anthropic,
                                                         gpt: openai.OpenAI) -> None:
    api.enqueue(Reply.error(401, "invalid x-api-key: sk-echoed"), Reply.error(401, "Incorrect API key sk-echoed"),
                Reply.error(429, "slow down", retry_after=2))
    with pytest.raises(anthropic.AuthenticationError) as caught:
        claude.messages.create(model="m", max_tokens=5, messages=USER)
    assert caught.value.body == {"type": "error", "request_id": caught.value.body["request_id"],  # type: ignore[index]
                                 "error": {"type": "authentication_error", "message": "invalid x-api-key: sk-echoed"}}
    with pytest.raises(openai.AuthenticationError, match="Incorrect API key sk-echoed"):
        gpt.chat.completions.create(model="g", messages=USER)
    with pytest.raises(anthropic.RateLimitError, match="slow down") as limited:
        claude.messages.create(model="m", max_tokens=5, messages=USER)
    assert limited.value.response.headers["retry-after"] == "2"
    with pytest.raises(ValueError, match="not an HTTP error"):
        Reply.error(200, "fine")


def test_failed_is_a_failed_response_object(api: FakeAPI, gpt: openai.OpenAI) -> None:
    api.enqueue(Reply.failed("quota gone"), Reply.failed("quota gone"))
    response = gpt.responses.create(model="g", input="x")
    assert response.status == "failed" and response.error is not None and response.error.message == "quota gone"
    events = list(gpt.responses.create(model="g", input="x", stream=True))
    assert [e.type for e in events] == ["response.created", "response.failed"]
    failed: Any = events[-1]
    assert failed.response.status == "failed" and failed.response.error.message == "quota gone"


def test_failed_on_messages_and_chat_is_a_200_error_body(api: FakeAPI, claude: anthropic.Anthropic) -> None:
    api.enqueue(Reply.failed("backend exploded"), endpoint="/v1/messages")
    api.enqueue(Reply.failed("backend exploded"), endpoint="/v1/chat/completions")
    raw = claude.messages.with_raw_response.create(model="m", max_tokens=5, messages=USER)
    body = json.loads(raw.http_response.text)
    assert raw.http_response.status_code == 200 and body["type"] == "error"
    assert body["error"]["message"] == "backend exploded"
    with openai.OpenAI(base_url=api.openai_url, api_key="k", max_retries=0) as lax:
        chat = lax.chat.completions.with_raw_response.create(model="g", messages=USER)
    assert json.loads(chat.http_response.text)["error"]["message"] == "backend exploded"
    api.enqueue(Reply.failed("mid-stream"), endpoint="/v1/messages")
    with pytest.raises(anthropic.APIStatusError, match="mid-stream"), \
            claude.messages.stream(model="m", max_tokens=5, messages=USER) as stream:
        stream.get_final_message()


def test_raw_sends_the_body_verbatim(api: FakeAPI) -> None:
    api.enqueue(Reply.raw("<html>proxy says no</html>", status=502, content_type="text/html"))
    connection = http.client.HTTPConnection("127.0.0.1", int(api.url.rsplit(":", 1)[1]), timeout=5)
    connection.request("POST", "/v1/messages", body=b"{}", headers={"content-type": "application/json"})
    response = connection.getresponse()
    assert (response.status, response.getheader("content-type"), response.read()) == (
        502, "text/html", b"<html>proxy says no</html>")
    connection.close()
