"""The trigger section of report.json: per query its trigger rate and pass, over all runs precision, recall, F1 and
accuracy, the false positives, and the gates (min_trigger_* thresholds, else every query must pass)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from skillmake.core.stats import wilson_interval
from skillmake.results.records import Record, sum_usage
from skillmake.results.thresholds import Verdict, gate
from skillmake.spec.derived import trigger_skip_reason as skip_reason  # re-exported (results.triggers.skip_reason)
from skillmake.spec.model import Spec, TriggerQuery

Run = tuple[TriggerQuery, int, Record | None]  # a query, its run index k, and that run's record (None: not run yet)
_GATES = {"min_trigger_precision": ("precision", "trigger precision"),
          "min_trigger_recall": ("recall", "trigger recall"), "min_trigger_f1": ("f1", "trigger F1"),
          "min_trigger_pass_rate": ("pass_rate", "share of trigger queries passing")}
_LISTED = 5


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _ci(hits: int, n: int) -> dict[str, float] | None:
    """The 95% Wilson interval of hits/n; None with n = 0 (a convention's 1.0 over nothing has no interval)."""
    interval = wilson_interval(hits / n, n) if n else None
    return None if interval is None else interval.to_dict()


def fired(record: Record, skill: str) -> bool:
    return skill in ((record.get("activation") or {}).get("skills") or ())


def trigger_section(spec: Spec, runs: Sequence[Run], *, skill: str) -> dict[str, Any] | None:
    """The "triggers" object of the report (None when the spec has no trigger tests). `skill` is the name the
    agent is offered (the frontmatter's), which activation records name."""
    tests = spec.trigger_tests
    if tests is None:
        return None
    base: dict[str, Any] = {"agent": tests.agent.kind, "runs": tests.runs, "threshold": tests.threshold,
                            "skill": skill}
    skipped = skip_reason(spec)
    if skipped:
        return {**base, "skipped": skipped, "queries": [], "summary": None, "false_positives": [], "errors": [],
                "usage": sum_usage([])}
    by_query: dict[str, list[tuple[int, Record | None]]] = {}
    for query, k, record in runs:
        by_query.setdefault(query.id, []).append((k, record))
    queries, errors = [], []
    tp = fp = tn = fn = 0
    for query in tests.queries:
        trials = []
        done = hits = 0
        for k, record in sorted(by_query.get(query.id, ()), key=lambda r: r[0]):
            outcome = record["outcome"] if record else None
            hit = outcome == "completed" and fired(record or {}, skill)
            if outcome == "completed":
                done += 1
                hits += hit
            elif record is not None:
                errors.append({"query": query.id, "k": k, "outcome": outcome, "error": record.get("error")})
            trials.append({"k": k, "triggered": hit if outcome == "completed" else None, "outcome": outcome,
                           "record": record["key"] if record else None, "run_id": (record or {}).get("run_id")})
        rate = hits / done if done else None
        passed = rate is not None and (rate >= tests.threshold if query.should_trigger else rate < tests.threshold)
        if query.should_trigger:
            tp, fn = tp + hits, fn + done - hits
        else:
            fp, tn = fp + hits, tn + done - hits
        queries.append({"id": query.id, "query": query.query, "should_trigger": query.should_trigger, "runs": done,
                        "expected": tests.runs, "triggers": hits, "errors": len(trials) - done,
                        "trigger_rate": _r(rate), "trigger_rate_ci": _ci(hits, done), "pass": passed, "trials": trials})
    # skill-creator's convention where nothing was predicted or expected: precision and recall are 1.0. But no
    # data is not a perfect score: with no run that produced a result (every one erred), or no result for any
    # query that should trigger, there is no precision or recall to give (None: "no result").
    total_runs = tp + fp + tn + fn
    should = any(q.should_trigger for q in tests.queries)
    precision = None if not total_runs else tp / (tp + fp) if tp + fp else 1.0
    recall = None if should and not tp + fn else tp / (tp + fn) if tp + fn else 1.0
    passed_n = sum(1 for q in queries if q["pass"])
    summary = {"total": len(queries), "passed": passed_n, "failed": len(queries) - passed_n,
               "tp": tp, "fp": fp, "tn": tn, "fn": fn, "precision": _r(precision), "recall": _r(recall),
               "precision_ci": _ci(tp, tp + fp), "recall_ci": _ci(tp, tp + fn),
               "f1": _r(None if precision is None or recall is None else
                        2 * precision * recall / (precision + recall) if precision + recall else 0.0),
               "accuracy": _r((tp + tn) / total_runs) if total_runs else None,
               "pass_rate": _r(passed_n / len(queries)) if queries else None}
    records = [r for _, _, r in runs if r is not None]
    return {**base, "skipped": None, "queries": queries, "summary": summary,
            "false_positives": [q["id"] for q in queries if not q["should_trigger"] and q["triggers"]],
            "errors": errors, "usage": sum_usage(list({str(r["key"]): r for r in records}.values()))}


def trigger_gates(spec: Spec, section: Mapping[str, Any] | None) -> list[Verdict]:
    """The declared min_trigger_* gates on the section's summary."""
    if not section or section.get("skipped") or not section.get("summary"):
        return []
    if section.get("not_selected") and not any(q["runs"] for q in section["queries"]):
        return []  # this run's selection left every trigger trial out: not judged
    out = []
    for metric, (field, label) in _GATES.items():
        threshold = getattr(spec.thresholds, metric)
        if threshold is not None:
            out.append(gate(spec.name, metric, "trigger", section["summary"][field], threshold, label))
    return out


def trigger_reasons(spec: Spec, section: Mapping[str, Any] | None) -> list[str]:
    """Why the triggers make the spec red: runs that could not finish, and — with no min_trigger_* gate declared —
    any query that did not pass (the default gate, as for cases)."""
    if not section or section.get("skipped"):
        return []
    out = []
    errors = section.get("errors") or ()
    if errors:
        first = errors[0]
        # Whole: the error's last words are its fix (the credentials hint); the spec's header shows it once.
        text = " ".join(str(first.get("error") or first["outcome"]).split())
        out.append(f"{spec.name}: {len(errors)} trigger trial(s) ended in error or timeout (retried next run); "
                   f"first, {first['query']} run {first['k']}: {text}")
    # Trials this run's selection left out are not run, not missing (pytest's -k).
    missing = sum(1 for q in section["queries"] for t in q["trials"] if t["outcome"] is None) - int(
        section.get("not_selected", 0))
    # clauditor's grade and triggers are two commands with two verdicts: a clauditor spec whose trigger trials have
    # not run is not red for it (`skillmake clauditor triggers` runs them and says so), so a grade's header and exit
    # code agree.
    if missing > 0 and spec.format != "clauditor":
        out.append(f"{spec.name}: {missing} trigger trial(s) have not run")
    if not spec.thresholds.trigger_declared:
        failed = [q for q in section["queries"] if not q["pass"] and q["runs"]]
        if failed:
            listed = ", ".join(f"{q['id']} ({q['triggers']}/{q['runs']}, "
                               f"{'should' if q['should_trigger'] else 'should not'} trigger)"
                               for q in failed[:_LISTED]) + (", …" if len(failed) > _LISTED else "")
            out.append(f"{spec.name}: no trigger thresholds set, so every query must pass: {len(failed)} of "
                       f"{len(section['queries'])} failed: {listed}")
    return out
