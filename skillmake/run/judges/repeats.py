"""Repeated judgings of a grade (judge noise): their keys, their records in the action cache, and gathering the
verdicts many cells need — read from the store, or judged now in a thread pool.

A grade's judges are samples too. Repeat r (r ≥ 1) of the grade with key G is stored under
sha256(canonical {key_version, kind: "rejudge", grade: G, repeat: r}); repeat 0 is the grade itself. Since G holds
the trial's outputs, the case's grade fragment and the judge settings (temperature included when set), a repeat is
reused exactly as long as the grade it repeats would be: editing one case's rubric makes only its repeats stale.
Only verdicts are cached; a repeat that ended in judge_error is judged again next time. Never an agent call.
"""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from skillmake.core.canonical import KEY_VERSION, digest_json
from skillmake.core.errors import SkillmakeError
from skillmake.run.judges.noise_report import CellVerdicts
from skillmake.run.project import Project, current_run_id
from skillmake.spec.model import Arm, Case, Spec

SCHEMA = "rejudge-record.schema.json"
SCHEMA_ID = "skillmake/rejudge-record@1"


def repeat_key(grade_key: str, repeat: int) -> str:
    return digest_json({"key_version": KEY_VERSION, "kind": "rejudge", "grade": grade_key, "repeat": repeat})


def judge_settings(spec: Spec, case: Case) -> dict[str, Any]:
    """The judge a repeat of `case` runs on: provider, resolved model and temperature (None: the provider's own)."""
    from skillmake.run.judges.resolve import choose

    choice = choose(spec, case)
    return {"provider": choice.provider, "model": choice.model, "temperature": spec.judge.temperature}


def cached(project: Project, grade_key: str, repeat: int) -> dict[str, Any] | None:
    """The stored verdict of repeat `repeat` of the grade `grade_key`, or None."""
    record = project.store.get_action(repeat_key(grade_key, repeat), schema=SCHEMA)
    if record is None or record["grade_key"] != grade_key or record["repeat"] != repeat:
        return None
    return record


@dataclass(frozen=True, slots=True, kw_only=True)
class Repeat:
    record: dict[str, Any]
    requests: int  # HTTP requests made for it (retries included)


def judge_again(project: Project, spec: Spec, case: Case, trial: dict[str, Any], *, grade_key: str,
                repeat: int) -> Repeat:
    """Run `case`'s judges once more over the trial's stored outputs (no checks: they are deterministic) and
    cache the verdict under the repeat's key. A judge error is returned, never cached."""
    from skillmake.run.judges.run import judge_case

    key = repeat_key(grade_key, repeat)
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    store = project.store
    text = store.get(trial["outputs"]["output"])
    files = {name: store.get(d) for name, d in trial["outputs"]["files"].items()}
    expectations: list[dict[str, Any]] = []
    score: float | None = None
    usage: dict[str, Any] = {"requests": 0}
    error: str | None
    if text is None or any(v is None for v in files.values()):
        outcome, error = "judge_error", "the trial's stored outputs are missing; run it again (skillmake)"
    else:
        verdict = judge_case(spec, case, output=text.decode("utf-8", "replace"),
                             files={name: data for name, data in files.items() if data is not None})
        usage = verdict.usage.to_json()
        error = verdict.error
        expectations = list(verdict.expectations)
        score = None if error else verdict.score
        outcome = "judge_error" if error else "pass" if all(e["passed"] for e in expectations) else "fail"
    record: dict[str, Any] = {
        "schema": SCHEMA_ID, "kind": "rejudge", "key": key, "grade_key": grade_key, "trial_key": trial["key"],
        "repeat": repeat, "judge": judge_settings(spec, case), "outcome": outcome, "error": error,
        "score": None if score is None else round(score, 6), "expectations": expectations if not error else [],
        "usage": usage,
        "timing": {"started": started, "duration_ms": round((time.monotonic() - t0) * 1000, 3)},
        "run_id": current_run_id(),
    }
    if not error:
        store.put_action(record, schema=SCHEMA)
    return Repeat(record=record, requests=int(usage.get("requests") or 0))


# --- gathering the verdicts of many cells --------------------------------------------------------------------

class Cell(Protocol):
    """A judged cell whose trial is stored (the rejudge command's selection)."""

    @property
    def name(self) -> str: ...
    @property
    def spec(self) -> Spec: ...
    @property
    def case(self) -> Case: ...
    @property
    def arm(self) -> Arm: ...
    @property
    def k(self) -> int: ...
    @property
    def trial(self) -> dict[str, Any]: ...
    @property
    def grade_key(self) -> str: ...


