"""Judges: model-graded assessments of a trial (rubric, criteria, expectations, section extraction).

The names below load their modules on first use (PEP 562): `from skillmake.run.judges import expectations` (the
views' eval_metadata.json does) must not import every provider, the verdict reader and jsonschema with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillmake.run.judges.base import JudgeOutcome
    from skillmake.run.judges.preflight import judge_problems
    from skillmake.run.judges.resolve import judge_key
    from skillmake.run.judges.run import judge_case

__all__ = ["JudgeOutcome", "judge_case", "judge_key", "judge_problems"]

_HOME = {"JudgeOutcome": "base", "judge_problems": "preflight", "judge_key": "resolve", "judge_case": "run"}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
