"""Whether the comparing judge can be reached, found before anything is paid for: the judges' own preflight."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from skillmake.core.errors import SkillmakeError
from skillmake.run.judges.resolve import choose
from skillmake.spec.model import Case, Spec


class JudgeUnavailable(SkillmakeError):
    """The judge cannot be reached (no key, no CLI, an unknown provider): found before any call is paid for."""

    exit_code = 3


def check_choice(spec: Spec, cases: Sequence[Case]) -> None:
    """Raise JudgeUnavailable when a case's judge is one skillmake cannot run (an unknown provider): a usage error
    whatever is cached."""
    errors = list(dict.fromkeys(e for e in (choose(spec, c).error for c in cases) if e))
    if errors:
        raise JudgeUnavailable("; ".join(errors), hint="pass --judge-provider, or fix judge.provider in the spec")


def check_judge(spec: Spec, cases: Sequence[Case]) -> None:
    """Raise JudgeUnavailable when the judge of any of `cases` cannot be reached (the judges' own preflight)."""
    from skillmake.run.judges import judge_problems

    # The preflight looks at the cases that have a judge; for a comparison every case has one.
    probe = dataclasses.replace(spec, cases=tuple(dataclasses.replace(c, rubric=c.rubric or "(compare)")
                                                  for c in cases))
    problems = judge_problems([probe])
    if problems:
        raise JudgeUnavailable("\n".join(problems), hint="the comparison needs a judge; see docs/judges.md")
