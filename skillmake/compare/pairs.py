"""Judging a comparison: every pair (trial k of A, trial k of B) in both orders, each distinct ordered pair asked
once — or read from the store when it was judged before — then combined per pair and per case (combine.py)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from skillmake.compare import cache, comparator
from skillmake.compare.combine import TIE, case_winner, from_position, pair_winner
from skillmake.compare.comparator import Verdict
from skillmake.compare.outputs import Cells, load, problem
from skillmake.compare.preflight import check_judge
from skillmake.run.agents.base import Usage
from skillmake.run.judges.base import Endpoint, add_usage
from skillmake.run.judges.resolve import Choice, choose, endpoint
from skillmake.run.project import Project, current_run_id
from skillmake.spec.model import Case, Spec

ORDERS = (("A", "B"), ("B", "A"))  # A shown first, then B shown first


@dataclass(frozen=True, slots=True, kw_only=True)
class Order:
    """One ordered pair: which side was Output 1 and Output 2, and the judge's verdict (in positions)."""

    shown: tuple[str, str]
    key: str
    reused: bool = False
    verdict: Verdict | None = None
    error: str | None = None

    @property
    def winner(self) -> str | None:
        return from_position(self.verdict.winner, self.shown) if self.verdict else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Pair:
    k: int
    trial_keys: dict[str, str]
    orders: tuple[Order, ...] = ()
    identical: bool = False  # the same output on both sides: a tie without asking
    error: str | None = None  # why the pair could not be judged at all

    @property
    def winner(self) -> str | None:
        """A, B or TIE; None when it has no verdict (an error here or in either order)."""
        if self.error is not None:
            return None
        if self.identical:
            return TIE
        winners = [o.winner for o in self.orders]
        if len(winners) != 2 or winners[0] is None or winners[1] is None:
            return None
        return pair_winner(winners[0], winners[1])

    @property
    def problem(self) -> str | None:
        return self.error or next((o.error for o in self.orders if o.error), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseResult:
    case: Case
    pairs: tuple[Pair, ...]

    @property
    def winner(self) -> str | None:
        return case_winner(p.winner for p in self.pairs if p.winner is not None)


@dataclass(slots=True, kw_only=True)
class Judging:
    cases: list[CaseResult]
    made: int = 0  # ordered pairs asked this run
    reused: int = 0  # ordered pairs read from the store
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Job:
    inputs: dict[str, Any]
    first: dict[str, Any]  # trial records, in the order shown
    second: dict[str, Any]
    target: Endpoint
    temperature: float | None


@dataclass(slots=True, kw_only=True)
class _Row:
    """A pair before judging: its ordered pairs' keys, or why it needs none."""

    k: int
    trial_keys: dict[str, str]
    error: str | None = None
    identical: bool = False
    keyed: list[tuple[tuple[str, str], str]] = field(default_factory=list)  # (shown, key) per order


def judge(project: Project, spec: Spec, cases: Sequence[Case], cells: Cells, *, trials: int, jobs: int = 4,
          say: Callable[[str], None] = lambda _: None, gate: Any = None) -> Judging:
    """Judge every pair of `cells` (sides "A" and "B") for `cases`, in both orders. `gate`: a budget.Gate; a call
    it does not admit (the spending cap) is not made and its order has no verdict."""
    wanted: dict[str, _Job] = {}
    layout = [(case, _rows(spec, case, cells, trials=trials, wanted=wanted)) for case in cases]
    found = {key: cache.lookup(project.store, key) for key in wanted}
    fresh = {key: wanted[key] for key, record in found.items() if record is None}
    if fresh:
        check_judge(spec, cases)
    say(f"asking the judge about {len(fresh)} ordered pair(s); {len(wanted) - len(fresh)} reused from the store")
    answers = _ask(project, fresh, jobs=jobs, gate=gate)
    result = Judging(cases=[], made=len(fresh), reused=len(wanted) - len(fresh))
    for _verdict, _error, usage in answers.values():
        result.usage = add_usage(result.usage, usage)
    for case, rows in layout:
        pairs = []
        for row in rows:
            orders = []
            for shown, key in row.keyed:
                record = found.get(key)
                if record is not None:
                    orders.append(Order(shown=shown, key=key, reused=True, verdict=cache.verdict_of(record)))
                else:
                    verdict, error, _usage = answers[key]
                    orders.append(Order(shown=shown, key=key, verdict=verdict, error=error))
            pairs.append(Pair(k=row.k, trial_keys=row.trial_keys, orders=tuple(orders), identical=row.identical,
                              error=row.error))
        result.cases.append(CaseResult(case=case, pairs=tuple(pairs)))
    return result


_CLI_VERSIONS: dict[str, str | None] = {}


def _rows(spec: Spec, case: Case, cells: Cells, *, trials: int, wanted: dict[str, _Job]) -> list[_Row]:
    """The case's pairs, each ordered pair's job added to `wanted` (by key: the same ordered pair is asked once)."""
    temperature = getattr(spec.judge, "temperature", None)
    choice = choose(spec, case)
    task = comparator.task_text(case)
    rows = []
    for k in range(trials):
        side = {s: cells.get(s, case, k) for s in ("A", "B")}
        row = _Row(k=k, trial_keys={s: c.tkey.key for s, c in side.items()})
        rows.append(row)
        row.error = choice.error or next((f"{s}: {why}" for s, c in side.items() if (why := problem(c))), None)
        if row.error is not None:
            continue
        records = {s: c.record for s, c in side.items() if c.record is not None}
        digests = {s: cache.output_digest(r) for s, r in records.items()}
        if digests["A"] == digests["B"]:
            row.identical = True
            continue
        config = cache.judge_config(choice, temperature=temperature, cli_version=_cli_version(choice))
        for shown in ORDERS:
            inputs = cache.key_inputs(digests[shown[0]], digests[shown[1]], task=task, judge=config)
            key = cache.key_of(inputs)
            wanted.setdefault(key, _Job(inputs=inputs, first=records[shown[0]], second=records[shown[1]],
                                        target=endpoint(choice), temperature=temperature))
            row.keyed.append((shown, key))
    return rows


def _ask(project: Project, jobs_by_key: dict[str, _Job], *, jobs: int, gate: Any = None
         ) -> dict[str, tuple[Verdict | None, str | None, Usage]]:
    """Ask the judge for every job, `jobs` at a time; store each verdict as soon as it arrives."""
    run_id = current_run_id()

    def one(key: str) -> tuple[Verdict | None, str | None, Usage]:
        job = jobs_by_key[key]
        shown = [load(project.store, job.first), load(project.store, job.second)]
        if shown[0] is None or shown[1] is None:
            return None, "a trial's stored outputs are missing from the store; run `skillmake` to run it again", \
                Usage()
        if gate is not None and not gate.admit_call(key):
            return None, "not run: spending cap", Usage()
        started, t0 = dt.datetime.now(dt.UTC), time.monotonic()
        request = comparator.request(job.inputs["task"], shown[0], shown[1], temperature=job.temperature)
        answer = comparator.ask(request, job.target)
        if gate is not None:
            gate.settle_call(key, answer.usage.cost_usd, made=True)
        if answer.verdict is not None:
            cache.save(project.store, job.inputs, answer.verdict, usage=answer.usage, started=started,
                       duration_ms=(time.monotonic() - t0) * 1000, run_id=run_id)
        return answer.verdict, answer.error, answer.usage

    keys = list(jobs_by_key)
    if jobs <= 1 or len(keys) <= 1:
        return {key: one(key) for key in keys}
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="compare") as pool:
        return dict(zip(keys, pool.map(one, keys), strict=True))


def _cli_version(choice: Choice) -> str | None:
    """The CLI judge's version (part of the key, as it is of a grade key); asked once per provider and process."""
    memo = _CLI_VERSIONS
    if choice.provider not in ("claude-code", "codex"):
        return None
    if choice.provider not in memo:
        if choice.provider == "claude-code":
            from skillmake.run.judges.claude_code_provider import version
        else:
            from skillmake.run.judges.codex_provider import version
        memo[choice.provider] = version()
    return memo[choice.provider]


def tally(pairs: Iterable[Pair]) -> dict[str, int]:
    """{"a_wins", "b_wins", "ties", "unjudged"} over `pairs`."""
    winners = [p.winner for p in pairs]
    return {"a_wins": winners.count("A"), "b_wins": winners.count("B"), "ties": winners.count(TIE),
            "unjudged": winners.count(None)}
