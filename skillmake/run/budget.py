"""The spending cap (`--max-cost USD`, `max_cost` in the config): what a trial is estimated to cost, learned from the
stored records, and the run's ledger of what it spent and has promised, asked before each trial starts."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from skillmake.core.atomic import write_bytes
from skillmake.core.pricing import price_of
from skillmake.spec.settings import DEFAULT_MAX_TOKENS

if TYPE_CHECKING:
    from skillmake.run.project import Project

NOT_RUN = "not run: spending cap"  # a cell's outcome, in the progress line and the closing line
LEDGER = "budget.json"  # in the state folder; one run per project at a time (runlock), so one ledger
_SLACK = 1e-9  # $0.30 + $0.30 + $0.30 is 0.8999999999999999: a sum of floats must not cross a cap it equals
_DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-5.4"}  # what the API agents ask when unset


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    """What one trial (or grade) is expected to cost, and what that number rests on. `usd` None: unknown."""

    usd: float | None
    basis: str

    def shown(self) -> str:
        return f"est. ${self.usd:.4f} ({self.basis})" if self.usd is not None else f"est. unknown ({self.basis})"


def usd(amount: float) -> str:
    """A cap as written: $1.00, $0.35, and $0.009 (not rounded to $0.01)."""
    return f"${amount:.2f}" if abs(amount * 100 - round(amount * 100)) < 1e-9 else f"${amount:g}"


def cap_of(project: Project) -> float | None:
    """The cap for this run: --max-cost, $SKILLMAKE_MAX_COST, the config's `max_cost`; None: no cap."""
    from skillmake.spec import overrides

    config = project.config
    value = overrides.resolve("max_cost", project=config.max_cost if config is not None else None).value
    return float(value) if value is not None else None


def _cost(record: dict[str, Any] | None) -> float | None:
    usage = (record or {}).get("usage")
    cost = usage.get("cost_usd") if isinstance(usage, dict) else None
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None  # a view being rewritten, or none yet: no evidence
    return data if isinstance(data, dict) else None


def _mean(costs: list[float]) -> float:
    return sum(costs) / len(costs)


def _trials(n: int) -> str:
    return f"{n} stored trial" + ("s" if n != 1 else "")


class Estimator:
    """Estimates learned from the stored views (runs/<spec>/<case>/<arm>/trial-<k>/): the mean cost of the stored
    trials of the same case and arm; else of every stored trial with the same agent settings (kind, model, flags:
    the trial key's agent part); else the model's list price for the prompt and `max_tokens` of output (a ceiling
    for a single-call API agent); else unknown (a CLI agent never run: its turns cannot be foreseen)."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._by_agent: dict[str, list[float]] | None = None
        self._memo: dict[tuple[str, str, str, str], list[float]] = {}

    def _views(self, spec: str, case: str, arm: str) -> Iterator[Path]:
        folder = self.project.runs_dir / spec / case / arm
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return
        yield from (folder / n for n in names if n.startswith("trial-"))

    def _stored(self, item: Any, name: str) -> list[float]:
        """The costs of the stored `name` records of the item's case and arm; read once per case and arm."""
        at = (item.spec.name, item.case.id, item.arm.name, name)
        if at not in self._memo:
            found = (_cost(_read(view / name)) for view in self._views(*at[:3]))
            self._memo[at] = [c for c in found if c is not None]
        return self._memo[at]

    def _agent_costs(self, digest: str) -> list[float]:
        if self._by_agent is None:
            by: dict[str, list[float]] = {}
            try:
                trials = list(self.project.runs_dir.glob("*/*/*/trial-*/trial.json"))
            except OSError:
                trials = []
            for path in trials:
                record = _read(path)
                cost = _cost(record)
                agent = ((record or {}).get("inputs") or {}).get("agent")
                if cost is not None and isinstance(agent, str):
                    by.setdefault(agent, []).append(cost)
            self._by_agent = by
        return self._by_agent.get(digest, [])

    def trial(self, item: Any) -> Estimate:
        agent = item.arm.agent
        if agent.kind == "command":
            return Estimate(usd=0.0, basis="command agent: no model call it reports")
        same = self._stored(item, "trial.json")
        if same:
            return Estimate(usd=_mean(same), basis=f"mean of {_trials(len(same))} of this case and arm")
        costs = self._agent_costs(item.tkey.agent.digest)
        if costs:
            return Estimate(usd=_mean(costs), basis=f"mean of {len(costs)} stored trials of this agent and model")
        return _price_table(agent, item.case)

    def grade(self, item: Any, *, judge_calls: int) -> Estimate:
        """A grade's judges: the mean of the stored grades of the same case and arm; checks alone cost nothing."""
        if not judge_calls:
            return Estimate(usd=0.0, basis="checks only")
        same = self._stored(item, "grade.json")
        if same:
            return Estimate(usd=_mean(same), basis=f"mean of {len(same)} stored grades of this case and arm")
        return Estimate(usd=None, basis="no stored grade")


