"""The optimiser's result: the best iteration by test score (train without a test set, the earliest of equals, as
skill-creator's max over its history), scores as floats beside their counts, calls per iteration and in all, and
a document that validates against its schema."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from skillmake.core.errors import RecordError
from skillmake.run.agents.base import Usage
from skillmake.spec.model import TriggerQuery
from skillmake.triggers import result
from skillmake.triggers.evaluate import Evaluation, QueryResult, passes
from skillmake.triggers.improve import Proposal
from skillmake.triggers.loop import Iteration, Outcome

P = [TriggerQuery(id=f"p{i}", query=f"yes {i}", should_trigger=True, index=i) for i in range(3)]
N = [TriggerQuery(id=f"n{i}", query=f"no {i}", should_trigger=False, index=3 + i) for i in range(3)]
TRAIN, TEST = [P[0], P[1], N[0], N[1]], [P[2], N[2]]
KEY = "sha256:" + "0" * 64


def it(number: int, description: str, train_ok: int, test_ok: int, *, made: int = 6, reused: int = 0,
       proposal: Proposal | None = None, test: bool = True) -> Iteration:
    """An iteration whose first `train_ok` train queries and first `test_ok` test queries pass."""
    def results(queries: list[TriggerQuery], ok: int) -> tuple[QueryResult, ...]:
        return tuple(QueryResult(query=q, triggers=int(q.should_trigger == (i < ok)), runs=1, errors=0,
                                 passed=i < ok) for i, q in enumerate(queries))
    train, tested = results(TRAIN, train_ok), results(TEST, test_ok) if test else ()
    evaluation = Evaluation(description=description, results=train + tested, made=made, reused=reused)
    return Iteration(number=number, evaluation=evaluation, train=train, test=tested, proposal=proposal)


def test_passes_follows_the_reports_rule() -> None:
    assert passes(P[0], 1, 2, 0.5) and not passes(P[0], 0, 2, 0.5)
    assert passes(N[0], 0, 2, 0.5) and not passes(N[0], 1, 2, 0.5)
    assert not passes(N[0], 0, 0, 0.5)  # no completed run: no verdict, not a pass


def test_best_by_test_then_earliest_of_equals() -> None:
    its = [it(1, "a", 2, 1), it(2, "b", 4, 0), it(3, "c", 3, 2), it(4, "d", 4, 2)]
    best, by = result.best_of(its)
    assert (best.number, by) == (3, "test")
    best, by = result.best_of([it(1, "a", 2, 0, test=False), it(2, "b", 3, 0, test=False),
                               it(3, "c", 3, 0, test=False)])
    assert (best.number, by) == (2, "train")


def test_the_document_validates_and_counts_calls(tmp_path: Path) -> None:
    proposal = Proposal(key=KEY, description="b", calls=1, usage=Usage(requests=2))
    replayed = Proposal(key=KEY, description="c", reused=True, calls=2, rewritten=True)
    outcome = Outcome(iterations=(it(1, "a", 2, 1, proposal=proposal), it(2, "b", 3, 2, proposal=replayed),
                                  it(3, "c", 4, 1, made=0, reused=6)), exit_reason="all_passed (iteration 3)")
    head = {"spec": "kids", "skill": "kids", "skill_md": "skills/kids/SKILL.md", "generated": "2025-01-01T00:00:00Z",
            "run_id": None, "agent": {"kind": "claude-code", "model": None},
            "improver": {"provider": "anthropic", "model": "claude-test"}, "runs": 1, "threshold": 0.5}
    data = result.build(outcome, head=head, original="a", holdout=0.4, seed=42, train=[q.id for q in TRAIN],
                        test=[q.id for q in TEST])
    assert (data["best_iteration"], data["best_description"], data["best_score"], data["best_passed"],
            data["best_total"]) == (2, "b", 1.0, 2, 2)
    assert (data["best_train_score"], data["best_train_passed"], data["best_train_total"]) == (0.75, 3, 4)
    assert (data["final_description"], data["iterations_run"]) == ("c", 3)
    assert [i["calls"]["improver"] for i in data["iterations"]] == [
        {"made": 1, "reused": 0, "requests": 2}, {"made": 0, "reused": 2, "requests": 0},
        {"made": 0, "reused": 0, "requests": 0}]
    assert data["calls"] == {"agent": {"made": 12, "reused": 6}, "improver": {"made": 1, "reused": 2, "requests": 2}}
    assert data["iterations"][0]["train_score"] == 0.5 and data["iterations"][0]["test_score"] == 0.5
    assert data["history"][1]["results"] == data["history"][1]["train_results"]
    path = tmp_path / "r" / "description-optimization.json"
    result.write(path, data)
    assert orjson.loads(path.read_bytes()) == data
    data["best_score"] = "2/2"
    with pytest.raises(RecordError, match="best_score"):
        result.write(path, data)
