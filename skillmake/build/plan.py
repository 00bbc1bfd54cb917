"""The plan: every trial and grade of every spec with its key and whether the store already has it.

Computed once when tasks are loaded; doit's `uptodate` gets plain booleans from it (no callables,
so doit's per-task inspect.signature cost is avoided), and `explain` reads the same plan.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .. import atomic
from .. import grade as grading
from ..canonical import digest_json
from ..checkout import labels_digest
from ..keys import TrialKey, grade_key, grade_part
from ..model import Arm, Case, Spec, TriggerQuery
from ..project import Project
from ..results.triggers import skip_reason
from ..trial import CACHEABLE as TRIAL_CACHEABLE
from ..trial import timeout_of
from ..triggers.keys import Offered
from ..triggers.run import timeout_of as trigger_timeout
from ..workspace import kept_tree


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

    @property
    def name(self) -> str:
        return f"{self.spec.name}/{self.query.id}/{self.k}"


@dataclass(slots=True, kw_only=True)
class SpecPlan:
    spec: Spec
    items: list[Item] = field(default_factory=list)
    triggers: list[TriggerItem] = field(default_factory=list)

    @property
    def complete(self) -> bool:
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
    """What a report shows or decides that no key holds: labels (checkout.labels_digest), the thresholds, the
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


def plan_spec(project: Project, spec: Spec) -> SpecPlan:
    plan = SpecPlan(spec=spec)
    actions_dir = str(project.store.actions)
    index = _Index(project.state_dir / "index" / f"{spec.name}.json")
    for case in spec.cases:
        grade_parts = None  # the same for every arm and trial of the case
        limit_ms = timeout_of(spec, case) * 1000
        for arm in spec.arms:
            for k in range(spec.trials):
                tkey = project.keys.trial_key(spec, case, arm, k)
                item = Item(spec=spec, case=case, arm=arm, k=k, tkey=tkey)
                facts = index.stored(actions_dir, tkey.key)
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
    if tests is not None and skip_reason(spec) is None:
        limit_ms = trigger_timeout(spec, tests) * 1000
        offered = project.trigger_keys.offered(spec, tests)
        for query in tests.queries:
            for k in range(tests.runs):
                tkey = project.trigger_keys.key(spec, tests, query, k)
                facts = index.stored(actions_dir, tkey.key)
                plan.triggers.append(TriggerItem(spec=spec, query=query, k=k, tkey=tkey, offered=offered,
                                                 cached=facts is not None and facts[1] <= limit_ms))
    index.save()
    return plan


Facts = tuple[str, float, str | None]  # digest of the outputs, how long the agent took (ms), workspace tree


def _facts(record: dict[str, Any]) -> Facts | None:
    try:
        timing = record.get("timing") or {}
        took = float(timing.get("agent_ms", timing.get("duration_ms", 0.0)))
        return digest_json(record["outputs"]), took, kept_tree(record)
    except (KeyError, TypeError, ValueError):
        return None


def _peek(actions_dir: str, key: str, cacheable: frozenset[str]) -> dict[str, Any] | None:
    """A fast look at the action cache (parse only); the record is schema-checked when it is used."""
    h = key[7:]
    try:
        with open(f"{actions_dir}/{h[:2]}/{h}.json", "rb") as f:
            record = orjson.loads(f.read())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(record, dict) or record.get("key") != key or record.get("outcome") not in cacheable:
        return None
    return record


class _Index:
    """trial key → the facts of its record (outputs digest, agent time, workspace tree), valid while the
    action file's (inode, size, mtime) are unchanged.

    Saves reading and parsing every cached trial record on a no-op run; a record that is rewritten
    (quarantined and re-run) changes its stat signature, so a stale entry is never trusted.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.entries: dict[str, list[Any]] = dict(orjson.loads(path.read_bytes()))
        except (OSError, orjson.JSONDecodeError, TypeError, ValueError):
            self.entries = {}
        self.used: dict[str, list[Any]] = {}
        self.changed = False

    def stored(self, actions_dir: str, key: str) -> Facts | None:
        """The facts of `key`'s stored result: from the index when its record is unchanged, else read (and
        remembered); None when the store has no result for it."""
        facts = self.facts(actions_dir, key)
        if facts is None:
            record = _peek(actions_dir, key, TRIAL_CACHEABLE)
            facts = _facts(record) if record else None
            if facts is not None:
                self.remember(actions_dir, key, facts)
        return facts

    def facts(self, actions_dir: str, key: str) -> Facts | None:
        entry = self.entries.get(key)
        if entry is None or len(entry) != 6:
            return None
        h = key[7:]
        try:
            st = os.stat(f"{actions_dir}/{h[:2]}/{h}.json")
        except OSError:
            return None
        if [st.st_ino, st.st_size, st.st_mtime_ns] != entry[:3]:
            return None
        self.used[key] = entry
        return str(entry[3]), float(entry[4]), entry[5]

    def remember(self, actions_dir: str, key: str, facts: Facts) -> None:
        h = key[7:]
        try:
            st = os.stat(f"{actions_dir}/{h[:2]}/{h}.json")
        except OSError:
            return
        self.used[key] = [st.st_ino, st.st_size, st.st_mtime_ns, *facts]
        self.changed = True

    def save(self) -> None:
        if self.changed or len(self.used) != len(self.entries):
            atomic.write_bytes(self.path, orjson.dumps(self.used))