def _price_table(agent: Any, case: Any) -> Estimate:
    if agent.kind not in _DEFAULT_MODELS:
        return Estimate(usd=None, basis=f"{agent.kind}: no stored trial to learn from")
    model = agent.model or _DEFAULT_MODELS[agent.kind]
    price = price_of(model)
    if price is None:
        return Estimate(usd=None, basis=f"{model} is not in the price table")
    prompt_tokens = len(case.prompt or "") // 4 + 1  # ~4 characters a token
    out = agent.max_tokens or DEFAULT_MAX_TOKENS
    usd = (prompt_tokens * price.input + out * price.output) / 1_000_000
    return Estimate(usd=usd, basis=f"price table: {model}, up to {out:,} tokens out")


@dataclass(frozen=True, slots=True, kw_only=True)
class Admission:
    """The ledger's answer to "may this trial start?"."""

    admitted: bool
    spent: float
    cap: float


class Ledger:
    """What this run spent and what the trials running now are expected to spend, in one small file in the state
    folder, changed under an flock held only for the read-modify-write: doit's threads and its worker processes
    (-P process) see one total. Never used from a signal handler."""

    def __init__(self, state_dir: Path, *, run_id: str, cap: float) -> None:
        self.path = Path(state_dir) / LEDGER
        self.run_id = run_id
        self.cap = cap

    def _change(self, change: Callable[[dict[str, Any]], Any]) -> Any:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self._state()
            result = change(state)
            write_bytes(self.path, orjson.dumps(state), durable=False)
            return result

    def _state(self) -> dict[str, Any]:
        state = _read(self.path)
        if state is None or state.get("run_id") != self.run_id:  # an earlier run's ledger: this run starts at 0
            return {"run_id": self.run_id, "cap": self.cap, "spent": 0.0, "held": {}, "capped": [],
                    "stopped": False, "learned": {}}
        return state

    def admit(self, cell: str, estimate: float, *, agent: str | None = None) -> Admission:
        """May `cell` start? Only if what was spent, what running trials hold and `estimate` stay within the cap;
        once one trial is refused, no later one starts (the cells not run are listed in order). A trial whose
        agent settings already cost more per trial in this run than its estimate counts at that run's mean, and
        so does every running trial of that agent: history that was cheaper than today does not let the run
        overshoot."""
        def change(state: dict[str, Any]) -> Admission:
            learned = state["learned"]

            def floor(digest: str | None) -> float:
                total, count = learned.get(digest, (0.0, 0)) if digest else (0.0, 0)
                return total / count if count else 0.0

            held = sum(max(e, floor(a)) for e, a in state["held"].values())
            wanted = max(estimate, floor(agent))
            if state["stopped"] or state["spent"] + held + wanted > self.cap + _SLACK:
                state["stopped"] = True
                if cell not in state["capped"]:
                    state["capped"].append(cell)
                return Admission(admitted=False, spent=state["spent"], cap=self.cap)
            state["held"][cell] = (estimate, agent)
            return Admission(admitted=True, spent=state["spent"], cap=self.cap)

        result: Admission = self._change(change)
        return result

    def settle(self, cell: str, cost: float, *, keep: float = 0.0, agent: str | None = None) -> None:
        """`cell`'s trial (or grade) spent `cost`; `keep` stays held for what is still to come (its grade).
        `agent`: the trial's agent settings, whose in-run mean learns from `cost`."""
        def change(state: dict[str, Any]) -> None:
            state["spent"] += cost
            if keep > 0:
                state["held"][cell] = (keep, None)
            else:
                state["held"].pop(cell, None)
            if agent is not None:
                total, count = state["learned"].get(agent, (0.0, 0))
                state["learned"][agent] = (total + cost, count + 1)

        self._change(change)

    def capped(self, cell: str) -> bool:
        return cell in self._state()["capped"]

    def summary(self) -> dict[str, Any]:
        return self._state()


