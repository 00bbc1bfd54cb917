"""Substring, equality, length and token-count checks (clauditor L1 and eva assert ops)."""

from __future__ import annotations

from skillmake.run.checks.base import CheckContext, Target, Verdict, clip, listing, plural, quote
from skillmake.spec.model import Check


def _where(text: str, needle: str, *, fold: bool = False) -> str:
    hay, pin = (text.lower(), needle.lower()) if fold else (text, needle)
    at = hay.find(pin)
    start = max(0, at - 20)
    return f"found at char {at}: {clip(text[start:at + len(needle) + 20])}"


def contains(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    needle = check.params["needle"]
    if needle in target.text:
        return Verdict(True, _where(target.text, needle))
    return Verdict(False, f"{quote(needle)} not found in {target.label} ({len(target.text)} chars): "
                          f"{clip(target.text)}")


def not_contains(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    needle = check.params["needle"]
    if needle in target.text:
        return Verdict(False, f"{quote(needle)} {_where(target.text, needle)}")
    return Verdict(True, f"{quote(needle)} does not occur in {target.label}")


def icontains(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    needle = check.params["needle"]
    if needle.lower() in target.text.lower():
        return Verdict(True, _where(target.text, needle, fold=True))
    return Verdict(False, f"{quote(needle)} (any case) not found in {target.label}: {clip(target.text)}")


def contains_any(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    needles: list[str] = check.params["needles"]
    hits = [n for n in needles if n in target.text]
    if hits:
        return Verdict(True, f"found {listing([quote(h) for h in hits])}")
    return Verdict(False, f"none of {listing([quote(n) for n in needles])} found in {target.label}: "
                          f"{clip(target.text)}")


def contains_all(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    needles: list[str] = check.params["needles"]
    missing = [n for n in needles if n not in target.text]
    if not missing:
        return Verdict(True, f"found all {len(needles)}: {listing([quote(n) for n in needles])}")
    return Verdict(False, f"missing {len(missing)} of {len(needles)}: {listing([quote(m) for m in missing])}")


def equals(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    value: str = check.params["value"]
    strip = check.params.get("strip", True)
    actual, expected = (target.text.strip(), value.strip()) if strip else (target.text, value)
    if actual == expected:
        return Verdict(True, f"{target.label} equals {quote(expected)}")
    at = next((i for i, (a, b) in enumerate(zip(actual, expected, strict=False)) if a != b),
              min(len(actual), len(expected)))
    return Verdict(False, f"expected {quote(expected)}, got {quote(actual)} (first difference at char {at})")


def starts_with(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    prefix: str = check.params["prefix"]
    text = target.text.lstrip() if check.params.get("strip", True) else target.text
    if text.startswith(prefix):
        return Verdict(True, f"{target.label} starts with {quote(prefix)}")
    return Verdict(False, f"{target.label} starts with {clip(text[: len(prefix) + 20])}, not {quote(prefix)}")


def min_length(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    need: int = check.params["length"]
    have = len(target.text)
    return Verdict(have >= need, f"{target.label} has {plural(have, 'char')}, needed at least {need}")


def max_length(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    limit: int = check.params["length"]
    have = len(target.text)
    return Verdict(have <= limit, f"{target.label} has {plural(have, 'char')}, allowed at most {limit}")


def min_tokens(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    need: int = check.params["count"]
    have = len(target.text.split())
    return Verdict(have >= need, f"{target.label} has {plural(have, 'token')}, needed at least {need}")


def max_tokens(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    limit: int = check.params["count"]
    have = len(target.text.split())
    return Verdict(have <= limit, f"{target.label} has {plural(have, 'token')}, allowed at most {limit}")


CHECKS = {
    "contains": contains, "not_contains": not_contains, "icontains": icontains,
    "contains_any": contains_any, "contains_all": contains_all, "equals": equals, "starts_with": starts_with,
    "min_length": min_length, "max_length": max_length, "min_tokens": min_tokens, "max_tokens": max_tokens,
}
