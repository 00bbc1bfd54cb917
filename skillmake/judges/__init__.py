"""Judges: model-graded assessments of a trial (rubric, criteria, expectations, section extraction)."""

from __future__ import annotations

from .base import JudgeOutcome
from .preflight import judge_problems
from .resolve import judge_key
from .run import judge_case

__all__ = ["JudgeOutcome", "judge_case", "judge_key", "judge_problems"]
