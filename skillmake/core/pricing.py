"""List prices of the model APIs, to turn token usage into dollars (None for a model not in the table).

Prices are USD per million tokens as published by Anthropic and OpenAI (checked 2026); a model matches the
longest entry its name starts with, so dated snapshots ("claude-sonnet-4-6-20260217") price as their family.
Token counts are disjoint, as in `skillmake.run.agents.Usage`: `input_tokens` excludes the cached tokens, which
are passed as `cache_read_tokens` (OpenAI reports cached tokens inside its input count: subtract them first).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float = 0.0  # Anthropic's 5-minute cache write (1.25x input); OpenAI has none


def _claude(input: float, output: float) -> Price:
    return Price(input=input, output=output, cache_read=round(input * 0.1, 4), cache_write=round(input * 1.25, 4))


PRICES: dict[str, Price] = {
    # Anthropic
    "claude-opus-4-0": _claude(15.0, 75.0),
    "claude-opus-4-1": _claude(15.0, 75.0),
    "claude-opus-4-5": _claude(5.0, 25.0),
    "claude-opus-4-6": _claude(5.0, 25.0),
    "claude-opus-4-7": _claude(5.0, 25.0),
    "claude-sonnet-4": _claude(3.0, 15.0),  # 4, 4-5, 4-6
    "claude-3-7-sonnet": _claude(3.0, 15.0),
    "claude-haiku-4-5": _claude(1.0, 5.0),
    "claude-3-5-haiku": _claude(0.8, 4.0),
    # OpenAI
    "gpt-5": Price(input=1.25, output=10.0, cache_read=0.125),  # gpt-5, gpt-5-codex, gpt-5.1
    "gpt-5-mini": Price(input=0.25, output=2.0, cache_read=0.025),
    "gpt-5-nano": Price(input=0.05, output=0.40, cache_read=0.005),
    "gpt-5.2": Price(input=1.75, output=14.0, cache_read=0.175),  # and gpt-5.2-codex
    "gpt-5.3-codex": Price(input=1.75, output=14.0, cache_read=0.175),
    "gpt-5.5": Price(input=5.0, output=30.0, cache_read=0.50),
    "gpt-5.4": Price(input=2.50, output=15.0, cache_read=0.25),
    "gpt-5.4-mini": Price(input=0.75, output=4.50, cache_read=0.075),
    "gpt-5.4-nano": Price(input=0.20, output=1.25, cache_read=0.02),
    "gpt-4.1": Price(input=2.0, output=8.0, cache_read=0.50),
    "gpt-4.1-mini": Price(input=0.40, output=1.60, cache_read=0.10),
    "gpt-4o": Price(input=2.50, output=10.0, cache_read=1.25),
    "gpt-4o-mini": Price(input=0.15, output=0.60, cache_read=0.075),
}


def price_of(model: str) -> Price | None:
    """The price of `model`: the longest table entry its name starts with."""
    best = max((name for name in PRICES if model.startswith(name)), key=len, default=None)
    return PRICES[best] if best else None


BATCH_DISCOUNT = 0.5  # Anthropic's Message Batches and OpenAI's Batch API: half the price, caching discounts stack


def cost_usd(model: str | None, *, input_tokens: int | None, output_tokens: int | None,
             cache_read_tokens: int | None = None, cache_creation_tokens: int | None = None) -> float | None:
    """Dollars for one call's usage, rounded to 1e-8; None when the model or the counts are unknown."""
    price = price_of(model) if model else None
    if price is None or input_tokens is None or output_tokens is None:
        return None
    total = (input_tokens * price.input + output_tokens * price.output
             + (cache_read_tokens or 0) * price.cache_read + (cache_creation_tokens or 0) * price.cache_write)
    return round(total / 1_000_000, 8)


def batch_price(usd: float | None, batch: bool = True) -> float | None:
    """`usd` as a provider's batch API charges it (half), when `batch`; None stays None."""
    return round(usd * BATCH_DISCOUNT, 8) if batch and usd is not None else usd


def cache_saving_usd(model: str | None, *, cache_read_tokens: int | None, cache_creation_tokens: int | None = None,
                     batch: bool = False) -> float:
    """What prompt caching saved on one call's usage: its cached tokens at the full input price, less what they
    cost as cache reads and writes (a write costs more than plain input, so a call that only wrote loses a little:
    negative). 0.0 when the model is not in the table or nothing was cached."""
    price = price_of(model) if model else None
    if price is None or not (cache_read_tokens or cache_creation_tokens):
        return 0.0
    read, written = cache_read_tokens or 0, cache_creation_tokens or 0
    saved = read * (price.input - price.cache_read) + written * (price.input - price.cache_write)
    return round(saved * (BATCH_DISCOUNT if batch else 1.0) / 1_000_000, 8)