_LEDGERS: dict[str, tuple[Ledger, Estimator] | None] = {}


def for_run(project: Project) -> tuple[Ledger, Estimator] | None:
    """This process's ledger and estimator for the current run; None when no cap is set."""
    from skillmake.run.project import current_run_id

    run_id = current_run_id()
    key = f"{project.state_dir}\0{run_id}"
    if key not in _LEDGERS:
        cap = cap_of(project)
        _LEDGERS[key] = (Ledger(project.state_dir, run_id=run_id, cap=cap), Estimator(project)) if cap else None
    return _LEDGERS[key]


def refusal(estimate: float, cap: float, *, trials: int, unknown: bool) -> str:
    """The one line a run over its cap stops with, before any call."""
    more = " (more: some trials' cost is unknown)" if unknown else ""
    return (f"this run would cost est. ${estimate:.4f} for {trials} trials{more}, over the spending cap of "
            f"{usd(cap)} (--max-cost / max_cost); nothing was run — narrow the selection (--spec NAME, -k EXPR, "
            f"--tag TAG, 'trial:SPEC/CASE/*') or raise the cap; `skillmake explain` shows each trial's estimate")


def admit_trial(project: Project, item: Any, *, judge_calls: int) -> Admission | None:
    """Before a trial (and then its grade) runs: None when no cap is set, else the ledger's answer for its estimate
    (an unknown estimate counts as 0: the cap then holds by what was spent)."""
    found = for_run(project)
    if found is None:
        return None
    ledger, estimator = found
    trial = estimator.trial(item).usd or 0.0
    grade = estimator.grade(item, judge_calls=judge_calls).usd or 0.0
    return ledger.admit(item.name, trial + grade, agent=item.tkey.agent.digest)


def settle_trial(project: Project, item: Any, cost: float, *, ran: bool, judge_calls: int) -> None:
    """A trial admitted by admit_trial ended: what it spent counts, its grade's estimate stays held."""
    found = for_run(project)
    if found is None:
        return
    ledger, estimator = found
    grade = estimator.grade(item, judge_calls=judge_calls).usd or 0.0
    ledger.settle(item.name, cost, keep=grade, agent=item.tkey.agent.digest if ran else None)


def admit_trigger(project: Project, item: Any) -> Admission | None:
    """Before a trigger trial of a run: its estimate is the mean of the spec's stored trigger trials (0 unknown),
    and it counts at this run's mean once trigger trials of the same agent have cost."""
    found = for_run(project)
    if found is None:
        return None
    return found[0].admit(f"trigger:{item.name}", trigger_estimate(project, item.spec.name),
                          agent=item.tkey.agent.digest)


def settle_trigger(project: Project, item: Any, record: dict[str, Any] | None) -> None:
    found = for_run(project)
    if found is not None:
        found[0].settle(f"trigger:{item.name}", _cost(record) or 0.0,
                        agent=item.tkey.agent.digest if record is not None else None)

def settle(project: Project, cell: str, cost: float) -> None:
    """A grade (or trigger trial) ended: what it spent counts; nothing of the cell stays held."""
    found = for_run(project)
    if found is not None:
        found[0].settle(cell, cost)


def capped(project: Project, cell: str) -> bool:
    """Whether the cap kept `cell`'s trial from starting in this run."""
    found = for_run(project)
    return found is not None and found[0].capped(cell)


