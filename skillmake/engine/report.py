"""The report task: gather a spec's trial and grade records, write the report files, gate on thresholds."""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic, console
from skillmake.core.console import write_line
from skillmake.core.paths import cut_links
from skillmake.engine import settled
from skillmake.engine.index import RACY_NS, refresh
from skillmake.engine.plan import Item, SpecPlan, report_inputs, settings_digest
from skillmake.engine.stale import Stale
from skillmake.results.checkout import Cell, CellRecords, cell_rel, checkout, early_records, records_of, views_current
from skillmake.run.project import Project, current_run_id

STAMP = ".inputs.json"
WRITTEN = ("report.json", "benchmark.json", "junit.xml", "report.html")  # stamped: an edit is regenerated


def report_uptodate(project: Project, plan: SpecPlan) -> bool | Stale:
    """Up to date when every grade is cached, the grade keys are those of the last report, and it passed — and
    nothing it wrote was touched since: its files and every cell's view are as it left them."""
    if plan.settled:  # its settled stamp (settled.py) says all of this held and nothing changed since
        return True
    digest = plan.inputs_digest()
    stamp = _stamp(project, plan) if digest is not None else None
    if not (stamp and stamp.get("inputs") == digest and stamp.get("passed")):
        return False
    if plan.intact is None:  # asked by the report and the thresholds task: checked once
        plan.intact = stamp.get("files") == _signature(project.reports_dir / plan.spec.name) and views_current(
            project, plan.spec.name, [(cell_rel(i.case.id, i.arm.name, i.k), i.tkey.key, i.grade_key)
                                      for i in plan.items])
    return plan.intact or Stale("a cell's view or a report file was removed or edited since the last report: "
                                "checking them out again")


def _signature(folder: Path) -> dict[str, list[int] | None]:
    out: dict[str, list[int] | None] = {}
    for name in WRITTEN:
        try:
            st = os.stat(folder / name)
            out[name] = [st.st_size, st.st_mtime_ns]
        except OSError:
            out[name] = None
    return out


def problems_of(project: Project, plan: SpecPlan) -> list[str]:
    """What made the spec's last report red (from its stamp); a missing stamp is a problem too. The reasons its
    summary already printed (this run's report task) are named by one line, not printed again: a long reason
    (a credentials hint) is shown once, whole."""
    stamp = _stamp(project, plan)
    if stamp is None:
        return [f"{plan.spec.name}: no report was written; run `skillmake` again"]
    problems = [str(p) for p in stamp.get("problems", [])]
    shown = stamp.get("shown") if stamp.get("run_id") == current_run_id() else 0
    if isinstance(shown, int) and 0 < shown <= len(problems):
        problems[:shown] = [f"{plan.spec.name}: FAILED — {shown} reason{'s' if shown != 1 else ''} in its summary "
                            "above"]
    return problems


