"""The judge prompts of compare and of the description optimiser put what every call of them shares first and mark it
cacheable (Anthropic's cache_control; OpenAI caches a long shared prefix by itself); a batch carries the same body.
Prices: the batch price is half, and the cost line's "cache saved" is the cached tokens' full price less their cost."""

from __future__ import annotations

from typing import Any

import pytest

from skillmake.compare import comparator
from skillmake.core.pricing import batch_price, cache_saving_usd, cost_usd
from skillmake.run.judges import anthropic_provider, openai_provider
from skillmake.run.judges.base import Endpoint, JudgeRequest
from skillmake.run.judges.resolve import Choice
from skillmake.triggers import prompt
from skillmake.triggers.improve import Improver, key_inputs

CLAUDE = Endpoint(provider="anthropic", model="claude-sonnet-4-6")
GPT = Endpoint(provider="openai", model="gpt-5.4")


def blocks(request: JudgeRequest) -> list[dict[str, Any]]:
    content = anthropic_provider.params(request, CLAUDE)["messages"][0]["content"]
    assert isinstance(content, list), "the request was sent as one string: nothing marked cacheable"
    return content


def test_compare_sends_the_instructions_and_task_cacheable_before_the_two_outputs() -> None:
    one = comparator.request("Greet the user", ("hello A", {}), ("hi B", {"f.txt": b"file B"}))
    other = comparator.request("Greet the user", ("hi B", {"f.txt": b"file B"}), ("hello A", {}))
    fixed, judged = blocks(one)
    assert fixed["cache_control"] == {"type": "ephemeral"} and "cache_control" not in judged
    assert "Greet the user" in fixed["text"] and "Decide which one" in fixed["text"]
    assert "hello A" not in fixed["text"] and "hello A" in judged["text"] and "file B" in judged["text"]
    assert fixed["text"] + judged["text"] == one.user  # the prompt the judge reads is unchanged
    assert blocks(other)[0] == fixed  # every pair of the case shares it
    assert openai_provider.params(one, GPT)["messages"][1]["content"].startswith(fixed["text"])


def improver_inputs(description: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    train = [{"query": "plan a trip", "should_trigger": True, "triggers": 0, "runs": 1, "pass": False}]
    improver = Improver(choice=Choice(provider="anthropic", model="claude-sonnet-4-6"))
    return key_inputs(name="trips", content="---\nname: trips\n---\nPlans trips. SKILL BODY.\n",
                      description=description, train=train, history=history, improver=improver)


def test_the_description_optimiser_sends_the_skill_and_guidance_first_and_cacheable() -> None:
    first = prompt.request(improver_inputs("Trips.", []))
    later = prompt.request(improver_inputs("Use this for travel.", [
        {"description": "Trips.", "train_passed": 0, "train_total": 1,
         "results": [{"query": "plan a trip", "should_trigger": True, "triggers": 0, "runs": 1, "pass": False}]}]))
    fixed, rest = blocks(first)
    assert fixed["cache_control"] == {"type": "ephemeral"} and "cache_control" not in rest
    assert "SKILL BODY" in fixed["text"] and "1024 characters" in fixed["text"]
    assert "Trips." not in fixed["text"] and "Trips." in rest["text"] and "plan a trip" in rest["text"]
    assert blocks(later)[0] == fixed  # the same prefix in every iteration of the loop
    shorter = prompt.shorter(first, "x" * 2000)
    assert blocks(shorter)[0] == fixed


def test_batch_price_is_half_and_the_cache_saving_is_what_the_cached_tokens_did_not_cost() -> None:
    # claude-sonnet-4-6: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million tokens
    assert cost_usd("claude-sonnet-4-6", input_tokens=1000, output_tokens=200, cache_read_tokens=100_000) == 0.036
    assert batch_price(cost_usd("claude-sonnet-4-6", input_tokens=1000, output_tokens=200,
                                cache_read_tokens=100_000)) == 0.018
    assert cache_saving_usd("claude-sonnet-4-6", cache_read_tokens=100_000) == 0.27
    assert cache_saving_usd("claude-sonnet-4-6", cache_read_tokens=100_000, batch=True) == 0.135
    # a write costs a quarter more than plain input: caching only pays once the prefix is read again
    assert cache_saving_usd("claude-sonnet-4-6", cache_read_tokens=0, cache_creation_tokens=100_000) == -0.075
    assert cache_saving_usd("no-such-model", cache_read_tokens=100_000) == 0.0


@pytest.mark.parametrize("given, spec_says, config_says, expected", [
    ("", None, None, False), ("1", None, None, True), ("", True, None, True), ("", None, True, True),
    ("0", True, True, False), ("", False, True, False)])
def test_who_turns_batching_on(given: str, spec_says: bool | None, config_says: bool | None, expected: bool) -> None:
    from dataclasses import replace

    from skillmake.run import batch
    from skillmake.spec.model import JudgeConfig

    class Spec:
        judge = replace(JudgeConfig(), batch=spec_says)

    config = {} if config_says is None else {"batch": config_says}
    assert batch.wanted(Spec(), config, environ={"SKILLMAKE_BATCH": given}) is expected  # type: ignore[arg-type]


def test_a_batch_request_id_names_the_question_within_both_apis_limits() -> None:
    import re

    from skillmake.run import batch

    one = comparator.request("t", ("a", {}), ("b", {}))
    ids = {batch.custom_id(one, CLAUDE), batch.custom_id(one, CLAUDE)}
    assert len(ids) == 1 and re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", ids.pop())
    assert batch.custom_id(one, CLAUDE) != batch.custom_id(one, GPT)
    assert batch.custom_id(one, CLAUDE) != batch.custom_id(comparator.request("t", ("a", {}), ("c", {})), CLAUDE)