@dataclass(slots=True)
class Gathered:
    """Every verdict the cells need, (grade key, repeat) → judge entries, read from the store or judged now; a grade
    key that several cells share (identical inputs) is judged once."""

    cells: dict[str, Cell]  # grade key → the first cell with it
    n: int
    found: dict[tuple[str, int], tuple[dict[str, Any], ...]] = field(default_factory=dict)
    errors: dict[tuple[str, int], str] = field(default_factory=dict)
    reused: set[tuple[str, int]] = field(default_factory=set)
    made: dict[tuple[str, int], int] = field(default_factory=dict)  # requests made for it
    todo: list[tuple[str, int]] = field(default_factory=list)
    gate: Any = None  # budget.Gate: each call admitted under the spending cap, then settled; None: no cap

    def run(self, project: Project, jobs: int) -> None:
        """Judge everything in `todo`, `jobs` calls at a time."""
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=min(jobs, len(self.todo)))
        try:
            futures = {pool.submit(self._judge, project, key, r): (key, r) for key, r in self.todo}
            for future in concurrent.futures.as_completed(futures):
                at = futures[future]
                entries, requests, error = future.result()
                self.made[at] = requests
                if error is None:
                    self.found[at] = entries
                else:
                    self.errors[at] = error
        except BaseException:  # Ctrl-C: no new call starts; those under way end within their budget
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()

    def _judge(self, project: Project, key: str, r: int) -> tuple[tuple[dict[str, Any], ...], int, str | None]:
        from skillmake.run import grade

        cell = self.cells[key]
        name = f"{cell.name}#{r}"
        if self.gate is not None and not self.gate.admit(name, cell):  # the cap: this call and later ones wait
            return (), 0, "not run: spending cap"
        try:
            if r == 0:  # the grade itself, as a run makes it (and stores it: the next run reuses it)
                run = grade.execute(project, cell.spec, cell.case, cell.arm, cell.k, cell.trial)
                if self.gate is not None:
                    self.gate.settle(name, run.record if run.ran else None)
                if run.record["outcome"] not in grade.CACHEABLE:
                    return (), run.judge_calls, run.record.get("error") or run.record["outcome"]
                return judged(run.record), run.judge_calls, None
            done = judge_again(project, cell.spec, cell.case, cell.trial, grade_key=key, repeat=r)
        except SkillmakeError as exc:
            if self.gate is not None:
                self.gate.settle(name, None)
            return (), 0, exc.render()
        if self.gate is not None:
            self.gate.settle(name, done.record)
        return judged(done.record), done.requests, done.record["error"]

    def verdicts(self, cell: Cell) -> CellVerdicts:
        """The cell's judge entries repeat by repeat, or which repeats gave none."""
        sets = [self.found.get((cell.grade_key, r)) for r in range(self.n + 1)]
        errors = tuple((r, self.errors.get((cell.grade_key, r), "no verdict")) for r, s in enumerate(sets) if s is None)
        return CellVerdicts(name=cell.name, case=cell.case, arm=cell.arm.name, k=cell.k,
                            sets=tuple(s for s in sets if s is not None) if not errors else (), errors=errors)

    def calls(self, cells: Sequence[Cell]) -> dict[str, int]:
        """Judge calls made now (HTTP requests, retries included) and reused from the store (one per judge and
        verdict), over the distinct grades of `cells`."""
        from skillmake.run.judges.resolve import applicable

        keys = {c.grade_key: c for c in cells}
        made = sum(n for (key, _), n in self.made.items() if key in keys)
        reused = sum(len(applicable(keys[key].case)) for key, _ in self.reused if key in keys)
        return {"made": made, "reused": reused}


def judged(record: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """A grade's or a repeat's judge entries (a grade's checks are deterministic: not repeated, not compared)."""
    return tuple(e for e in record["expectations"] if e.get("source") == "judge")


def gather(project: Project, cells: Sequence[Cell], n: int) -> Gathered:
    """What is stored of repeats 0..n of every cell's grade, and what must be judged (`todo`)."""
    from skillmake.run import grade

    work = Gathered(cells={}, n=n)
    for cell in cells:
        if cell.grade_key in work.cells:
            continue
        work.cells[cell.grade_key] = cell
        for r in range(n + 1):
            record = (grade.cached(project, cell.spec, cell.case, cell.trial) if r == 0
                      else cached(project, cell.grade_key, r))
            if record is None:
                work.todo.append((cell.grade_key, r))
            else:
                work.found[(cell.grade_key, r)] = judged(record)
                work.reused.add((cell.grade_key, r))
    return work
