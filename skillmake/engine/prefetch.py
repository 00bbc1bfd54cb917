"""Before a run (or `skillmake report`) plans its tasks: fetch from the remote store, in one batch, the records of
the planned trials and grades the local store lacks, then plan those specs again.

Without this a fresh clone would find every trial stale, create a task for each and ask the remote once per trial
as the tasks start; with it, what the remote holds is local before doit sees the graph, so those trials are not
tasks at all (a no-op, when the remote holds everything). Trials first: a grade's key follows from its trial's
outputs, so the grades are asked for once the trials are here. A warm local store asks nothing (no key is missing);
`explain` never gets here (it reads the local store only).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from skillmake.engine import scope, shard
from skillmake.engine.plan import SpecPlan
from skillmake.run.project import Project
from skillmake.spec.model import Spec
from skillmake.store.objects import GRADE_SCHEMA, TRIAL_SCHEMA
from skillmake.store.remote import remote_of


def wanted(argv: Sequence[str]) -> bool:
    """Whether this invocation runs tasks or builds reports (a listing, `info` or `clean` fetches nothing)."""
    words = [a for a in argv if not a.startswith("-")]
    return scope.runs(argv) or (bool(words) and words[0] == "report")


def fill(project: Project, plans: tuple[SpecPlan, ...], *, replan: Callable[[Spec], SpecPlan]) -> tuple[SpecPlan, ...]:
    """`plans`, with the specs whose missing records came from the remote planned again (`replan`). Only the
    keys of this run's shard are asked for (shard.py): a matrix job fetches its own share, not the suite."""
    remote = remote_of(project.store)
    if remote is None:
        return plans
    mine = shard.current()
    store = project.store
    out = list(plans)
    for schema in (TRIAL_SCHEMA, GRADE_SCHEMA):
        missing: dict[str, int] = {}  # key → the index of its spec's plan
        for n, plan in enumerate(out):
            if plan.settled:  # all its records are here (settled.py): nothing to fetch
                continue
            for item in plan.items:
                if mine is not None and not mine.has(item.tkey.key):
                    continue
                if schema == TRIAL_SCHEMA and not item.trial_cached:
                    missing[item.tkey.key] = n
                elif schema == GRADE_SCHEMA and item.grade_key is not None and not item.grade_cached:
                    missing[item.grade_key] = n
            if schema == TRIAL_SCHEMA:
                missing.update((t.tkey.key, n) for t in plan.triggers
                               if not t.cached and (mine is None or mine.has(t.tkey.key)))
        missing = {k: n for k, n in missing.items() if not store.has_action(k)}
        if not missing:
            continue
        fetched = remote.prefetch(sorted(missing), store, schema=schema)
        for n in sorted({missing[k] for k in fetched}):
            try:
                out[n] = replan(out[n].spec)
            except Exception:  # planning failed this time: the plan made before still holds
                continue
    return tuple(out)
