"""Scoring one candidate description on a set of trigger queries: every (query, k) run as an ordinary trigger trial
keyed by that description, in parallel threads, each reusing its stored record when there is one. So a description
evaluated once costs nothing the next time, in this run or any later one, and a normal run of a spec whose SKILL.md
now holds that description reuses the same records."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from skillmake.core.errors import SkillmakeError
from skillmake.run.project import Project
from skillmake.spec.model import Spec, TriggerQuery, TriggerTests
from skillmake.triggers.keys import trigger_keys


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryResult:
    """One query under one description: how many of its runs fired the skill, and whether that passes."""

    query: TriggerQuery
    triggers: int
    runs: int  # runs that completed (errors and timeouts are not counted: they are tried again next time)
    errors: int
    passed: bool

    @property
    def rate(self) -> float | None:
        return self.triggers / self.runs if self.runs else None

    def to_json(self) -> dict[str, Any]:
        """skill-creator's run_eval result entry, with the query's id and its errors beside."""
        rate = self.rate
        return {"id": self.query.id, "query": self.query.query, "should_trigger": self.query.should_trigger,
                "trigger_rate": None if rate is None else round(rate, 6), "triggers": self.triggers,
                "runs": self.runs, "errors": self.errors, "pass": self.passed}


@dataclass(frozen=True, slots=True, kw_only=True)
class Evaluation:
    """A description's results on some queries, and what producing them cost."""

    description: str
    results: tuple[QueryResult, ...]
    made: int  # agent calls made (trials run now, errors included)
    reused: int  # trials whose stored record served
    first_error: str | None = None

    def of(self, queries: Sequence[TriggerQuery]) -> list[QueryResult]:
        ids = {q.id for q in queries}
        return [r for r in self.results if r.query.id in ids]

    @property
    def errors(self) -> int:
        return sum(r.errors for r in self.results)


def passes(query: TriggerQuery, triggers: int, runs: int, threshold: float) -> bool:
    """The report's rule (results/triggers.py, skill-creator's): a query passes when its trigger rate over the runs
    that completed reaches the threshold if it should trigger, stays below it if not; with no completed run, no."""
    if not runs:
        return False
    rate = triggers / runs
    return rate >= threshold if query.should_trigger else rate < threshold


Trial = tuple[TriggerQuery, int]
Done = Callable[[int, int], None]  # (trials finished, trials in all): progress


def evaluate(project: Project, spec: Spec, tests: TriggerTests, description: str, queries: Sequence[TriggerQuery],
             *, jobs: int, progress: Done | None = None, gate: Any = None) -> Evaluation:
    """Run (or reuse) runs 0..tests.runs-1 of every query with `description` offered as the skill's. `gate`: a
    budget.Gate; a trial it does not admit (the spending cap) does not start and counts as an error."""
    from skillmake.triggers.run import execute, triggered

    offered = trigger_keys(project).offered(spec, tests, description=description)
    trials: list[Trial] = [(q, k) for q in queries for k in range(tests.runs)]
    keys = {(q.id, k): trigger_keys(project).key(spec, tests, q, k, description=description) for q, k in trials}
    outcome: dict[tuple[str, int], tuple[bool | None, bool, str | None]] = {}  # fired (None: error), ran, error
    if gate is not None:
        from skillmake.run.budget import trigger_estimate

        estimate = trigger_estimate(project, spec.name)

    def one(trial: Trial) -> tuple[bool | None, bool, str | None]:
        query, k = trial
        name = f"{query.id}/{k}@{keys[(query.id, k)].key[7:19]}"
        if gate is not None and not gate.admit_trigger(name, estimate):
            return None, False, f"{query.id} run {k}: not run: spending cap"
        try:
            run = execute(project, spec, tests, query, k, keys[(query.id, k)], offered)
        except SkillmakeError as exc:  # could not even start the trial (nothing was asked of the agent)
            if gate is not None:
                gate.settle_trigger(name, None)
            return None, False, exc.render()
        record = run.record
        if gate is not None:
            gate.settle_trigger(name, record if run.ran else None)
        if record["outcome"] != "completed":
            error = " ".join(str(record.get("error") or record["outcome"]).split())[:300]
            return None, run.ran, f"{query.id} run {k}: {error}"
        return triggered(record, offered.name), run.ran, None

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="optimize")
    try:
        futures = {pool.submit(one, trial): trial for trial in trials}
        for n, future in enumerate(concurrent.futures.as_completed(futures), start=1):
            query, k = futures[future]
            outcome[(query.id, k)] = future.result()
            if progress is not None:
                progress(n, len(trials))
    except BaseException:
        # Ctrl-C: the interrupt handler has stopped every agent process; queued trials must not start.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    results = []
    for query in queries:
        seen = [outcome[(query.id, k)] for k in range(tests.runs)]
        runs = sum(1 for fired, _, _ in seen if fired is not None)
        hits = sum(1 for fired, _, _ in seen if fired)
        results.append(QueryResult(query=query, triggers=hits, runs=runs, errors=len(seen) - runs,
                                   passed=passes(query, hits, runs, tests.threshold)))
    ran = [r for _, r, _ in outcome.values()]
    first_error = next((outcome[(q.id, k)][2] for q, k in trials if outcome[(q.id, k)][2]), None)
    return Evaluation(description=description, results=tuple(results), made=sum(ran),
                      reused=sum(1 for fired, r, _ in outcome.values() if not r and fired is not None),
                      first_error=first_error)
