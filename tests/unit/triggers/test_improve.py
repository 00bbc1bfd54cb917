"""The description improver: what its request shows (and hides), how its answers are read, the 1024-character
limit (asked once more, then cut), and the proposal cache — the same request is answered from the store with no
call, and every input of the request is part of its key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillmake.run.agents.base import Usage
from skillmake.run.judges.base import JudgeCallError, JudgeRequest, ProviderReply, ReplyError
from skillmake.run.judges.resolve import Choice
from skillmake.store.objects import Store
from skillmake.triggers import improve, prompt
from skillmake.triggers.improve import Improver, key_inputs, propose

IMPROVER = Improver(choice=Choice(provider="anthropic", model="claude-test"))
TRAIN = [
    {"id": "a", "query": "find kid activities", "should_trigger": True, "triggers": 2, "runs": 2, "pass": True,
     "trigger_rate": 1.0, "errors": 0},
    {"id": "b", "query": "fun outings with toddlers", "should_trigger": True, "triggers": 0, "runs": 2, "pass": False,
     "trigger_rate": 0.0, "errors": 0},
    {"id": "c", "query": "find a place to eat", "should_trigger": False, "triggers": 2, "runs": 2, "pass": False,
     "trigger_rate": 1.0, "errors": 0},
]
HISTORY = [{"description": "Kids near a place", "train_passed": 1, "train_total": 3, "results": TRAIN}]


def inputs(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": "kids", "content": "---\nname: kids\n---\nBody v1.\n",
                            "description": "Kids near a place", "train": TRAIN, "history": HISTORY,
                            "improver": IMPROVER}
    return key_inputs(**{**base, **changes})


class Model:
    """A scripted provider: answers in order, counts calls, keeps the requests."""

    def __init__(self, *answers: ProviderReply | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[JudgeRequest] = []

    def __call__(self, request: JudgeRequest, target: Any) -> ProviderReply:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def tool(description: str, **extra: Any) -> ProviderReply:
    return ProviderReply(data={"description": description, **extra}, text="", usage=Usage(requests=1))


def text(reply: str) -> ProviderReply:
    return ProviderReply(data=None, text=reply, usage=Usage(requests=1))


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Any:
    def install(*answers: ProviderReply | Exception) -> Model:
        fake = Model(*answers)
        monkeypatch.setattr(improve, "_complete", fake)
        return fake
    return install


def test_the_request_shows_failures_by_kind_history_content_and_limit() -> None:
    user = prompt.user_text(inputs())
    missed, false = user.split("FALSE TRIGGERS")
    assert '"fun outings with toddlers" (triggered 0/2 times)' in missed.split("MISSED")[1]
    assert '"find a place to eat" (triggered 2/2 times)' in false.split("EARLIER ATTEMPTS")[0]
    assert "find kid activities\" (triggered" not in missed  # passing queries are not failures …
    assert '[PASS] "find kid activities" (triggered 2/2)' in user  # … but the history lists every train result
    assert "<attempt train=1/3>" in user and '"Kids near a place"' in user
    assert "Body v1." in user and '"kids"' in user and "1024 characters" in user
    assert "test" not in user.lower().replace("test queries", "")  # no test score, no test query


def test_answers_are_read_leniently_and_an_empty_one_is_refused() -> None:
    request = prompt.request(inputs())
    assert prompt.read(request, tool("  \"New desc\"  ", confidence="high")) == "New desc"
    assert prompt.read(request, text("Sure!\n<new_description>Use it {always}</new_description>")) == "Use it {always}"
    assert prompt.read(request, text('"Plain answer"')) == "Plain answer"
    assert prompt.read(request, text('{"description": "As JSON"}')) == "As JSON"
    with pytest.raises(ReplyError, match="empty"):
        prompt.read(request, tool("   "))


def test_cut_stops_at_a_word_near_the_limit() -> None:
    assert prompt.cut("short") == "short"
    long = "word " * 300
    assert len(prompt.cut(long)) <= 1024 and prompt.cut(long).endswith("word")
    assert prompt.cut("x" * 2000) == "x" * 1024


def test_a_proposal_is_asked_once_then_replayed_from_the_store(tmp_path: Path, model: Any) -> None:
    fake = model(tool("Use this skill for outings with children"))
    store = Store(tmp_path)
    first = propose(store, inputs(), IMPROVER, run_id="r1")
    assert (first.description, first.reused, first.made, first.requests) == (
        "Use this skill for outings with children", False, 1, 1)
    again = propose(store, inputs(), IMPROVER, run_id="r2")
    assert (again.description, again.reused, again.made, again.calls) == (first.description, True, 0, 1)
    assert len(fake.requests) == 1


@pytest.mark.parametrize("change", [
    {"description": "Other"}, {"content": "---\nname: kids\n---\nBody v2.\n"}, {"name": "kids2"},
    {"train": [dict(TRAIN[0], triggers=1), *TRAIN[1:]]}, {"history": []},
    {"improver": Improver(choice=Choice(provider="anthropic", model="claude-other"))},
    {"improver": Improver(choice=Choice(provider="anthropic", model="claude-test"), temperature=0.0)},
])
def test_every_input_of_the_request_is_in_the_key(change: dict[str, Any]) -> None:
    assert improve.digest_json(inputs(**change)) != improve.digest_json(inputs())


def test_what_the_request_does_not_show_is_not_in_the_key() -> None:
    renamed = [dict(r, id=f"other-{r['id']}", trigger_rate=None, errors=3) for r in TRAIN]
    assert inputs(train=renamed) == inputs()


def test_over_the_limit_it_asks_once_more_then_cuts(tmp_path: Path, model: Any) -> None:
    fake = model(tool("a " * 700), tool("short enough"))
    done = propose(Store(tmp_path / "one"), inputs(), IMPROVER, run_id=None)
    assert (done.description, done.rewritten, done.truncated, done.calls) == ("short enough", True, False, 2)
    assert "1399 characters long, over the hard limit of 1024" in fake.requests[1].user
    model(tool("b " * 700), tool("c " * 600))
    done = propose(Store(tmp_path / "two"), inputs(), IMPROVER, run_id=None)
    assert done.rewritten and done.truncated and len(done.description or "") <= 1024
    replayed = propose(Store(tmp_path / "two"), inputs(), IMPROVER, run_id=None)
    assert (replayed.reused, replayed.truncated, replayed.calls) == (True, True, 2)


def test_no_proposal_is_an_error_and_is_not_cached(tmp_path: Path, model: Any) -> None:
    store = Store(tmp_path)
    model(JudgeCallError("HTTP 500 forever", requests=5))
    failed = propose(store, inputs(), IMPROVER, run_id=None)
    assert failed.description is None and "HTTP 500 forever" in (failed.error or "") and failed.requests == 5
    model(tool(""))
    failed = propose(store, inputs(), IMPROVER, run_id=None)
    assert failed.description is None and "empty description" in (failed.error or "")
    model(tool("finally"))
    assert propose(store, inputs(), IMPROVER, run_id=None).description == "finally"  # asked again each time
