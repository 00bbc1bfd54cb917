"""Checks on captured output files: file_exists, file_contains."""

from __future__ import annotations

from skillmake.run.checks.base import CheckContext, Target, Verdict, clip, quote
from skillmake.spec.model import Check


def file_exists(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    # The runner resolves `file` before calling: reaching here means it was captured.
    return Verdict(True, f"{target.label} was captured ({len(target.text)} chars)")


def file_contains(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    needle: str = check.params["needle"]
    if needle in target.text:
        return Verdict(True, f"{quote(needle)} found in {target.label} at char {target.text.find(needle)}")
    return Verdict(False, f"{quote(needle)} not found in {target.label}: {clip(target.text)}")


CHECKS = {"file_exists": file_exists, "file_contains": file_contains}