def _stamp(project: Project, plan: SpecPlan) -> dict[str, Any] | None:
    """What the spec's last report task recorded: its inputs digest, whether it passed, its problems."""
    try:
        stamp = orjson.loads((project.reports_dir / plan.spec.name / STAMP).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return stamp if isinstance(stamp, dict) else None


def cells_of(project: Project, plan: SpecPlan, early: dict[str, tuple[CellRecords, Any]] | None = None
             ) -> list[CellRecords]:
    """The records every cell of the spec maps to now (one source for the views and the report). `early`: the
    records of cells this process checked out early (checkout.early_records), by cell_rel, taken as they are."""
    if not early:
        return [records_of(project, cell_of(i)) for i in plan.items]
    out = []
    for item in plan.items:
        got = early.get(cell_rel(item.case.id, item.arm.name, item.k))
        rec = got[0] if got is not None else None
        out.append(rec if rec is not None and rec.cell.key == item.tkey.key else records_of(project, cell_of(item)))
    return out


def cell_of(item: Item) -> Cell:
    """The cell a plan item is, under the trial key it maps to now."""
    return Cell(spec=item.spec, case=item.case, arm=item.arm, k=item.k, key=item.tkey.key)


def results_gate(project: Project, plan: SpecPlan) -> str | None:
    """None when the spec's latest results are of the spec as it is now (every trial and grade key is the one
    its last report was built from) and passed; else one line saying why not. `skillmake promote` reads it."""
    name = plan.spec.name
    stamp = _stamp(project, plan)
    if stamp is None:
        return f"{name}: it has no results yet; run `skillmake` first"
    if stamp.get("inputs") is None or stamp.get("inputs") != plan.inputs_digest():
        return (f"{name}: its last results are not of the spec as it is now (a case, the skill, a fixture or a "
                f"setting changed since); run `skillmake` first")
    if not stamp.get("passed"):
        problems = [str(p) for p in stamp.get("problems", [])]
        first = problems[0].removeprefix(f"{name}: ") if problems else "its verdict was red"
        return f"{name}: its last results did not pass: {first}"
    return None


def build_and_write(project: Project, plan: SpecPlan, *, evaluated: bool = True,
                    unchanged: list[tuple[str, int, bool]] | None = None,
                    selected: frozenset[str] | None = None) -> str | None:
    """Check out every cell's folder, write the spec's report files and print its summary; the failure
    message when the spec's verdict is red.

    `evaluated`: this is a run that evaluated the spec (its report task), not a re-render (`skillmake
    report`): an eva eval gets its `.eval.jsonl` row only then (results/eva_history.py says why).
    `unchanged`: where a spec whose results did not change is added as (name, cells, passed) instead of
    printing its one "nothing changed" line (`skillmake report` says it once for all of them).
    `selected`: the names of the cells this run's selection (-k, --tag, --spec) picked, None for all: a cell left
    out that has no grade is "not run (not selected)", not a failure (pytest's -k)."""
    from skillmake.results import junit_xml, render_summary, write_junit
    from skillmake.results.eva_history import append_eva_row, eva_history_path, eva_row
    from skillmake.results.files import write_changed
    from skillmake.results.html import html_report
    from skillmake.results.publish import publish
    from skillmake.spec.adapters.eva import is_eva_spec

    settled.unsettle(project, plan.spec.name)  # until this report is written and passed
    read_after = time.time_ns() - RACY_NS  # every record below is read after this: refresh need not read it again
    early = early_records(project, plan.spec.name)
    cells = cells_of(project, plan, early)
    if plan.spec.adaptive is not None:  # only the trials up to the look that decided each cell count
        from skillmake.engine.adaptive import counted

        cells = counted(plan.spec, cells)
    checkout(project, cells)
    # The records this run made join the plan's index: the next run opens none of them.
    refresh(project, plan.spec.name, [c.cell.key for c in cells] + [t.tkey.key for t in plan.triggers],
            {c.cell.key: c.trial for c in cells if c.trial is not None}, before_ns=read_after,
            written={rec.cell.key: signature for rec, signature in early.values()})
    trials = [c.trial for c in cells if c.trial is not None]
    grades = [c.grade for c in cells if c.grade is not None]
    keys = {c.cell.name: (c.cell.key, c.grade_key) for c in cells}
    triggers = _triggers(project, plan, keys, selected)
    folder = project.reports_dir / plan.spec.name
    cut_links(project.reports_dir, folder, children=True)  # never written through a link out of the project
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    run_id = current_run_id()
    unselected = () if selected is None else {(c.cell.case.id, c.cell.arm.name, c.cell.k) for c in cells
                                              if c.cell.name not in selected}
    published = publish(folder, plan.spec, trials, grades, now=now, run_id=run_id, triggers=triggers,
                        keep=project.store.put, unselected=unselected)
    report = published.report
    write_junit(folder / "junit.xml", junit_xml([report]))
    write_changed(folder / "report.html", html_report(report, previous=published.previous).encode())
    verdict = report["verdict"]
    problems = list(verdict["reasons"]) if not verdict["passed"] else []
    if problems:
        problems.extend(_failed_checks(plan, report))
    if evaluated and is_eva_spec(plan.spec):
        # Before the stamp: if the row cannot be written, the report is not up to date and the next run adds it.
        append_eva_row(eva_history_path(plan.spec.path), eva_row(report, ts=now))
    inputs = report_inputs(keys, labels=settings_digest(plan.spec))
    stamp: dict[str, Any] = {"inputs": inputs, "passed": verdict["passed"], "problems": problems,
                             "files": _signature(folder)}
    if verdict["passed"] and console.style().quiet:  # -q: only failures and the closing line
        atomic.write_bytes(folder / STAMP, orjson.dumps(stamp))
        _settle(project, plan, cells, passed=inputs is not None)
        return None
    # The summary below prints the verdict's reasons: the thresholds task of this run only points at them.
    stamp.update(run_id=run_id, shown=len(verdict["reasons"]) if problems else 0)
    atomic.write_bytes(folder / STAMP, orjson.dumps(stamp))
    _settle(project, plan, cells, passed=bool(verdict["passed"]) and inputs is not None)
    previous = {plan.spec.name: published.previous} if published.previous else None
    summary = render_summary([report], previous=previous, run_id=run_id)
    if unchanged is not None and summary.startswith("nothing changed:"):
        unchanged.append((plan.spec.name, len(report["rows"]), bool(verdict["passed"])))
        return "\n".join(problems) if problems else None
    write_line(sys.stdout, summary)
    freshness = _freshness(plan, cells, run_id)
    if freshness:
        write_line(sys.stdout, freshness)
    return "\n".join(problems) if problems else None


def _settle(project: Project, plan: SpecPlan, cells: list[CellRecords], *, passed: bool) -> None:
    """A report that passed over a result (no error, no timeout) in every cell settles its spec (settled.py): the
    next plain run plans none of its trials until an input, its records or what this report wrote changes."""
    from skillmake.run.grade import TRIAL_RESULTS

    if passed and all(c.grade_key is not None and c.trial is not None and c.trial.get("outcome") in TRIAL_RESULTS
                      for c in cells):
        settled.settle(project, plan.spec)


def _triggers(project: Project, plan: SpecPlan, keys: dict[str, tuple[str, str | None]],
              selected: frozenset[str] | None = None) -> dict[str, Any] | None:
    """Check out the trigger views and build the report's trigger section; add each trigger cell to `keys` (the
    report's inputs) as plan.inputs_digest does. `selected` as build_and_write's: a trigger trial left out that has
    no record is counted in the section's `not_selected`, not missing."""
    from skillmake.results.triggers import trigger_section
    from skillmake.triggers.views import checkout_triggers, record_of

    spec = plan.spec
    if spec.trigger_tests is None:
        checkout_triggers(project, spec, [], skill=spec.skill.name)
        return None
    skill = plan.triggers[0].offered.name if plan.triggers else spec.skill.name
    runs = []
    for item in plan.triggers:
        record = record_of(project, spec, item.tkey.key)
        runs.append((item.query, item.k, record))
        cached = record is not None and record.get("outcome") in ("completed", "cheat")
        keys[f"trigger:{item.name}"] = (item.tkey.key, item.tkey.key if cached else None)
    checkout_triggers(project, spec, [(q.id, k, r) for q, k, r in runs], skill=skill)
    section = trigger_section(spec, runs, skill=skill)
    if section is not None and selected is not None and not section.get("skipped"):
        left_out = sum(1 for item, (_q, _k, record) in zip(plan.triggers, runs, strict=True)
                       if record is None and f"trigger:{item.name}" not in selected)
        if left_out:
            section["not_selected"] = left_out
    return section


def _freshness(plan: SpecPlan, cells: list[CellRecords], run_id: str) -> str | None:
    """Which samples in the report this run drew and which are stored results, when it shows both."""
    fresh = [c.cell.name for c in cells if c.trial is not None and c.trial.get("run_id") == run_id]
    stored = sum(1 for c in cells if c.trial is not None and c.trial.get("run_id") != run_id)
    if not fresh or not stored:
        return None
    shown = ", ".join(n.split("/", 1)[1] for n in fresh[:4]) + (f", … ({len(fresh) - 4} more)" if len(fresh) > 4
                                                                 else "")
    return f"{plan.spec.name}: {len(fresh)} trial(s) fresh this run ({shown}); {stored} stored"


def _failed_checks(plan: SpecPlan, report: dict[str, Any], *, most: int = 8) -> list[str]:
    """Which checks and judges failed in the arms that use the skill, with their evidence."""
    skill_arms = {a.name for a in plan.spec.arms if a.skill}
    lines = []
    for row in report["rows"]:
        if row["arm"] not in skill_arms:
            continue
        for failure in row["failures"]:
            lines.append(f"  ✗ {row['case']}/{row['arm']} trial {failure['k']}: {failure['text']} — "
                         f"{failure['evidence']}")
    if len(lines) > most:
        lines = [*lines[:most], f"  … and {len(lines) - most} more (see reports/{plan.spec.name}/report.json)"]
    return lines
