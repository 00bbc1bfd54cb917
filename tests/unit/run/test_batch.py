"""run/batch.py's store of batches: a stored answer is used without any call (a run killed after the results came
but before its grades were written pays nothing again), a request a batch did not answer is a judge error naming why,
and batch files nothing needs any more are dropped while unfinished ones are kept."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from skillmake.run import batch
from skillmake.run.judges import rubric
from skillmake.run.judges.base import Endpoint, JudgeCallError, JudgeRequest
from tests.fakeapi import Reply
from tests.fakeapi.anthropic_wire import message

# Nothing listens here: any call a test lets through fails it.
CLAUDE = Endpoint(provider="anthropic", model="claude-sonnet-4-6", base_url="http://127.0.0.1:9", api_key="k")


def ask(text: str) -> JudgeRequest:
    return JudgeRequest(judge="rubric", system="s", user=text, schema=rubric.SCHEMA)


def store(project: Any, name: str, *, status: str, results: dict[str, Any], age_days: float = 0) -> Path:
    created = (dt.datetime.now(dt.UTC) - dt.timedelta(days=age_days)).isoformat(timespec="seconds")
    data = {"provider": "anthropic", "model": "claude-sonnet-4-6", "id": name, "created": created, "status": status,
            "ids": list(results) or ["sm-x"], "results": results}
    path = batch.folder(project) / f"anthropic-{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Any:
    return SimpleNamespace(state_dir=tmp_path / ".skillmake")


def verdict(score: int) -> dict[str, Any]:
    reply = Reply.tool_use("record_verdict", {"score": score, "reason": "r"}).with_ids()
    return message(reply, model="claude-sonnet-4-6", usage={"input_tokens": 1000, "output_tokens": 200,
                                                            "cache_read_input_tokens": 0,
                                                            "cache_creation_input_tokens": 0})


def test_a_stored_answer_is_used_without_any_call_at_the_batch_price(project: Any) -> None:
    request = ask("judge this")
    cid = batch.custom_id(request, CLAUDE)
    store(project, "msgbatch_old", status="ended", results={cid: {"message": verdict(4)}})
    said: list[str] = []
    summary = batch.settle(project, {cid: batch.Wanted(endpoint=CLAUDE, request=request)}, say=said.append)
    assert (summary.reused, summary.sent, summary.created, summary.failed, said) == (1, 0, [], 0, [])
    reply = batch.answer(project)(request, CLAUDE)
    assert reply.data == {"score": 4, "reason": "r"}
    assert reply.usage.cost_usd == 0.003  # (1,000 × $3 + 200 × $15) / 1M = $0.006, halved
    assert reply.usage.requests == 1


def test_an_unanswered_request_is_a_judge_error_naming_why(project: Any) -> None:
    failed, missing = ask("failed"), ask("never sent")
    store(project, "msgbatch_e", status="ended",
          results={batch.custom_id(failed, CLAUDE): {"error": "the batch request was expired before it was processed"}})
    call = batch.answer(project)
    with pytest.raises(JudgeCallError, match="expired before it was processed"):
        call(failed, CLAUDE)
    with pytest.raises(JudgeCallError, match="no batch holds this judge request") as err:
        call(missing, CLAUDE)
    assert err.value.requests == 0


def test_an_answer_beats_an_error_for_the_same_request_whichever_batch_holds_it(project: Any) -> None:
    request = ask("retried")
    cid = batch.custom_id(request, CLAUDE)
    store(project, "msgbatch_a", status="ended", results={cid: {"message": verdict(5)}})
    store(project, "msgbatch_b", status="ended", results={cid: {"error": "errored"}})
    assert batch.answer(project)(request, CLAUDE).data == {"score": 5, "reason": "r"}


def test_batch_files_nothing_needs_are_dropped_and_unfinished_ones_kept(project: Any) -> None:
    wanted_request = ask("wanted")
    cid = batch.custom_id(wanted_request, CLAUDE)
    useful = store(project, "msgbatch_useful", status="ended", results={cid: {"message": verdict(5)}})
    spent = store(project, "msgbatch_spent", status="ended", results={"sm-other": {"message": verdict(5)}})
    failed = store(project, "msgbatch_failed", status="ended", results={cid: {"error": "errored"}})
    running = store(project, "msgbatch_running", status="open", results={})
    ancient = store(project, "msgbatch_ancient", status="open", results={}, age_days=30)
    batch.settle(project, {cid: batch.Wanted(endpoint=CLAUDE, request=wanted_request)}, say=lambda _: None)
    assert [p.exists() for p in (useful, spent, failed, running, ancient)] == [True, False, False, True, False]


def test_a_stored_batch_the_provider_does_not_know_is_sent_again_not_waited_on_forever(project: Any) -> None:
    from tests.fakeapi import FAKE_KEY, FakeAPI

    request = ask("sent long ago, elsewhere")
    with FakeAPI() as api:
        api.default = Reply.tool_use("record_verdict", {"score": 5, "reason": "r"})
        api.batches.polls = 0
        target = Endpoint(provider="anthropic", model="claude-sonnet-4-6", base_url=api.url, api_key=FAKE_KEY)
        cid = batch.custom_id(request, target)
        old = store(project, "msgbatch_elsewhere", status="open", results={cid: {}})
        said: list[str] = []
        summary = batch.settle(project, {cid: batch.Wanted(endpoint=target, request=request)}, say=said.append,
                               poll_s=0.01)
        assert not old.exists() and len(summary.created) == 1 and summary.resumed == [] and summary.failed == 0
        assert any("does not know this batch" in line for line in said)
        assert batch.answer(project)(request, target).data == {"score": 5, "reason": "r"}


def test_a_run_larger_than_one_batch_holds_is_sent_as_several_all_before_any_wait(
        project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fakeapi import FAKE_KEY, FakeAPI

    monkeypatch.setattr(batch, "MAX_REQUESTS", 2)
    with FakeAPI() as api:
        api.default = Reply.tool_use("record_verdict", {"score": 5, "reason": "r"})
        api.batches.polls = 1
        target = Endpoint(provider="anthropic", model="claude-sonnet-4-6", base_url=api.url, api_key=FAKE_KEY)
        requests = [ask(f"output {i}") for i in range(5)]
        wanted = {batch.custom_id(r, target): batch.Wanted(endpoint=target, request=r) for r in requests}
        summary = batch.settle(project, wanted, say=lambda _: None, poll_s=0.01)
        order = [(r.method, r.path.count("/")) for r in api.requests]
    assert len(summary.created) == 3 and summary.sent == 5 and summary.failed == 0
    assert order[:3] == [("POST", 3)] * 3  # three creates first, then the polls
    assert all(batch.answer(project)(r, target).data == {"score": 5, "reason": "r"} for r in requests)
