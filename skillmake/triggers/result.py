"""The optimiser's result file, `.skillmake/reports/<spec>/description-optimization.json`: skill-creator's run_loop
output (exit_reason, original/best/final description, best scores, iterations_run, holdout, train/test sizes,
history[] with the per-query results) and its documented `iterations[]` (iteration, description, train_score,
test_score), with every score a float (passed/total) beside its counts, and what each iteration cost."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic
from skillmake.spec.schema import validate_record
from skillmake.triggers.evaluate import QueryResult
from skillmake.triggers.loop import Iteration, Outcome

SCHEMA = "description-optimization.schema.json"
SCHEMA_ID = "skillmake/description-optimization@1"
FILE = "description-optimization.json"


def path_of(reports_dir: Path, spec: str) -> Path:
    return reports_dir / spec / FILE


def score(passed: int, total: int) -> float | None:
    return round(passed / total, 6) if total else None


def best_of(iterations: Sequence[Iteration]) -> tuple[Iteration, str]:
    """The best iteration and what it was chosen by: the test score when there is a test set, else the train score;
    the earliest of equals (skill-creator's max over its history)."""
    by = "test" if iterations[0].test else "train"
    best = max(iterations, key=lambda i: i.test_passed if by == "test" else i.train_passed)
    return best, by


def _results(results: Sequence[QueryResult]) -> list[dict[str, Any]]:
    return [r.to_json() for r in results]


def _scores(it: Iteration) -> dict[str, Any]:
    test = bool(it.test)
    return {"train_score": score(it.train_passed, len(it.train)), "train_passed": it.train_passed,
            "train_total": len(it.train), "test_score": score(it.test_passed, len(it.test)) if test else None,
            "test_passed": it.test_passed if test else None, "test_total": len(it.test) if test else None}


def _calls(it: Iteration) -> dict[str, Any]:
    p = it.proposal
    return {"agent": {"made": it.evaluation.made, "reused": it.evaluation.reused},
            "improver": {"made": p.made if p else 0, "reused": p.calls if p and p.reused else 0,
                         "requests": p.requests if p else 0}}


def _history_entry(it: Iteration) -> dict[str, Any]:
    """run_loop's history entry (its report generator reads `passed`, `failed`, `total` and `results` too)."""
    test = bool(it.test)
    train_failed = len(it.train) - it.train_passed
    return {"iteration": it.number, "description": it.description,
            "train_passed": it.train_passed, "train_failed": train_failed, "train_total": len(it.train),
            "train_results": _results(it.train),
            "test_passed": it.test_passed if test else None,
            "test_failed": len(it.test) - it.test_passed if test else None,
            "test_total": len(it.test) if test else None, "test_results": _results(it.test) if test else None,
            "passed": it.train_passed, "failed": train_failed, "total": len(it.train),
            "results": _results(it.train)}


def _iteration(it: Iteration) -> dict[str, Any]:
    p = it.proposal
    proposal = None if p is None else {"description": p.description, "key": p.key, "reused": p.reused,
                                       "rewritten": p.rewritten, "truncated": p.truncated, "error": p.error}
    return {"iteration": it.number, "description": it.description, **_scores(it),
            "errors": it.evaluation.errors, "first_error": it.evaluation.first_error, "calls": _calls(it),
            "proposal": proposal}


def build(outcome: Outcome, *, head: dict[str, Any], original: str, holdout: float, seed: int,
          train: Sequence[str], test: Sequence[str]) -> dict[str, Any]:
    """The result document. `head`: spec, skill, skill_md, generated, run_id, agent, improver, runs, threshold."""
    its = outcome.iterations
    best, by = best_of(its)
    scores = _scores(best)
    chosen = "test" if by == "test" else "train"
    totals = {"agent": {"made": sum(i.evaluation.made for i in its), "reused": sum(i.evaluation.reused for i in its)},
              "improver": {key: sum(_calls(i)["improver"][key] for i in its) for key in ("made", "reused", "requests")}}
    data = {"schema": SCHEMA_ID, **head,
            "exit_reason": outcome.exit_reason, "error": outcome.error,
            "original_description": original,
            "best_description": best.description, "best_iteration": best.number, "best_by": by,
            "best_score": scores[f"{chosen}_score"], "best_passed": scores[f"{chosen}_passed"],
            "best_total": scores[f"{chosen}_total"],
            **{f"best_{k}": v for k, v in scores.items()},
            # run_loop's current description when it stopped: the last one evaluated (it asks for a proposal only
            # when it goes on).
            "final_description": its[-1].description,
            "iterations_run": len(its), "holdout": holdout, "seed": seed,
            "train_size": len(train), "test_size": len(test), "split": {"train": list(train), "test": list(test)},
            "calls": totals, "applied": False,
            "iterations": [_iteration(i) for i in its], "history": [_history_entry(i) for i in its]}
    return data


def write(path: Path, data: dict[str, Any]) -> None:
    """Check the document against its schema, then write it atomically."""
    validate_record(SCHEMA, data, what=f"the description optimisation result {path.name}")
    atomic.write_bytes(path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
