"""`skillmake explain`: for each stale trial and grade, which input changed — before running anything."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from skillmake.core.console import plural
from skillmake.core.errors import UsageError
from skillmake.engine.plan import Item, SpecPlan, TriggerItem
from skillmake.engine.select import Chosen, Targets
from skillmake.run import grade as grading
from skillmake.run.budget import Estimate, Estimator
from skillmake.run.keys import Part, grade_part
from skillmake.run.project import Project
from skillmake.run.trial import fits, timeout_of
from skillmake.run.workspace import trial_dir

_RUN_FIELDS = {"prompt": "prompt", "args": "args", "setup": "setup", "cleanup": "cleanup", "output_file": "output_file",
               "output_files": "output_files", "system_prompt": "system prompt",
               "forbidden_files": "sandbox.forbidden_files", "extra_path": "sandbox.extra_path",
               "checks_before_cleanup": "python checks (run before cleanup)"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Stale:
    task: str
    reasons: tuple[str, ...]
    estimate: Estimate | None = None  # a trial's cost and its basis (budget.Estimator); None: a grade


def explain(project: Project, plans: tuple[SpecPlan, ...], *, chosen: Chosen | None = None,
            targets: Targets | None = None, resample: bool = False) -> tuple[list[Stale], dict[str, Any]]:
    """The stale trials, grades and trigger trials of `plans` that a run with this selection (`chosen`) and
    these named tasks (`targets`) would make, and the totals of what would run. The run asks the same
    Chosen.wants and Targets.wants, so the two cannot disagree."""
    chosen = chosen or Chosen(names=None, resample=resample)
    targets = targets or Targets()
    stale: list[Stale] = []
    estimator = Estimator(project)
    totals = {"trials": 0, "grades": 0, "trials_reused": 0, "grades_reused": 0, "cost_usd": 0.0,
              "cost_known": True, "judge_calls": 0, "triggers": 0, "triggers_reused": 0}
    for plan in plans:
        for item in plan.items:
            if not chosen.wants(item):
                continue
            previous = kept(project, item, "trial.json")
            if not targets.wants("trial", item):
                pass
            elif item.trial_cached and not resample:
                totals["trials_reused"] += 1
            else:
                totals["trials"] += 1
                # Only the trials after a look are conditional: the first `min` of a cell run whatever happens.
                adaptive = item.spec.adaptive
                totals["adaptive"] = totals.get("adaptive", 0) + (adaptive is not None and item.k >= adaptive.least)
                reasons = (["resampled (--resample)"] if item.trial_cached
                           else trial_reasons(project, item, previous))
                estimate = estimator.trial(item)
                stale.append(Stale(task=f"trial:{item.name}", reasons=tuple(reasons), estimate=estimate))
                if estimate.usd is not None:
                    totals["cost_usd"] += estimate.usd
                else:
                    totals["cost_known"] = False
            if not targets.wants("grade", item):
                continue
            if item.trial_cached and item.grade_cached and not resample:
                totals["grades_reused"] += 1
            else:
                totals["grades"] += 1
                totals["judge_calls"] += judge_calls(item)
                if _batched(project, item):  # --batch / judge.batch: sent in the run's batch (run/batch.py)
                    totals["batched"] = totals.get("batched", 0) + judge_calls(item)
                # The judges' cost where stored grades of the cell show it (an unknown one is not guessed).
                totals["cost_usd"] += estimator.grade(item, judge_calls=judge_calls(item)).usd or 0.0
                reasons = (["its trial will run"] if not item.trial_cached or resample
                           else grade_reasons(project, item, kept(project, item, "grade.json")))
                stale.append(Stale(task=f"grade:{item.name}", reasons=tuple(reasons)))
        for trigger in plan.triggers:
            if not (chosen.wants(trigger) and targets.wants("trigger", trigger)):
                continue
            if trigger.cached and not resample:
                totals["triggers_reused"] += 1
                continue
            totals["triggers"] += 1
            reasons = ["resampled (--resample)"] if trigger.cached else trigger_reasons(project, trigger)
            stale.append(Stale(task=f"trigger:{trigger.name}", reasons=tuple(reasons)))
            cost = (kept_trigger(project, trigger) or {}).get("usage", {}).get("cost_usd")
            if cost is not None:
                totals["cost_usd"] += cost
            else:
                totals["cost_known"] = False
    return stale, totals


def matcher(plans: Sequence[SpecPlan], patterns: Sequence[str]) -> Callable[[Item | TriggerItem], bool] | None:
    """Which items `skillmake explain PATTERN…` asks about, or None for all of them.

    A pattern is a spec name, a task name (`trial:S/C/A/K`, `grade:…`, `report:S`, `validate:FILE`) or a cell
    `S/C/A/K`; `*`, `?` and `[…]` glob as in the shell, and a shorter cell (`S/C`) means everything under it.
    A pattern that names nothing is a usage error that says what the names look like."""
    if not patterns:
        return None
    items: list[Item | TriggerItem] = [*(i for p in plans for i in p.items), *(t for p in plans for t in p.triggers)]
    tests: list[Callable[[Item | TriggerItem], bool]] = []
    for pattern in patterns:
        test = _pattern(pattern)
        if not any(test(i) for i in items):
            example = f" (e.g. {items[0].spec.name} or trial:{items[0].name})" if items else ""
            raise UsageError(f"no spec, task or cell matches {pattern!r}",
                             hint=f"name a spec, a task or a cell spec/case/arm/k, with * for any part{example}; "
                                  "`skillmake list --all` lists the tasks")
        tests.append(test)
    return lambda item: any(t(item) for t in tests)


def _pattern(pattern: str) -> Callable[[Item | TriggerItem], bool]:
    kind, sep, rest = pattern.partition(":")
    if sep and kind in ("report", "validate"):
        return lambda item: fnmatch.fnmatchcase(item.spec.name, rest) or (
            kind == "validate" and fnmatch.fnmatchcase(item.spec.relpath, rest))
    typed = sep and kind in ("trial", "grade", "trigger")
    cell = rest if typed else pattern

    def right_kind(item: Item | TriggerItem) -> bool:
        return not typed or isinstance(item, TriggerItem) == (kind == "trigger")

    if "/" not in cell:
        return lambda item: right_kind(item) and fnmatch.fnmatchcase(item.spec.name, cell)
    return lambda item: right_kind(item) and (fnmatch.fnmatchcase(item.name, cell)
                                              or fnmatch.fnmatchcase(item.name, cell + "/*"))


def to_json(stale: list[Stale], totals: dict[str, Any], *, overrides: Sequence[str] = (),
            blocked: Sequence[str] = (), invalid: Sequence[str] = ()) -> dict[str, Any]:
    """`skillmake explain --format json` (documented in the README; `version` changes only with its shape)."""
    return {"version": 1,
            "stale": [{"task": s.task, "kind": s.task.split(":", 1)[0], "cell": s.task.split(":", 1)[1],
                       "reasons": list(s.reasons),
                       **({"estimate_usd": s.estimate.usd, "estimate_basis": s.estimate.basis} if s.estimate else {})}
                      for s in stale],
            "would_run": {"trials": totals["trials"], "grades": totals["grades"],
                          "judge_calls": totals["judge_calls"],
                          "trigger_trials": totals["triggers"],
                          "cost_usd": round(totals["cost_usd"], 6) if totals["cost_known"] else None},
            "reused": {"trials": totals["trials_reused"], "grades": totals["grades_reused"],
                       "trigger_trials": totals["triggers_reused"]},
            "overrides": list(overrides), "blocked": list(blocked), "invalid": list(invalid)}


def judge_calls(item: Item) -> int:
    """Model calls a grade of the case makes at least: one per kind of judge it uses (retries aside)."""
    case = item.case
    return sum(1 for used in (case.rubric, case.criteria, case.expectations, case.sections) if used)


def trial_reasons(project: Project, item: Item, previous: dict[str, Any] | None) -> list[str]:
    if item.damaged:  # the plan found its record naming a lost or corrupt object
        return [item.damaged]
    if previous is None:
        return ["new"]
    if previous["key"] == item.tkey.key:
        if previous["outcome"] in ("error", "timeout"):
            return [f"last run ended in {previous['outcome']}: {previous.get('error') or '?'} (retrying)"]
        timeout = timeout_of(item.spec, item.case)
        if not fits(previous, timeout):
            took = previous["timing"].get("agent_ms", previous["timing"]["duration_ms"]) / 1000
            return [f"its stored run took {took:.1f}s, longer than this cell's timeout of {timeout:g}s"]
        return ["its record is missing from the store (cleared, or quarantined as corrupt)"]
    old, new = previous["inputs"], item.tkey.inputs()
    reasons: list[str] = []
    if old.get("key_version") != new["key_version"]:
        reasons.append(f"key_version {old.get('key_version')} → {new['key_version']}")
    tkey = item.tkey
    if old.get("skill") != new["skill"]:
        reasons.extend(skill_diff(_load(project, old.get("skill")), _parse(tkey.skill)))
    if old.get("run") != new["run"]:
        reasons.extend(run_diff(_load(project, old.get("run")), _parse(tkey.run)))
    if old.get("agent") != new["agent"]:
        reasons.extend(fields_diff(_load(project, old.get("agent")), _parse(tkey.agent), "agent setting"))
    return reasons or ["inputs changed"]


def grade_reasons(project: Project, item: Item, previous: dict[str, Any] | None) -> list[str]:
    assert item.outputs is not None
    gpart, jpart = grade_part(item.spec, item.case), grading.judge_part(item.spec, item.case)
    inputs = {"outputs": item.outputs, "grade": gpart.digest, "judge": jpart.digest}
    if previous is None:
        return ["new grade"]
    if previous.get("outcome") in ("error", "timeout", "judge_error") and previous.get("key") == item.grade_key:
        return [f"last grade ended in {previous['outcome']} (retrying)"]
    old = previous.get("inputs", {})
    reasons = []
    if old.get("outputs") != inputs["outputs"]:
        reasons.append("the trial's outputs changed")
    if old.get("grade") != inputs["grade"]:
        reasons.extend(fields_diff(_load(project, old.get("grade")), _parse(gpart), "grading field"))
    if old.get("judge") != inputs["judge"]:
        reasons.extend(fields_diff(_load(project, old.get("judge")), _parse(jpart), "judge setting"))
    return reasons or ["its record is missing from the store"]


def kept(project: Project, item: Item, name: str) -> dict[str, Any] | None:
    return trial_dir(project.runs_dir, item.spec, item.case, item.arm.name, item.k).read(name)


def kept_trigger(project: Project, item: TriggerItem) -> dict[str, Any] | None:
    from skillmake.triggers.views import trigger_dir

    return trigger_dir(project, item.spec.name, item.query.id, item.k).read("trial.json")


def trigger_reasons(project: Project, item: TriggerItem) -> list[str]:
    """Why a trigger trial runs: what changed in what the agent is offered (the description, a distractor), the
    query or the agent, against the record its view shows."""
    if item.damaged:
        return [item.damaged]
    previous = kept_trigger(project, item)
    if previous is None:
        return ["new"]
    if previous["key"] == item.tkey.key:
        if previous["outcome"] in ("error", "timeout"):
            return [f"last run ended in {previous['outcome']}: {previous.get('error') or '?'} (retrying)"]
        return ["its stored run is missing, or took longer than the trigger timeout"]
    old, new = previous["inputs"], item.tkey.inputs()
    reasons: list[str] = []
    if old.get("skill") != new["skill"]:
        reasons.extend(_offered_diff(_load(project, old.get("skill")), _parse(item.tkey.skill)))
    if old.get("run") != new["run"]:
        reasons.append("the query changed")
    if old.get("agent") != new["agent"]:
        reasons.extend(fields_diff(_load(project, old.get("agent")), _parse(item.tkey.agent), "agent setting"))
    return reasons or ["inputs changed"]


def _offered_diff(before: Any, after: Any) -> list[str]:
    if not isinstance(before, dict) or not isinstance(after, dict):
        return ["what the agent is offered changed"]
    out = []
    a, b = before.get("skill") or {}, after.get("skill") or {}
    for key in ("name", "description", "settings"):
        if a.get(key) != b.get(key):
            out.append(f"the skill's {key} changed" + (f" ({_short(a.get(key))} → {_short(b.get(key))})"
                                                       if key == "name" else ""))
    old = {d["name"]: d["description"] for d in before.get("distractors") or ()}
    new = {d["name"]: d["description"] for d in after.get("distractors") or ()}
    out += [f"distractor {n} changed" for n in sorted(set(old) & set(new)) if old[n] != new[n]]
    out += [f"distractor {n} added" for n in sorted(set(new) - set(old))]
    out += [f"distractor {n} removed" for n in sorted(set(old) - set(new))]
    if before.get("stub") != after.get("stub"):
        out.append("skillmake's stand-in skill changed (stub version)")
    return out or ["what the agent is offered changed"]


def _load(project: Project, digest: str | None) -> Any:
    return project.store.get_json(digest) if digest else None


def _parse(part: Part | None) -> Any:
    return orjson.loads(part.data) if part is not None else None


def skill_diff(before: Any, after: Any) -> list[str]:
    if before is None and after is not None:
        return ["the skill is now installed"]
    if after is None:
        return ["the skill is no longer installed"]
    if not isinstance(before, dict) or not isinstance(after, dict):
        return ["the skill changed"]
    a, b = before.get("files", {}), after.get("files", {})
    out = [f"skill file {f} changed" for f in sorted(set(a) & set(b)) if a[f] != b[f]]
    out += [f"skill file {f} added" for f in sorted(set(b) - set(a))]
    out += [f"skill file {f} removed" for f in sorted(set(a) - set(b))]
    return out or ["the skill changed"]


def run_diff(before: Any, after: Any) -> list[str]:
    if not isinstance(before, dict) or not isinstance(after, dict):
        return ["the case changed"]
    out = []
    a_in, b_in = before.get("input_files", {}), after.get("input_files", {})
    out += [f"fixture {f} changed" for f in sorted(set(a_in) & set(b_in)) if a_in[f] != b_in[f]]
    out += [f"fixture {f} added" for f in sorted(set(b_in) - set(a_in))]
    out += [f"fixture {f} removed" for f in sorted(set(a_in) - set(b_in))]
    for key, label in _RUN_FIELDS.items():
        if before.get(key) != after.get(key):
            out.append(f"case field {label} changed")
    return out or ["the case changed"]


def fields_diff(before: Any, after: Any, label: str) -> list[str]:
    if not isinstance(before, dict) or not isinstance(after, dict):
        return [f"{label}s changed"]
    out = []
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            a, b = before.get(key), after.get(key)
            shown = f" ({_short(a)} → {_short(b)})" if _scalar(a) and _scalar(b) else ""
            out.append(f"{label} {key} changed{shown}")
    return out or [f"{label}s changed"]


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 30 else text[:27] + "…"


def _priced(stale: Stale) -> bool:
    """Whether a stale task's line shows its estimate: a trial of a model agent (a command agent costs nothing)."""
    return stale.estimate is not None and stale.estimate.usd != 0.0


