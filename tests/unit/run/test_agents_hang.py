"""clauditor's interactive-hang heuristic on claude-code runs, over transcripts the real CLI (2.1.328) wrote
against the fake API: claude_question.jsonl (one turn ending in a question) and claude_ask_user.jsonl (a call
to AskUserQuestion, which -p disables, then a second turn)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillmake.run.agents import AgentResult, TrialRequest
from skillmake.run.agents.claude_code import AGENT, HANG_ERROR, interactive_hang, parse_stream
from skillmake.run.process import Completed
from skillmake.run.workspace import clean_env
from skillmake.spec.loader import load_spec

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"


def events(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (STREAMS / name).read_text().splitlines() if line.strip()]


def encode(items: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in items).encode()


def edited(name: str, *, text: str | None = None, result: dict[str, Any] | None = None,
           drop: tuple[str, ...] = (), extra_block: dict[str, Any] | None = None) -> bytes:
    """A recorded stream with its assistant text, result fields or assistant blocks changed."""
    out = []
    for event in events(name):
        if event.get("type") == "assistant":
            blocks = event["message"]["content"]
            if text is not None:
                blocks = [{**b, "text": text} if b.get("type") == "text" else b for b in blocks]
            if extra_block is not None:
                blocks = [*blocks, extra_block]
            event["message"]["content"] = blocks
        if event.get("type") == "result":
            event.update(result or {})
            for key in drop:
                event.pop(key, None)
        out.append(event)
    return encode(out)


def test_a_one_turn_run_that_ends_asking_a_question_is_a_hang() -> None:
    assert interactive_hang(parse_stream((STREAMS / "claude_question.jsonl").read_bytes()))


@pytest.mark.parametrize("name", ["claude_tools.jsonl", "claude_skill.jsonl", "claude_max_turns.jsonl",
                                  "claude_is_error.jsonl", "claude_ask_user.jsonl"])
def test_the_other_recorded_runs_are_not(name: str) -> None:
    assert not interactive_hang(parse_stream((STREAMS / name).read_bytes()))


def test_the_cli_gives_stop_reason_only_on_the_result_event() -> None:
    # why the result's stop_reason stands in: every assistant message of the real stream has none
    stream = events("claude_question.jsonl")
    assert [e["message"]["stop_reason"] for e in stream if e["type"] == "assistant"] == [None]
    assert [e["stop_reason"] for e in stream if e["type"] == "result"] == ["end_turn"]


def test_a_statement_is_not_a_hang_and_trailing_whitespace_is_ignored() -> None:
    assert not interactive_hang(parse_stream(edited("claude_question.jsonl", text="Here are five venues.")))
    assert interactive_hang(parse_stream(edited("claude_question.jsonl", text="Which city?  \n")))
    # a question mid-text is an answer that asks something rhetorically, not a hang
    assert not interactive_hang(parse_stream(edited("claude_question.jsonl", text="Why? Because. Done.")))


def test_an_ask_user_question_call_in_the_one_turn_is_a_hang() -> None:
    ask = {"type": "tool_use", "id": "toolu_1", "name": "AskUserQuestion", "input": {"questions": []}}
    assert interactive_hang(parse_stream(edited("claude_question.jsonl", text="I need the city.",
                                                extra_block=ask)))


@pytest.mark.parametrize("change", [{"num_turns": 2}, {"stop_reason": "max_tokens"}, {"stop_reason": "tool_use"}])
def test_more_turns_or_another_ending_is_not_a_hang(change: dict[str, Any]) -> None:
    assert not interactive_hang(parse_stream(edited("claude_question.jsonl", result=change)))


@pytest.mark.parametrize("missing", ["num_turns", "stop_reason"])
def test_missing_facts_count_as_no_hang(missing: str) -> None:
    assert not interactive_hang(parse_stream(edited("claude_question.jsonl", drop=(missing,))))


def test_an_assistant_stop_reason_wins_over_the_results() -> None:
    stream = events("claude_question.jsonl")
    for event in stream:
        if event["type"] == "assistant":
            event["message"]["stop_reason"] = "max_tokens"
    assert not interactive_hang(parse_stream(encode(stream)))


def _request(tmp_path: Path, *, allow: bool | None) -> TrialRequest:
    project = tmp_path / "project"
    (project / "skills" / "ask").mkdir(parents=True)
    (project / "skills" / "ask" / "SKILL.md").write_text("---\nname: ask\ndescription: d\n---\nAsk.\n")
    setting = "" if allow is None else f", allow_hang_heuristic: {str(allow).lower()}"
    (project / "s.eval.yaml").write_text(f"skill: skills/ask\nagent: {{kind: claude-code{setting}}}\ncases:\n"
                                         "  - id: c\n    prompt: hi\n    checks: [{type: min_length, length: 1}]\n")
    spec = load_spec(str(project / "s.eval.yaml"))
    ws, home = tmp_path / "ws", tmp_path / "trial-home"
    ws.mkdir()
    home.mkdir()
    return TrialRequest(spec=spec, case=spec.cases[0], arm_name="with_skill", k=0, agent=spec.agent,
                        skill=spec.skill, prompt="hi", system_prompt=None, workspace=str(ws), home=str(home),
                        env=clean_env(home), timeout=30)


def _finish(request: TrialRequest, name: str, data: bytes | None = None) -> AgentResult:
    done = Completed(returncode=0, stdout=data if data is not None else (STREAMS / name).read_bytes(), stderr=b"",
                     timed_out=False, duration_ms=1.0)
    return AGENT._result(request, done, ())


def test_a_hang_is_an_error_outcome_that_says_so(tmp_path: Path) -> None:
    result = _finish(_request(tmp_path, allow=None), "claude_question.jsonl")
    assert (result.outcome, result.error) == ("error", HANG_ERROR)
    assert result.error.startswith("interactive-hang:")  # clauditor's prefix
    assert result.output == "Which city should I search for kid activities in?"  # kept, to show what it asked
    assert result.usage.num_turns == 1


def test_allow_hang_heuristic_false_lets_the_run_complete(tmp_path: Path) -> None:
    result = _finish(_request(tmp_path, allow=False), "claude_question.jsonl")
    assert (result.outcome, result.error) == ("completed", None)


def test_the_streams_own_error_wins_over_the_heuristic(tmp_path: Path) -> None:
    failed = edited("claude_question.jsonl", result={"is_error": True, "result": "API Error: 500 is it down?"})
    result = _finish(_request(tmp_path, allow=True), "", failed)
    assert result.outcome == "error" and result.error is not None
    assert "interactive-hang" not in result.error and "API Error: 500" in result.error


def test_a_normal_run_still_completes(tmp_path: Path) -> None:
    assert _finish(_request(tmp_path, allow=True), "claude_tools.jsonl").outcome == "completed"
