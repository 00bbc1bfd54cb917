"""skill-creator's description loop (run_loop.py): evaluate the current description on train and test together,
stop when every train query passes or at the last iteration, else ask the improver for a new description from the
train results and the blinded history, and go round again. The best is chosen afterwards (result.py).

What makes it incremental lives below it: a description's trials are keyed by its text (evaluate.py) and a
proposal by its whole request (improve.py), so running the loop again — or coming back to a description tried
before — asks no agent and no model anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skillmake.run.project import Project
from skillmake.spec.model import Spec, TriggerTests
from skillmake.triggers.evaluate import Evaluation, QueryResult, evaluate
from skillmake.triggers.improve import Improver, Proposal, key_inputs, propose
from skillmake.triggers.split import Split


@dataclass(frozen=True, slots=True, kw_only=True)
class Iteration:
    """One round: the description tried, its results on train and test, and what they and the proposal made from
    them cost. `proposal` is None when no new description was asked for (the loop ended here)."""

    number: int
    evaluation: Evaluation
    train: tuple[QueryResult, ...]
    test: tuple[QueryResult, ...]
    proposal: Proposal | None = None

    @property
    def description(self) -> str:
        return self.evaluation.description

    @property
    def train_passed(self) -> int:
        return sum(1 for r in self.train if r.passed)

    @property
    def test_passed(self) -> int:
        return sum(1 for r in self.test if r.passed)

    def blinded(self) -> dict[str, Any]:
        """What the improver may see of this round: the description and its train results, never a test score."""
        return {"description": self.description, "train_passed": self.train_passed, "train_total": len(self.train),
                "results": [r.to_json() for r in self.train]}


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    iterations: tuple[Iteration, ...]
    exit_reason: str
    error: str | None = None  # why the loop stopped early (the improver gave no description)


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """The skill as the improver is shown it: the name the agent is offered and the whole SKILL.md."""

    name: str
    content: str


Say = Callable[[Iteration], None]
Progress = Callable[[int, int, int], None]  # (iteration, trials finished, trials in all)


def _round_progress(progress: Progress | None, number: int) -> Callable[[int, int], None] | None:
    if progress is None:
        return None
    return lambda done, total: progress(number, done, total)


def run(project: Project, spec: Spec, tests: TriggerTests, split: Split, *, start: str, skill: Skill,
        improver: Improver, max_iterations: int, jobs: int, run_id: str | None, say: Say,
        progress: Progress | None = None, gate: Any = None) -> Outcome:
    """Up to `max_iterations` rounds from the description `start`; `say` hears of each round once it is complete
    (its proposal included). `gate`: a budget.Gate; once the spending cap stops a trial, the loop asks the improver
    nothing more and ends after that round."""
    history: list[Iteration] = []
    current = start
    for number in range(1, max_iterations + 1):
        evaluation = evaluate(project, spec, tests, current, split.queries, jobs=jobs,
                              progress=_round_progress(progress, number), gate=gate)
        round_ = Iteration(number=number, evaluation=evaluation, train=tuple(evaluation.of(split.train)),
                           test=tuple(evaluation.of(split.test)))
        if round_.train_passed == len(round_.train):
            history.append(round_)
            say(round_)
            return Outcome(iterations=tuple(history), exit_reason=f"all_passed (iteration {number})")
        if number == max_iterations:
            history.append(round_)
            say(round_)
            return Outcome(iterations=tuple(history), exit_reason=f"max_iterations ({max_iterations})")
        if gate is not None and gate.stopped:
            history.append(round_)
            say(round_)
            return Outcome(iterations=tuple(history), exit_reason=f"spending_cap (iteration {number})")
        blinded = [*(h.blinded() for h in history), round_.blinded()]
        inputs = key_inputs(name=skill.name, content=skill.content, description=current,
                            train=[r.to_json() for r in round_.train], history=blinded, improver=improver)
        proposal = propose(project.store, inputs, improver, run_id=run_id)
        round_ = Iteration(number=number, evaluation=evaluation, train=round_.train, test=round_.test,
                           proposal=proposal)
        history.append(round_)
        say(round_)
        if proposal.description is None:
            return Outcome(iterations=tuple(history), exit_reason=f"improver_error (iteration {number})",
                           error=proposal.error)
        current = proposal.description
    raise AssertionError("unreachable: the last iteration returns")  # max_iterations >= 1 (checked by the command)