def _batched(project: Project, item: Item) -> bool:
    from skillmake.run import batch

    return batch.batched(item.spec, item.case, project.config.judge if project.config else None)


def render(stale: list[Stale], totals: dict[str, Any]) -> str:
    lines = [f"{s.task}  {'; '.join(s.reasons)}" + (f"  [{s.estimate.shown()}]" if s.estimate and _priced(s) else "")
             for s in stale]
    # The estimate covers the trials and the grades they need, so it closes the line rather than sitting
    # beside the trial count.
    cost = f"; est. ${totals['cost_usd']:.4f}" if totals["cost_usd"] else ""
    if not totals["cost_known"]:
        cost += (";" if not cost else "") + " (cost of some trials unknown: no earlier run)"
    judges = f" ({totals['judge_calls']} judge calls)" if totals["judge_calls"] else ""
    if totals.get("batched"):
        judges = f" ({totals['judge_calls']} judge calls, {totals['batched']} of them sent as a batch at half price)"
    triggers = reused_triggers = ""
    if totals["triggers"] or totals["triggers_reused"]:
        triggers = f" and {plural(totals['triggers'], 'trigger trial')}"
        reused_triggers = f" and {plural(totals['triggers_reused'], 'trigger trial')}"
    # Adaptive trials (trials: {min, max, decide}): a case stops at its first decision, so these are at most.
    most = "up to " if totals.get("adaptive") else ""
    lines.append(f"would run {most}{plural(totals['trials'], 'trial')} ({most}{plural(totals['trials'], 'agent call')})"
                 f" and {most}{plural(totals['grades'], 'grade')}{judges}{triggers}; reuse "
                 f"{plural(totals['trials_reused'], 'trial')} and {plural(totals['grades_reused'], 'grade')}"
                 f"{reused_triggers}{cost}")
    if most:
        lines.append(f"  adaptive: {totals['adaptive']} of those trials run only while their case is undecided")
    return "\n".join(lines)
