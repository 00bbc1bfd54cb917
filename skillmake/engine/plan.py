"""The plan: every trial and grade of every spec with its key and whether the store already has it.

Computed once when tasks are loaded; doit's `uptodate` gets plain booleans from it (no callables,
so doit's per-task inspect.signature cost is avoided), and `explain` reads the same plan.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from skillmake.core.canonical import digest_json
from skillmake.core.stats import VERDICT_OUTCOMES, Stop, adaptive_stop
from skillmake.engine.index import Index, index_path
from skillmake.run import grade as grading
from skillmake.run.keys import TrialKey, grade_key, grade_part
from skillmake.run.project import Project
from skillmake.run.trial import timeout_of
from skillmake.spec.derived import labels_digest, trigger_skip_reason
from skillmake.spec.model import Adaptive, Arm, Case, Spec, TriggerQuery
from skillmake.store.objects import GRADE_SCHEMA
from skillmake.triggers.keys import Offered, trigger_keys
from skillmake.triggers.run import timeout_of as trigger_timeout


@dataclass(slots=True, kw_only=True)
class Item:
    """One trial (case × arm × k) and its grade."""

    spec: Spec
    case: Case
    arm: Arm
    k: int
    tkey: TrialKey
    outputs: str | None = None  # digest of the cached trial's outputs, when the store has the trial
    grade_key: str | None = None
    grade_cached: bool = False
    damaged: str | None = None  # why its stored record was set aside (an object it names is missing or corrupt)

    @property
    def name(self) -> str:
        return f"{self.spec.name}/{self.case.id}/{self.arm.name}/{self.k}"

    @property
    def trial_cached(self) -> bool:
        return self.outputs is not None


@dataclass(slots=True, kw_only=True)
class TriggerItem:
    """One run (k) of one trigger query: no grade, its record says whether the skill fired."""

    spec: Spec
    query: TriggerQuery
    k: int
    tkey: TrialKey
    offered: Offered
    cached: bool = False
    damaged: str | None = None

    @property
    def name(self) -> str:
        return f"{self.spec.name}/{self.query.id}/{self.k}"


@dataclass(slots=True, kw_only=True)
class SpecPlan:
    spec: Spec
    triggers: list[TriggerItem] = field(default_factory=list)
    intact: bool | None = None  # its report files and cell views are as its last report wrote them (report.py)
    # Settled (settled.py): every trial and grade stored, its report passed, nothing changed since. Its items are
    # planned only when something asks for them (`items`); a plain run's hot paths check `settled` instead.
    settled: bool = False
    project: Project | None = field(default=None, repr=False, compare=False)  # where a settled plan's items come from
    _items: list[Item] | None = None

    @property
    def items(self) -> list[Item]:
        if self._items is None:
            assert self.project is not None, "a settled plan knows its project"
            self._items = plan_spec(self.project, self.spec)._items or []
        return self._items

    @items.setter
    def items(self, value: list[Item]) -> None:
        self._items = value

    @property
    def cells(self) -> int:
        """How many trials (each with its grade) the plan has, without planning a settled one's items."""
        if self._items is None and self.settled:
            return len(self.spec.cases) * len(self.spec.arms) * self.spec.trials
        return len(self.items)

    @property
    def complete(self) -> bool:
        if self.settled:
            return True
        return all(i.trial_cached and i.grade_cached for i in self.items) and all(t.cached for t in self.triggers)

    def inputs_digest(self) -> str | None:
        """Digest of every trial and grade key of the spec (and trigger key): the report's (and the views')
        inputs, known only when all are cached."""
        if not self.complete:
            return None
        keys = {i.name: (i.tkey.key, i.grade_key) for i in self.items}
        # A spec without trigger tests keeps the inputs digest it had before they existed.
        keys.update({f"trigger:{t.name}": (t.tkey.key, t.tkey.key) for t in self.triggers})
        return report_inputs(keys, labels=settings_digest(self.spec))


def settings_digest(spec: Spec) -> str | None:
    """What a report shows or decides that no key holds: labels (spec/derived.labels_digest), the thresholds, the
    required cases and the trigger threshold. Editing one re-renders the report (and may turn its verdict) without
    running or grading anything; None when a spec sets none of them."""
    parts: dict[str, Any] = {}
    labels = labels_digest(spec)
    if labels is not None:
        parts["labels"] = labels
    gates = {k: v for k, v in dataclasses.asdict(spec.thresholds).items() if v is not None}
    if gates:
        parts["thresholds"] = gates
    required = [c.id for c in spec.cases if c.required]
    if required:
        parts["required"] = required
    if spec.trigger_tests is not None:
        parts["trigger_threshold"] = spec.trigger_tests.threshold
    return digest_json(parts) if parts else None


