"""caliper's `--output FILE`: this run's results, every report it covers, written to one JSON file. A run of one
spec (as `caliper run SPEC --output FILE` is) also gets caliper 0.1.0's own shape at the top level of that file —
`run`, `skill_snapshot`, `task_results`, `aggregate`, `baseline`, `delta` (results/caliper_results.py) — beside
skillmake's keys, so a step written for caliper's file reads it unchanged."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from skillmake.results.files import RUN_OUTPUT, read_report, write_json


def write_output(path: str, *, judge_strategy: str = "autorater") -> None:
    """Write the reports of the specs this run covered (every spec, or those with a selected cell) to `path`.

    A spec whose report is missing (its trials could not run) is listed under `missing`, so the file always
    says which specs it speaks for."""
    from skillmake.engine import tasks
    from skillmake.run.project import current_run_id

    root = tasks.current_root()
    project = tasks.project_at(root)
    chosen = tasks.chosen_at(root)
    reports: list[dict[str, Any]] = []
    missing: list[str] = []
    covered = []
    for plan in tasks.plans_at(root):
        if not chosen.touches(plan):
            continue
        report = read_report(project.reports_dir / plan.spec.name / "report.json")
        if report is None:
            missing.append(plan.spec.name)
        else:
            reports.append(report)
            covered.append((plan.spec, report))
    data: dict[str, Any] = {}
    if len(covered) == 1 and not missing:
        from skillmake.results.caliper_results import caliper_results

        spec, report = covered[0]
        data.update(caliper_results(project, spec, report, judge_strategy=judge_strategy))
    data.update({"version": 1, "run_id": current_run_id(),
                 "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                 "passed": bool(reports) and not missing and all(r["verdict"]["passed"] for r in reports),
                 "reports": reports, "missing": missing})
    target = os.path.abspath(os.path.expanduser(path))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    write_json(target, data, schema=RUN_OUTPUT, what=f"--output {path}")
