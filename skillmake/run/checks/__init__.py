"""The deterministic check catalogue: one registry from check type to function, and running checks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from skillmake.run.checks import data, files, patterns, python, text, urls
from skillmake.run.checks.base import CheckContext, CheckFn, Target, Verdict, decode, file_bytes, listing
from skillmake.run.checks.describe import describe
from skillmake.spec.model import Check

REGISTRY: dict[str, CheckFn] = {
    **text.CHECKS, **patterns.CHECKS, **urls.CHECKS, **data.CHECKS, **files.CHECKS, **python.CHECKS,
}

__all__ = ["REGISTRY", "CheckContext", "Verdict", "describe", "run_check", "run_checks"]


def _target(check: Check, ctx: CheckContext) -> Target | Verdict:
    if check.file is None:
        return Target(label="output", text=ctx.output)
    content = file_bytes(ctx, check.file)
    if content is None:
        captured = listing(sorted(ctx.files)) or "none"
        return Verdict(False, f"file {check.file!r} was not captured (captured: {captured})")
    return Target(label=f"file {check.file!r}", text=decode(content))


def run_check(check: Check, ctx: CheckContext) -> dict[str, Any]:
    """Run one check; the result is a grading expectation {text, passed, evidence, source, id}."""
    fn = REGISTRY.get(check.type)
    if fn is None:  # the spec schema lists every type: reaching this is a bug, not a user error
        raise ValueError(f"no check function for type {check.type!r}")
    target = _target(check, ctx)
    try:
        verdict = target if isinstance(target, Verdict) else fn(check, target, ctx)
    except re.error as exc:  # specs are validated first; a check built some other way fails as a value
        verdict = Verdict(False, f"invalid regular expression: {exc}")
    return {"text": check.name or describe(check), "passed": verdict.passed, "evidence": verdict.evidence,
            "source": "check", "id": check.label}


def run_checks(checks: Sequence[Check], ctx: CheckContext) -> list[dict[str, Any]]:
    """Run every check in order (all of them, even after a failure: the report shows each)."""
    return [run_check(check, ctx) for check in checks]
