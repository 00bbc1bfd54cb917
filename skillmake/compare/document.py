"""The comparison's result file, reports/<spec>/comparisons/<a>-vs-<b>.json: built from the judging, in
skill-creator's comparator words where it has them (winner "A"/"B"/"TIE", reasoning, rubric, output_quality),
checked against schemas/comparison.schema.json when written and when read."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from skillmake.compare.combine import TIE
from skillmake.compare.comparator import NAME, PROMPT_VERSION
from skillmake.compare.outputs import Cells
from skillmake.compare.pairs import CaseResult, Judging, Order, Pair, tally
from skillmake.compare.sides import Side
from skillmake.compare.winrate import WinRate, win_rate
from skillmake.results.files import write_json
from skillmake.run.judges.resolve import choose
from skillmake.spec.model import Spec

RESULT_SCHEMA = "comparison.schema.json"
RESULT_ID = "skillmake/comparison@1"
FOLDER = "comparisons"
RULE = ("each pair (trial k of A against trial k of B) is judged twice, A shown first and B shown first; the same "
        "winner both times wins the pair, a contradiction or a tie is a tie; a case goes to the side that won more "
        "than half of its judged pairs, else it is a tie; identical outputs are a tie without asking the judge")
_POSITION = re.compile(r"\b(output)(\s*[_#-]?\s*)([12])\b", re.IGNORECASE)


def path_of(reports_dir: Path, spec: Spec, a: Side, b: Side) -> Path:
    return reports_dir / spec.name / FOLDER / f"{a.label}-vs-{b.label}.json"


def build(spec: Spec, a: Side, b: Side, judging: Judging, cells: Cells, *, generated: str,
          run_id: str | None) -> dict[str, Any]:
    pairs = [p for c in judging.cases for p in c.pairs]
    counts = tally(pairs)
    rate = win_rate(counts["a_wins"], counts["b_wins"], counts["ties"])
    winners = [c.winner for c in judging.cases]
    choice = choose(spec, judging.cases[0].case if judging.cases else None)
    return {
        "schema": RESULT_ID, "spec": spec.name, "generated": generated, "run_id": run_id,
        "a": a.to_json(), "b": b.to_json(),
        "judge": {"provider": choice.provider, "model": choice.model, "prompt": f"{NAME}@{PROMPT_VERSION}"},
        "rule": RULE,
        "summary": {**counts, "pairs": rate.pairs, "win_rate": rate.rate,
                    "ci95": None if rate.low is None else [rate.low, rate.high], "winner": overall(rate),
                    "cases": {"A": winners.count("A"), "B": winners.count("B"), "TIE": winners.count(TIE),
                              "unjudged": winners.count(None)}},
        "calls": {"agent": {"ran": cells.ran, "reused": cells.reused},
                  "judge": {"made": judging.made, "reused": judging.reused,
                            "requests": judging.usage.requests or 0, "cost_usd": judging.usage.cost_usd}},
        "cases": [_case(c) for c in judging.cases],
    }


def overall(rate: WinRate) -> str | None:
    """A when the whole 95% interval is above 0.5, B when it is below, TIE when it holds 0.5."""
    if rate.low is None or rate.high is None:
        return None
    return "A" if rate.low > 0.5 else "B" if rate.high < 0.5 else TIE


def write(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, document, schema=RESULT_SCHEMA, what=f"comparison {path}")


def _case(result: CaseResult) -> dict[str, Any]:
    return {"id": result.case.id, "winner": result.winner, **tally(result.pairs), "reasoning": first_reason(result),
            "pairs": [_pair(p) for p in result.pairs]}


def first_reason(result: CaseResult) -> str | None:
    """The first reason given for the case's verdict: an order that chose the case's winner; for a tie whose
    orders disagreed, the first order's reason, said to be contradicted; why nothing was judged when nothing was."""
    judged = [(o.verdict.reasoning, o.shown, o.winner) for p in result.pairs for o in p.orders if o.verdict]
    chosen = next((j for j in judged if j[2] == result.winner), None)
    if chosen is not None:
        return as_sides(chosen[0], chosen[1])
    if judged:
        return f"the two orders disagree; first: {as_sides(judged[0][0], judged[0][1])}"
    if any(p.identical for p in result.pairs):
        return "the two outputs are identical"
    return next((p.problem for p in result.pairs if p.problem), None)


def as_sides(text: str, shown: tuple[str, str]) -> str:
    """The judge's 'Output 1' / 'Output 2' as the sides they were: 'Output A' / 'Output B'."""
    return _POSITION.sub(lambda m: f"{m.group(1)} {shown[int(m.group(3)) - 1]}", text)


def _pair(pair: Pair) -> dict[str, Any]:
    return {"k": pair.k, "winner": pair.winner, "identical": pair.identical, "trial_keys": pair.trial_keys,
            "orders": [_order(o) for o in pair.orders], "error": pair.error}


def _order(order: Order) -> dict[str, Any]:
    data: dict[str, Any] = {"shown": list(order.shown), "key": order.key, "reused": order.reused,
                            "winner": order.winner, "reasoning": None, "error": order.error}
    verdict = order.verdict
    if verdict is not None:
        data["reasoning"] = as_sides(verdict.reasoning, order.shown)
        for name, block in (("rubric", verdict.rubric), ("output_quality", verdict.output_quality)):
            if block is not None:
                data[name] = {order.shown[int(position) - 1]: value for position, value in block.items()}
    return data
