"""Batch judging (--batch, judge.batch): every stale grade's judge request goes to the provider as one batch, whose id
is kept so an interrupted run resumes it; verdicts land under the same grade keys as synchronous ones. Through the
real CLI and the real SDKs against the loopback fake's batch endpoints."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakeapi import FakeAPI, Reply
from tests.functional.project import Project, Run

# Long enough to be cached (the fake, as the real API, caches no prefix under 1,024 tokens on claude-sonnet-4-6).
GUIDANCE = " ".join(["A friendly greeting is warm and direct, with no sarcasm or filler."] * 70)
SKILL = f"---\nname: s\ndescription: says hi\n---\nSay hi. {GUIDANCE}\n"
VERDICT = Reply.tool_use("record_verdict", {"score": 5, "reason": "friendly"})


def spec(trials: int, *, provider: str = "anthropic", model: str = "claude-sonnet-4-6", extra: str = "") -> str:
    return ("skill: skills/s\nagent: {kind: command, command: [sh, -c, 'echo hello $SKILLMAKE_TRIAL']}\n"
            f"trials: {trials}\njudge: {{provider: {provider}, model: {model}{extra}}}\n"
            f"cases:\n  - id: one\n    prompt: say hi\n    rubric: Is the greeting friendly? {GUIDANCE}\n")


def new_project(root: Path, trials: int, **kwargs: str) -> Project:
    return Project.empty(root, {"skills/s/SKILL.md": SKILL, "s.eval.yaml": spec(trials, **kwargs)})


def batch_calls(api: FakeAPI, base: str = "/v1/messages/batches") -> tuple[int, int, int]:
    """(creates, polls, result fetches) the fake saw on Anthropic's batch endpoints."""
    creates = sum(1 for r in api.requests if r.path == base and r.method == "POST")
    polls = sum(1 for r in api.requests if r.method == "GET" and re.fullmatch(base + r"/[^/]+", r.path))
    fetches = sum(1 for r in api.requests if r.method == "GET" and r.path.endswith("/results"))
    return creates, polls, fetches


def grades(project: Project) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((project.root / ".skillmake/runs/s/one/with_skill").glob(
        "trial-*/grade.json"))]


def spent(out: str) -> tuple[float, float | None]:
    m = re.search(r"spent [\d,]+ tokens \$([\d.]+)(?: \(cache saved \$([\d.]+)\))?", out)
    assert m is not None, out
    return float(m.group(1)), float(m.group(2)) if m.group(2) else None


BATCH_ENV = {"SKILLMAKE_BATCH_POLL": "0.05"}