def report_inputs(keys: dict[str, tuple[str, str | None]], *, labels: str | None = None) -> str | None:
    """The digest a report stamps and its task compares: every cell's trial and grade key, None while a grade
    is missing. The trial key counts too: a cell whose trial changed but graded the same still shows another
    record in its folder."""
    if not all(grade for _, grade in keys.values()):
        return None
    # `labels`: names a view shows but no key holds (eval ids, expectation names): a rename re-renders, runs nothing.
    return digest_json(sorted(keys.items())) if labels is None else digest_json([sorted(keys.items()), labels])


def settled_plan(project: Project, spec: Spec) -> SpecPlan:
    """The plan of a settled spec (settled.py): complete and intact, its items planned only if asked for."""
    return SpecPlan(spec=spec, settled=True, intact=True, project=project)


def plan_spec(project: Project, spec: Spec) -> SpecPlan:
    plan = SpecPlan(spec=spec, _items=[], project=project)
    actions_dir = str(project.store.actions)
    index = Index(index_path(project, spec.name), project.store)
    for case in spec.cases:
        grade_parts = None  # the same for every arm and trial of the case
        limit_ms = timeout_of(spec, case) * 1000
        for arm in spec.arms:
            for k in range(spec.trials):
                tkey = project.keys.trial_key(spec, case, arm, k)
                item = Item(spec=spec, case=case, arm=arm, k=k, tkey=tkey)
                facts = index.stored(tkey.key)
                item.damaged = index.damaged.get(tkey.key)
                # A stored result serves this cell only if it finished within the cell's timeout.
                if facts is not None and facts[1] <= limit_ms:
                    item.outputs = grading.graded_digest(case, facts[0], facts[2])
                    grade_parts = grade_parts or (grade_part(spec, case), grading.judge_part(spec, case))
                    item.grade_key = grade_key(item.outputs, *grade_parts)
                    # Only cacheable outcomes are ever written to the action cache.
                    h = item.grade_key[7:]
                    item.grade_cached = os.path.exists(f"{actions_dir}/{h[:2]}/{h}.json")
                plan.items.append(item)
    tests = spec.trigger_tests
    if tests is not None and trigger_skip_reason(spec) is None:
        limit_ms = trigger_timeout(spec, tests) * 1000
        offered = trigger_keys(project).offered(spec, tests)
        for query in tests.queries:
            for k in range(tests.runs):
                tkey = trigger_keys(project).key(spec, tests, query, k)
                facts = index.stored(tkey.key)
                plan.triggers.append(TriggerItem(spec=spec, query=query, k=k, tkey=tkey, offered=offered,
                                                 cached=facts is not None and facts[1] <= limit_ms,
                                                 damaged=index.damaged.get(tkey.key)))
    index.save()
    if spec.adaptive is not None:  # trials: {min, max, decide}: drop what stored grades made unnecessary
        prune(project, plan)
    return plan


# Adaptive trials (trials: {min, max, decide}): the looks a cell's stored grades decide; engine/adaptive.py holds
# the rest of the engine's side (which grades a trial waits for, whether it is still needed).

def adaptive_settings(a: Adaptive) -> dict[str, Any]:
    return {"least": a.least, "most": a.most, "batch": a.batch, "threshold": a.decide, "alpha": a.alpha}


def stop_of(adaptive: Adaptive, passes: Sequence[bool | None]) -> Stop:
    return adaptive_stop(passes, **adaptive_settings(adaptive))


def passed(grade: dict[str, Any] | None) -> bool | None:
    """A grade's contribution to the sequence: passed or not (fail and cheat are not passed); None when there is
    no grade, or it is no verdict (error, timeout, judge_error: retried on the next run, never evidence)."""
    return None if grade is None or grade.get("outcome") not in VERDICT_OUTCOMES else grade["outcome"] == "pass"


def cell_groups(items: Sequence[Item]) -> dict[tuple[str, str], list[Item]]:
    groups: dict[tuple[str, str], list[Item]] = {}
    for item in items:
        groups.setdefault((item.case.id, item.arm.name), []).append(item)
    return {key: sorted(group, key=lambda i: i.k) for key, group in groups.items()}


def prune(project: Project, plan: SpecPlan) -> None:
    """Drop from the plan every trial a cell's stored grades have made unnecessary (decided at an earlier look)."""
    adaptive = plan.spec.adaptive
    if adaptive is None:
        return
    keep: list[Item] = []
    for group in cell_groups(plan.items).values():
        passes: list[bool | None] = []
        for item in group:
            grade = None
            if item.trial_cached and item.grade_cached and item.grade_key is not None:
                grade = project.store.get_action(item.grade_key, schema=GRADE_SCHEMA, verify=False)
            passes.append(passed(grade))
        stop = stop_of(adaptive, passes)
        keep.extend(group if stop.used is None else group[:stop.used])
    order = {id(item): i for i, item in enumerate(plan.items)}
    plan.items[:] = sorted(keep, key=lambda i: order[id(i)])