def stop_note(project: Project) -> str | None:
    """The closing note of a run the cap stopped: what it spent, the cap, the cells not run; None otherwise."""
    found = for_run(project)
    if found is None:
        return None
    state = found[0].summary()
    if not state["capped"]:
        return None
    cells = state["capped"]
    shown = ", ".join(cells[:10]) + (f" and {len(cells) - 10} more" if len(cells) > 10 else "")
    return (f"spending cap {usd(found[0].cap)} reached (${state['spent']:.4f} spent): {len(cells)} trials "
            f"{NOT_RUN}: {shown}")


_JUDGE = "judge calls"  # the ledger's in-run mean for a command's judge calls
_TRIGGER = "trigger trials"  # and for the description optimiser's trigger trials


class Gate:
    """The cap for a command that makes model calls outside doit (rejudge, compare): each call is admitted on its
    estimate (Estimator.grade for a re-judging, Estimator.trial for a trial) and settled with what it cost."""

    def __init__(self, project: Project) -> None:
        found = for_run(project)
        assert found is not None, "a Gate needs a cap (budget.for_run)"
        self.ledger, self.estimator = found

    def estimate(self, cell: Any) -> float:
        return self.estimator.grade(cell, judge_calls=1).usd or 0.0

    def admit(self, name: str, cell: Any) -> bool:
        return self.ledger.admit(name, self.estimate(cell), agent=_JUDGE).admitted

    def settle(self, name: str, record: dict[str, Any] | None) -> None:
        """What the call cost; a call that was made teaches the in-run mean the later ones count at."""
        self.ledger.settle(name, _cost(record) or 0.0, agent=_JUDGE if record is not None else None)

    def note(self, what: str = "judge calls") -> str | None:
        state = self.ledger.summary()
        if not state["capped"]:
            return None
        return (f"spending cap {usd(self.ledger.cap)} reached (${state['spent']:.4f} spent): {len(state['capped'])} "
                f"{what} {NOT_RUN}")

    def admit_trial(self, name: str, item: Any) -> bool:
        """A trial outside doit (compare's missing trials): `item` has spec, case, arm and tkey, as a plan's Item."""
        return self.ledger.admit(name, self.estimator.trial(item).usd or 0.0, agent=item.tkey.agent.digest).admitted

    def settle_trial(self, name: str, item: Any, record: dict[str, Any] | None) -> None:
        self.ledger.settle(name, _cost(record) or 0.0, agent=item.tkey.agent.digest if record is not None else None)

    def admit_call(self, name: str) -> bool:
        """A judge call whose cost nothing stored tells (compare's pairs): it counts at this run's mean."""
        return self.ledger.admit(name, 0.0, agent=_JUDGE).admitted

    def settle_call(self, name: str, cost: float | None, *, made: bool) -> None:
        self.ledger.settle(name, cost or 0.0, agent=_JUDGE if made else None)

    def admit_trigger(self, name: str, estimate: float) -> bool:
        """A trigger trial of the description optimiser; they count at this run's mean once one has cost."""
        return self.ledger.admit(name, estimate, agent=_TRIGGER).admitted

    def settle_trigger(self, name: str, record: dict[str, Any] | None) -> None:
        self.ledger.settle(name, _cost(record) or 0.0, agent=_TRIGGER if record is not None else None)

    @property
    def stopped(self) -> bool:
        return bool(self.ledger.summary()["stopped"])


def gate(project: Project) -> Gate | None:
    """A Gate for this run, or None when no cap is set."""
    return Gate(project) if for_run(project) is not None else None


def trigger_estimate(project: Project, spec: str) -> float:
    """A trigger trial's estimate for the description optimiser: the mean cost of the spec's stored trigger trials
    (views under triggers/<spec>/), else 0 (unknown)."""
    costs = [c for path in (project.triggers_dir / spec).glob("*/trial-*/trial.json")
             if (c := _cost(_read(path))) is not None]
    return _mean(costs) if costs else 0.0