@pytest.fixture(scope="module")
def two_hundred(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """200 trials judged by one batch (the fake answers in_progress to 3 polls), then a synchronous run."""
    root = tmp_path_factory.mktemp("batch200")
    with FakeAPI() as api:
        api.default = VERDICT
        api.batches.polls = 3
        project = new_project(root / "p", 200)
        first = project.run("--batch", "-j", "4", env={**api.anthropic_env(), **BATCH_ENV})
        seen = {"calls": batch_calls(api), "sync": api.count("/v1/messages"), "inner": list(api.batches.inner)}
        before = len(api.requests)
        again = project.run("-j", "4", env=api.anthropic_env())  # synchronous: reuses every batched verdict
        yield {"project": project, "first": first, "again": again, "after": len(api.requests) - before, **seen}


def test_200_stale_grades_make_one_batch_and_no_synchronous_judge_call(two_hundred: dict[str, Any]) -> None:
    first: Run = two_hundred["first"]
    assert first.code == 0, first.out + first.err
    creates, polls, fetches = two_hundred["calls"]
    # 1 create; the polls until it ended: 3 in progress, the one that saw it ended, and the one the SDK's results()
    # makes to find the results URL; 1 results fetch; 0 calls to /v1/messages.
    assert (creates, polls, fetches, two_hundred["sync"]) == (1, 5, 1, 0)
    inner = two_hundred["inner"]
    assert len(inner) == 200
    assert "(0 judge requests, 200 answered in a batch at half price)" in first.out
    assert re.search(r"batch msgbatch_\w+: 200 judge requests sent to anthropic", first.err), first.err
    assert re.search(r"batch msgbatch_\w+: 0/200 done \(in_progress\)", first.err), first.err
    records = grades(two_hundred["project"])
    assert len(records) == 200 and {r["outcome"] for r in records} == {"pass"}
    # the fixed prefix is marked cacheable inside the batch too
    fixed = inner[0].json["messages"][0]["content"][0]
    assert fixed["cache_control"] == {"type": "ephemeral"} and "Is the greeting friendly?" in fixed["text"]


def test_a_synchronous_run_reuses_every_batched_verdict(two_hundred: dict[str, Any]) -> None:
    again: Run = two_hundred["again"]
    assert again.code == 0 and "nothing stale" in again.out, again.out + again.err
    assert two_hundred["after"] == 0  # not one request of any kind


def test_synchronous_verdicts_are_reused_by_a_batch_run_and_the_batch_price_is_half(tmp_path: Path) -> None:
    project = new_project(tmp_path / "p", 1)
    # 1,000 fresh input tokens, 200 out and 100,000 read from the cache, on claude-sonnet-4-6 ($3 / $15 / $0.30 per
    # million): $0.0360 synchronously, of which the cache saved $0.2700 against $3 for each cached token.
    usage = {"input_tokens": 1000, "output_tokens": 200, "cache_read_input_tokens": 100_000}
    with FakeAPI() as api:
        api.default = Reply.tool_use("record_verdict", {"score": 5, "reason": "friendly"}, usage=usage)
        sync = project.run(env=api.anthropic_env())
        assert sync.code == 0, sync.out + sync.err
        assert spent(sync.out) == (0.036, 0.27)
        reused = project.run("--batch", env={**api.anthropic_env(), **BATCH_ENV})
        assert reused.code == 0 and "nothing stale" in reused.out and api.batches.created == []
        # Another temperature is another question (a new grade key): judged again, in a batch, at half the price.
        project.replace("s.eval.yaml", "model: claude-sonnet-4-6}", "model: claude-sonnet-4-6, temperature: 1}")
        batched = project.run("--batch", env={**api.anthropic_env(), **BATCH_ENV})
        assert batched.code == 0, batched.out + batched.err
        assert len(api.batches.created) == 1 and api.count("/v1/messages") == 1
    assert spent(batched.out) == (0.018, 0.135)
    (record,) = grades(project)
    assert (record["outcome"], record["usage"]["cost_usd"], record["usage"]["cache_read_tokens"]) == \
        ("pass", 0.018, 100_000)


def test_judge_batch_in_the_spec_turns_it_on_and_failed_requests_are_judge_errors_asked_again(tmp_path: Path) -> None:
    """OpenAI's Batch API (file upload, batch, output and error files): an errored and an expired request are
    judge_error, never cached; the next run sends only those two, in a new batch."""
    project = new_project(tmp_path / "p", 4, provider="openai", model="gpt-5.4", extra=", batch: true")
    with FakeAPI() as api:
        api.default = Reply.text('{"score": 5, "reason": "friendly"}')
        api.batches.outcome = lambda index, params: {1: "errored", 2: "expired"}.get(index, "succeeded")
        first = project.run(env={**api.openai_env(), **BATCH_ENV})
        assert first.code == 1, first.out + first.err
        outcomes = sorted(r["outcome"] for r in grades(project))
        assert outcomes == ["judge_error", "judge_error", "pass", "pass"]
        errors = sorted(r["error"] for r in grades(project) if r["error"])
        assert "errored" in errors[0] or "errored" in errors[1]
        assert any("batch_expired" in e for e in errors)
        assert api.count("/v1/files") == 1 and len(api.batches.created) == 1
        api.batches.outcome = None
        second = project.run(env={**api.openai_env(), **BATCH_ENV})
        assert second.code == 0, second.out + second.err
        assert len(api.batches.created) == 2 and len(api.batches.inner) == 6  # 4, then the 2 not answered
        assert api.count("/v1/chat/completions") == 0
    assert [r["outcome"] for r in grades(project)] == ["pass"] * 4


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "Ctrl-C"])
def test_an_interrupted_run_resumes_its_batch_instead_of_sending_another(tmp_path: Path, how: signal.Signals) -> None:
    project = new_project(tmp_path / "p", 5)
    with FakeAPI() as api:
        api.default = VERDICT
        api.batches.polls = 10_000  # in progress until the test says otherwise
        env = dict(os.environ, **api.anthropic_env(), **BATCH_ENV)
        proc = subprocess.Popen([sys.executable, "-m", "skillmake", "--batch"], cwd=project.root, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while not list((project.root / ".skillmake/batches").glob("*.json")) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert api.batches.created, "the run never created its batch"
        finally:
            os.killpg(proc.pid, how)  # the whole run: a closed laptop, or Ctrl-C at the terminal
            code = proc.wait(timeout=60)
        assert code == (-9 if how == signal.SIGKILL else 130)  # Ctrl-C leaves the poll at once, no hang
        (batch_id,) = api.batches.created
        stored = json.loads(next((project.root / ".skillmake/batches").glob("*.json")).read_text())
        assert (stored["id"], stored["status"], len(stored["ids"])) == (batch_id, "open", 5)
        api.batches.polls = 0  # it has ended meanwhile
        resumed = project.run("--batch", env={**api.anthropic_env(), **BATCH_ENV})
        assert resumed.code == 0, resumed.out + resumed.err
        assert api.batches.created == [batch_id] and len(api.batches.inner) == 5
        assert api.count("/v1/messages") == 0
        assert f"batch {batch_id}: resuming the 5 judge requests" in resumed.err
    assert [r["outcome"] for r in grades(project)] == ["pass"] * 5


def test_the_cost_line_shows_what_caching_saved_an_api_agent(tmp_path: Path) -> None:
    """The anthropic agent sends the skill cacheable; 100,000 tokens read from the cache at $0.30 instead of $3 per
    million on claude-sonnet-4-6 saved $0.2700 (trials stay synchronous whatever --batch says)."""
    project = Project.empty(tmp_path / "p", {
        "skills/s/SKILL.md": SKILL,
        "s.eval.yaml": "skill: skills/s\nagent: {kind: anthropic, model: claude-sonnet-4-6}\n"
                       "cases:\n  - id: one\n    prompt: say one\n    checks: [{type: contains, needle: hi}]\n"})
    with FakeAPI() as api:
        api.default = Reply.text("hi", usage={"input_tokens": 100, "cache_read_input_tokens": 100_000,
                                              "output_tokens": 0})
        done = project.run("--batch", env={**api.anthropic_env(), **BATCH_ENV})
        assert done.code == 0, done.out + done.err
        assert api.count("/v1/messages") == 1 and api.batches.created == []
    assert spent(done.out) == (0.0303, 0.27)


def test_a_batch_the_provider_refuses_fails_the_run_in_one_message_and_grades_nothing(tmp_path: Path) -> None:
    project = new_project(tmp_path / "p", 2, extra=", batch: true")
    with FakeAPI() as api:
        api.default = VERDICT
        api.enqueue(Reply.error(401, "invalid x-api-key"), endpoint="/v1/messages/batches")
        done = project.run(env={**api.anthropic_env(), **BATCH_ENV})
        assert api.count("/v1/messages") == 0 and api.batches.created == []
    assert done.code == 1 and "Traceback" not in done.out + done.err
    assert "Anthropic batch API answered HTTP 401: invalid x-api-key; check ANTHROPIC_API_KEY" in done.out + done.err
    assert grades(project) == []


def test_plain_doit_runs_the_batch_task_too(tmp_path: Path) -> None:
    project = new_project(tmp_path / "p", 2, extra=", batch: true")
    project.write("dodo.py", "from skillmake.dodo import *  # noqa: F403\n")
    with FakeAPI() as api:
        api.default = VERDICT
        done = project.run(cmd=[sys.executable, "-m", "doit"], env={**api.anthropic_env(), **BATCH_ENV})
        assert done.code == 0, done.out + done.err
        assert len(api.batches.created) == 1 and api.count("/v1/messages") == 0
    assert [r["outcome"] for r in grades(project)] == ["pass", "pass"]


def test_explain_says_which_judge_calls_a_batch_would_make(tmp_path: Path) -> None:
    project = new_project(tmp_path / "p", 3)
    plain = project.run("explain")
    batched = project.run("explain", "--batch")
    assert plain.code == batched.code == 0, plain.out + plain.err + batched.out + batched.err
    assert "(3 judge calls)" in plain.out
    assert "(3 judge calls, 3 of them sent as a batch at half price)" in batched.out
