"""The deterministic check catalogue: one registry from check type to function, and running checks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from skillmake.run.checks.base import CheckContext, CheckFn, Target, Verdict, decode, file_bytes, listing
from skillmake.run.checks.describe import describe
from skillmake.spec.model import Check

# Check type → the module of this package whose CHECKS holds its function. A module loads when a check of one of its
# types first runs: a run of `contains` checks imports neither the CSV and JSON Schema checks nor the python runner
# (test_checks checks this table against the modules' own CHECKS).
MODULES: dict[str, str] = {
    **dict.fromkeys(("contains", "not_contains", "icontains", "contains_any", "contains_all", "equals", "starts_with",
                     "min_length", "max_length", "min_tokens", "max_tokens"), "text"),
    **dict.fromkeys(("regex", "matches", "not_matches", "min_count", "has_urls", "has_entries", "has_format"),
                    "patterns"),
    "urls_reachable": "urls",
    **dict.fromkeys(("is_json", "json_schema", "csv_valid", "csv_row_count"), "data"),
    **dict.fromkeys(("file_exists", "file_contains"), "files"),
    "python": "python",
}
_loaded: dict[str, CheckFn] = {}  # the functions of the types run so far

__all__ = ["MODULES", "REGISTRY", "CheckContext", "Verdict", "check_function", "describe", "run_check", "run_checks"]


def check_function(type_: str) -> CheckFn | None:
    """The function of a check type, its module imported on first use; None for a type no module has."""
    fn = _loaded.get(type_)
    if fn is None and type_ in MODULES:
        # __import__, not importlib.import_module: an import `-X importtime` lists, as every other one
        module = __import__(f"{__name__}.{MODULES[type_]}", fromlist=["CHECKS"])
        fn = _loaded[type_] = module.CHECKS[type_]
    return fn


def __getattr__(name: str) -> Any:
    """REGISTRY: every type's function (every check module imported), for those who list them all."""
    if name == "REGISTRY":
        return {type_: check_function(type_) for type_ in MODULES}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    fn = check_function(check.type)
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
