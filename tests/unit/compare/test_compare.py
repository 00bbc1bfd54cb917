"""Blind A/B comparison, piece by piece: the combining rules, the win rate and its interval, the comparison key,
the comparator's request and how its replies are read, the cache records and the command line."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from skillmake.commands.compare import parse
from skillmake.compare import cache, comparator, document
from skillmake.compare.combine import TIE, case_winner, from_position, pair_winner
from skillmake.compare.winrate import WinRate, wilson, win_rate
from skillmake.core.canonical import KEY_VERSION, digest_json
from skillmake.core.errors import UsageError
from skillmake.run.agents.base import Usage
from skillmake.run.judges.base import JudgeRequest, ProviderReply, ReplyError
from skillmake.run.judges.resolve import Choice
from skillmake.spec.model import Case
from skillmake.store.objects import Store

D1, D2 = "sha256:" + "1" * 64, "sha256:" + "2" * 64
ANTHROPIC = Choice(provider="anthropic", model="claude-sonnet-4-6")


# -- combining ------------------------------------------------------------------------------------------------


def test_a_positional_verdict_is_mapped_back_to_the_side_shown_there() -> None:
    assert from_position("1", ("A", "B")) == "A"
    assert from_position("2", ("A", "B")) == "B"
    assert from_position("1", ("B", "A")) == "B"
    assert from_position("2", ("B", "A")) == "A"
    assert from_position("tie", ("B", "A")) == TIE
    with pytest.raises(ValueError, match="not a positional verdict"):
        from_position("A", ("A", "B"))


@pytest.mark.parametrize(("first", "second", "pair"), [
    ("A", "A", "A"), ("B", "B", "B"), (TIE, TIE, TIE),
    ("A", "B", TIE), ("B", "A", TIE),  # contradicting orders: the judge followed the position, not the output
    ("A", TIE, TIE), (TIE, "B", TIE),  # a tie in either order is a tie
])
def test_a_pair_counts_for_a_side_only_when_both_orders_agree(first: str, second: str, pair: str) -> None:
    assert pair_winner(first, second) == pair


def test_a_judge_that_always_prefers_the_first_position_ties_every_pair() -> None:
    orders = (("A", "B"), ("B", "A"))
    verdicts = [from_position("1", shown) for shown in orders]
    assert verdicts == ["A", "B"] and pair_winner(*verdicts) == TIE
    verdicts = [from_position("2", shown) for shown in orders]  # or the second
    assert pair_winner(*verdicts) == TIE


def test_pair_winner_refuses_what_is_not_a_side() -> None:
    with pytest.raises(ValueError, match="not a side"):
        pair_winner("1", "A")


@pytest.mark.parametrize(("pairs", "winner"), [
    ([], None), (["A"], "A"), (["B"], "B"), ([TIE], TIE),
    (["A", "A"], "A"), (["A", TIE], TIE), (["A", "B"], TIE),  # more than half, strictly
    (["A", "A", TIE], "A"), (["A", TIE, TIE], TIE), (["B", "B", "A"], "B"), (["A", "B", TIE], TIE),
    (["A", "A", "B", "B"], TIE), (["B", "B", "B", "A"], "B"),
])
def test_a_case_goes_to_the_side_that_won_a_strict_majority_of_its_pairs(pairs: list[str], winner: str | None
                                                                        ) -> None:
    assert case_winner(pairs) == winner


# -- win rate -------------------------------------------------------------------------------------------------


def test_win_rate_counts_ties_as_half() -> None:
    assert win_rate(3, 1, 0).rate == 0.75
    assert win_rate(0, 0, 4).rate == 0.5  # the position-biased judge: all ties, a coin
    assert win_rate(1, 1, 2).rate == 0.5
    assert win_rate(2, 0, 1).rate == pytest.approx(2.5 / 3)
    assert win_rate(0, 5, 0).rate == 0.0
    assert win_rate(3, 1, 2).pairs == 6


def test_no_judged_pair_has_no_rate_and_no_interval() -> None:
    assert win_rate(0, 0, 0) == WinRate(a_wins=0, b_wins=0, ties=0, rate=None, low=None, high=None)


def test_negative_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="ties"):
        win_rate(1, 0, -1)


@pytest.mark.parametrize(("p", "n", "low", "high"), [
    # (x + z²/2)/(n + z²) ± z/(n + z²)·√(x(n − x)/n + z²/4), the count form, with x = p·n
    (0.5, 4, 0.1500390, 0.8499610),
    (1.0, 4, 0.5101092, 1.0),
    (0.0, 10, 0.0, 0.2775328),
    (0.75, 20, 0.5312991, 0.8881383),
    (0.5, 100, 0.4038315, 0.5961685),
])
def test_wilson_interval_matches_the_textbook_values(p: float, n: int, low: float, high: float) -> None:
    lo, hi = wilson(p, n)
    assert lo == pytest.approx(low, abs=2e-7) and hi == pytest.approx(high, abs=2e-7)
    assert lo <= p <= hi


def test_the_interval_narrows_as_pairs_accumulate() -> None:
    widths = [hi - lo for lo, hi in (wilson(0.7, n) for n in (5, 20, 80, 320))]
    assert widths == sorted(widths, reverse=True)


def test_wilson_refuses_impossible_arguments() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        wilson(0.5, 0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        wilson(1.5, 3)


def test_the_overall_winner_needs_the_whole_interval_on_one_side_of_a_half() -> None:
    assert document.overall(win_rate(4, 0, 0)) == "A"  # 4 of 4: the interval starts at 0.51
    assert document.overall(win_rate(3, 0, 0)) == TIE  # 3 of 3: it starts at 0.44, a coin is not ruled out
    assert document.overall(win_rate(0, 6, 0)) == "B"
    assert document.overall(win_rate(0, 0, 8)) == TIE
    assert document.overall(win_rate(0, 0, 0)) is None


# -- the key --------------------------------------------------------------------------------------------------


def _inputs(**change: Any) -> dict[str, Any]:
    values: dict[str, Any] = {"first": D1, "second": D2, "task": "say hi", "judge": cache.judge_config(ANTHROPIC)}
    values.update(change)
    return cache.key_inputs(values["first"], values["second"], task=values["task"], judge=values["judge"])


def test_the_key_covers_the_outputs_in_order_the_task_and_the_judge() -> None:
    inputs = _inputs()
    assert inputs == {"key_version": KEY_VERSION, "kind": "compare", "outputs": [D1, D2], "task": "say hi",
                      "judge": {"provider": "anthropic", "model": "claude-sonnet-4-6", "prompt": "compare@1",
                                "render": 1}}
    key = cache.key_of(inputs)
    assert key == digest_json(inputs) and key.startswith("sha256:")
    assert cache.key_of(_inputs()) == key  # the same content, the same key
    changed = [_inputs(first=D2, second=D1), _inputs(task="say hello"),
               _inputs(judge=cache.judge_config(Choice(provider="anthropic", model="claude-opus-4-5"))),
               _inputs(judge=cache.judge_config(Choice(provider="openai", model="claude-sonnet-4-6"))),
               _inputs(judge=cache.judge_config(ANTHROPIC, temperature=0.0))]
    keys = {cache.key_of(i) for i in changed}
    assert len(keys) == len(changed) and key not in keys


def test_the_judge_config_holds_a_cli_version_only_for_cli_judges_and_a_temperature_only_when_set() -> None:
    assert "cli_version" not in cache.judge_config(ANTHROPIC, cli_version="9.9.9")
    assert cache.judge_config(Choice(provider="claude-code", model="m"), cli_version="2.1.3")["cli_version"] == "2.1.3"
    assert "temperature" not in cache.judge_config(ANTHROPIC)
    assert cache.judge_config(ANTHROPIC, temperature=0.2)["temperature"] == 0.2


def test_the_output_digest_covers_what_the_judge_sees_only() -> None:
    record = {"outputs": {"output": D1, "stdout": D1, "stderr": D2, "transcript": None, "files": {"a.md": D2}}}
    same = {"outputs": {**record["outputs"], "stdout": D2, "stderr": D1, "transcript": D1}}
    other_file = {"outputs": {**record["outputs"], "files": {"b.md": D2}}}
    assert cache.output_digest(record) == cache.output_digest(same)
    assert cache.output_digest(record) != cache.output_digest(other_file)


def test_a_verdict_is_stored_and_found_again_by_its_key(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    inputs = _inputs()
    key = cache.key_of(inputs)
    assert cache.lookup(store, key) is None
    verdict = comparator.Verdict(winner="2", reasoning="Output 2 lists every venue.",
                                 output_quality={"1": {"score": 4, "strengths": [], "weaknesses": ["short"]},
                                                 "2": {"score": 8, "strengths": ["complete"], "weaknesses": []}})
    record = cache.save(store, inputs, verdict, usage=Usage(input_tokens=10, output_tokens=5, requests=1),
                        started=dt.datetime(2026, 1, 2, tzinfo=dt.UTC), duration_ms=12.5, run_id="r1")
    assert record["key"] == key and record["kind"] == "comparison"
    found = cache.lookup(store, key)
    assert found == record
    assert cache.verdict_of(found) == verdict


def test_a_record_whose_inputs_do_not_hash_to_its_key_is_a_miss(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    inputs = _inputs()
    record = cache.save(store, inputs, comparator.Verdict(winner="1", reasoning="r"), usage=Usage(),
                        started=dt.datetime(2026, 1, 2, tzinfo=dt.UTC), duration_ms=1.0, run_id=None)
    path = store.action_path(record["key"])
    data = json.loads(path.read_text())
    data["inputs"]["task"] = "something else"  # hand-edited: the verdict is no longer this key's
    path.write_text(json.dumps(data))
    assert cache.lookup(store, record["key"]) is None


# -- the comparator's request ----------------------------------------------------------------------------------


def test_the_request_shows_the_task_and_two_unlabelled_outputs() -> None:
    req = comparator.request("plan a party", ("FIRST TEXT", {"plan.md": b"# plan"}), ("second text", {}))
    assert req.judge == "compare" and req.schema is comparator.SCHEMA
    assert "<task>\nplan a party\n</task>" in req.user
    first, second = req.user.index("<output_1>"), req.user.index("<output_2>")
    assert first < req.user.index("FIRST TEXT") < req.user.index('<file name="plan.md"') < second
    assert req.user.index("second text") > second
    for word in ("with_skill", "without_skill", "skill", "arm", "baseline", "version"):
        assert word not in req.user.lower().replace("skills", ""), word
    assert "untrusted data" in req.system and "position" in req.system


def test_the_task_is_the_user_prompt_else_the_prompt_and_args() -> None:
    assert comparator.task_text(Case(id="c", index=0, prompt="p", args="a", user_prompt="what a user asks")) \
        == "what a user asks"
    assert comparator.task_text(Case(id="c", index=0, prompt="summarise", args="--short")) == "summarise\n\n--short"
    assert comparator.task_text(Case(id="c", index=0, args="x.csv")) == "x.csv"
    assert "<task>" not in comparator.request("", ("a", {}), ("b", {})).user


def test_the_schema_asks_for_a_positional_winner_and_skill_creators_fields() -> None:
    props = comparator.SCHEMA["properties"]
    assert props["winner"]["enum"] == ["1", "2", "tie"]
    assert set(props) == {"winner", "reasoning", "rubric", "output_quality"}
    # OpenAI's strict mode: every property required, no open objects; strict tool use: no numeric bounds.
    def objects(schema: dict[str, Any]) -> list[dict[str, Any]]:
        found = [schema] if schema.get("type") == "object" else []
        for sub in (schema.get("properties") or {}).values():
            found += objects(sub)
        return found + (objects(schema["items"]) if isinstance(schema.get("items"), dict) else [])

    for obj in objects(comparator.SCHEMA):
        assert sorted(obj["required"]) == sorted(obj["properties"]) and obj["additionalProperties"] is False
    assert "minimum" not in json.dumps(comparator.SCHEMA)


# -- reading replies ------------------------------------------------------------------------------------------


def _read(data: dict[str, Any] | None = None, text: str = "") -> comparator.Verdict:
    req = JudgeRequest(judge="compare", system="s", user="u", schema=comparator.SCHEMA)
    return comparator.read(req, ProviderReply(data=data, text=text, usage=Usage()))


def test_a_tool_call_is_read_and_extra_keys_are_dropped() -> None:
    got = _read({"winner": "2", "reasoning": "Output 2 is complete.", "confidence": 0.9, "notes": ["x"]})
    assert got == comparator.Verdict(winner="2", reasoning="Output 2 is complete.")


@pytest.mark.parametrize(("written", "winner"), [
    ("1", "1"), ("2", "2"), ("tie", "tie"), ("TIE", "tie"), ("Tie", "tie"), ("Output 1", "1"), ("output_2", "2"),
    (" 2 ", "2"), (1, "1"), (2, "2"), ("draw", "tie"), ("equal", "tie"),
])
def test_the_winner_may_be_written_loosely(written: Any, winner: str) -> None:
    assert _read({"winner": written, "reasoning": "r"}).winner == winner


@pytest.mark.parametrize("written", ["A", "B", "3", 0, True, "both", "Output 3", None])
def test_a_winner_that_names_no_position_is_refused(written: Any) -> None:
    with pytest.raises(ReplyError):
        _read({"winner": written, "reasoning": "r"})


def test_json_wrapped_in_prose_or_a_fence_is_read() -> None:
    text = ('Having compared both carefully:\n```json\n{"Winner": "1", "reasoning": "Output 1 names all three '
            'venues.", "extra": {"x": 1}}\n```\nHope this helps.')
    assert _read(text=text) == comparator.Verdict(winner="1", reasoning="Output 1 names all three venues.")


def test_a_plain_text_answer_that_names_the_winner_is_read() -> None:
    got = _read(text="Output 2 covers every step. Winner: Output 2")
    assert got.winner == "2" and "covers every step" in got.reasoning
    assert _read(text="The winner is tie; both are the same.").winner == "tie"


def test_a_reply_without_a_verdict_is_refused() -> None:
    with pytest.raises(ReplyError, match="no verdict"):
        _read(text="Both are fine, I suppose.")
    with pytest.raises(ReplyError):
        _read({"reasoning": "forgot the winner"})


def test_well_formed_scores_are_kept_and_malformed_ones_dropped_without_losing_the_verdict() -> None:
    rubric = {"1": {"content_score": 4, "structure_score": "5", "overall_score": 9.0, "extra": 1},
              "2": {"content_score": 2, "structure_score": 3, "overall_score": 5}}
    got = _read({"winner": "1", "reasoning": "r", "rubric": rubric})
    assert got.rubric == {"1": {"content_score": 4, "structure_score": 5, "overall_score": 9.0},
                          "2": {"content_score": 2, "structure_score": 3, "overall_score": 5}}
    out_of_range = {"1": {**rubric["2"], "overall_score": 11}, "2": rubric["2"]}
    assert _read({"winner": "1", "reasoning": "r", "rubric": out_of_range}).rubric is None
    partial = {"1": {"score": 7, "strengths": ["a"], "weaknesses": []}}
    got = _read({"winner": "tie", "reasoning": "r", "output_quality": partial})
    assert got.output_quality is None and got.winner == "tie"


def test_an_empty_reasoning_reads_as_saying_so() -> None:
    assert _read({"winner": "1", "reasoning": "  "}).reasoning == "(no reasoning given)"


# -- the result file ------------------------------------------------------------------------------------------


def test_the_judges_positions_are_rewritten_as_sides() -> None:
    text = "Output 1 is longer but Output 2 is correct; output_2 wins."
    assert document.as_sides(text, ("A", "B")) == "Output A is longer but Output B is correct; output B wins."
    assert document.as_sides(text, ("B", "A")) == "Output B is longer but Output A is correct; output A wins."


# -- the command line -----------------------------------------------------------------------------------------


def test_the_forms_parse() -> None:
    opts = parse(["alpha"])
    assert opts is not None and (opts.spec, opts.arms, opts.against, opts.previous) == ("alpha", (), None, False)
    opts = parse(["alpha", "with_skill", "small", "-k", "one", "--case", "t*", "--format=json", "-o", "x.json",
                  "--judge-model", "claude-haiku-4-5", "-j", "2"])
    assert opts is not None
    assert (opts.arms, opts.cases, opts.format, opts.output, opts.judge_model, opts.jobs) == (
        ("with_skill", "small"), ("one", "t*"), "json", "x.json", "claude-haiku-4-5", 2)
    opts = parse(["--against", "HEAD~1", "alpha"])
    assert opts is not None and opts.against == "HEAD~1" and opts.spec == "alpha"
    assert parse(["alpha", "--help"]) is None


@pytest.mark.parametrize(("args", "message"), [
    (["alpha", "--formt", "json"], "unknown option --formt for `skillmake compare`; did you mean --format?"),
    (["alpha", "--previus"], "did you mean --previous?"),
    (["alpha", "--judge-modle", "m"], "did you mean --judge-model?"),
    (["alpha", "--format", "yaml"], "--format must be text or json"),
    (["alpha", "--against", "HEAD", "--previous"], "give one"),
    (["alpha", "-j", "0"], "--jobs needs a whole number"),
    (["alpha", "--against"], "option --against needs a value"),
])
def test_a_bad_command_line_is_a_usage_error(args: list[str], message: str) -> None:
    with pytest.raises(UsageError) as info:
        parse(args)
    assert message in info.value.message


# -- asking a provider (the loopback fake) --------------------------------------------------------------------


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    from tests.fakeapi.fixtures import judged_by_fake_api

    with judged_by_fake_api(monkeypatch, "sk-compare-test-key-0123456789") as api:
        yield api


def test_ask_reads_a_forced_tool_call_from_the_anthropic_judge(fake: Any) -> None:
    from skillmake.run.judges.resolve import endpoint
    from tests.fakeapi import Reply

    fake.enqueue(Reply.tool_use("record_verdict", {"winner": "2", "reasoning": "Output 2 is right."}),
                 endpoint="/v1/messages")
    answer = comparator.ask(comparator.request("t", ("a", {}), ("b", {})), endpoint(ANTHROPIC))
    assert answer.verdict == comparator.Verdict(winner="2", reasoning="Output 2 is right.")
    assert answer.error is None and answer.usage.requests == 1
    [sent] = fake.requests
    assert sent.json is not None and sent.json["tools"][0]["input_schema"] == comparator.SCHEMA


def test_ask_reads_json_text_from_the_openai_judge(fake: Any) -> None:
    from skillmake.run.judges.resolve import endpoint
    from tests.fakeapi import Reply

    fake.enqueue(Reply.text('{"rubric": {}, "output_quality": {}, "reasoning": "Same.", "winner": "tie"}'),
                 endpoint="/v1/chat/completions")
    answer = comparator.ask(comparator.request("t", ("a", {}), ("b", {})),
                            endpoint(Choice(provider="openai", model="gpt-5.4")))
    assert answer.verdict == comparator.Verdict(winner="tie", reasoning="Same.")
    [sent] = fake.requests
    assert sent.json is not None and sent.json["response_format"]["json_schema"]["schema"] == comparator.SCHEMA


def test_ask_returns_a_judge_error_without_the_key(fake: Any) -> None:
    from skillmake.run.judges.resolve import endpoint
    from tests.fakeapi import Reply

    fake.enqueue(Reply.error(401, "bad key sk-compare-test-key-0123456789"), endpoint="/v1/messages")
    answer = comparator.ask(comparator.request("t", ("a", {}), ("b", {})), endpoint(ANTHROPIC))
    assert answer.verdict is None and answer.error is not None
    assert answer.error.startswith("compare judge (claude-sonnet-4-6): Anthropic API answered HTTP 401")
    assert "sk-compare-test-key-0123456789" not in answer.error
    fake.enqueue(Reply.text("I cannot decide."), endpoint="/v1/messages")
    answer = comparator.ask(comparator.request("t", ("a", {}), ("b", {})), endpoint(ANTHROPIC))
    assert answer.verdict is None and answer.error is not None and "gave no usable verdict" in answer.error
