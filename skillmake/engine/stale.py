"""Why a task is stale, in the form doit's `uptodate` takes, so `doit info` prints the reason `explain` gives.

doit calls an uptodate callable through inspect.signature (a fifth of a no-op's status checks), but takes a
`(value, args, kwargs)` tuple whose value is not callable as a plain truth value. A falsy object whose str()
is the reason therefore costs doit nothing, and `doit info` shows it as
    - its stored run … (args=[], kwargs={})
The reason is worked out only when something prints it: a run never pays for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from skillmake.engine import explain
from skillmake.engine.plan import Item, TriggerItem
from skillmake.run.project import Project


class Stale:
    """False to doit; str() says why (computed on first use)."""

    __slots__ = ("_args", "_text", "_why")

    def __init__(self, why: Callable[..., list[str]] | str, *args: Any) -> None:
        # A function and its arguments rather than a closure: a first run holds one per stale task (30,000 × 2).
        self._why = why
        self._args = args
        self._text: str | None = why if isinstance(why, str) else None

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        if self._text is None:
            try:
                self._text = "; ".join(self._why(*self._args) if callable(self._why) else [self._why])
            except Exception as exc:  # diagnostics only: never break `doit info`
                self._text = f"stale (reason unknown: {type(exc).__name__})"
        return self._text

    __repr__ = __str__

    def __reduce__(self) -> tuple[Any, ...]:
        # Process-mode workers get the text, not the closure (which holds the project).
        return (Stale, (str(self),))


_NO_ARGS: list[Any] = []  # shared: doit only passes them to an uptodate value it can call, which a Stale is not
_NO_KWARGS: dict[str, Any] = {}


def uptodate(value: bool | Stale) -> list[Any]:
    """A task's `uptodate` list: a plain bool when up to date, else the reason as a (value, args, kwargs) tuple."""
    return [value] if value is True else [(value, _NO_ARGS, _NO_KWARGS)]


def trial(project: Project, item: Item, *, resample: bool) -> bool | Stale:
    if resample:
        return Stale("resampling: --resample draws a fresh sample even though one is stored")
    if item.trial_cached:
        return True
    return Stale(_trial_reasons, project, item)


def _trial_reasons(project: Project, item: Item) -> list[str]:
    return explain.trial_reasons(project, item, explain.kept(project, item, "trial.json"))


def _grade_reasons(project: Project, item: Item) -> list[str]:
    return explain.grade_reasons(project, item, explain.kept(project, item, "grade.json"))


def grade(project: Project, item: Item, *, resample: bool) -> bool | Stale:
    if resample:
        return Stale("its trial is resampled (--resample)")
    if not item.trial_cached:
        return Stale("its trial will run")
    if item.grade_cached:
        return True
    return Stale(_grade_reasons, project, item)


def trigger(project: Project, item: TriggerItem, *, resample: bool) -> bool | Stale:
    if resample:
        return Stale("resampling: --resample draws a fresh sample even though one is stored")
    if item.cached:
        return True
    return Stale(explain.trigger_reasons, project, item)


def report(fresh: bool | Stale, *, resample: bool, complete: bool) -> bool | Stale:
    if resample:
        return Stale("some of its trials are resampled (--resample): the views must show the fresh samples")
    if isinstance(fresh, Stale):  # report_uptodate said why itself
        return fresh
    if fresh:
        return True
    if not complete:
        return Stale("some of its trials or grades will run")
    return Stale("its trials or grades changed since the last report, or that report failed its gates")
