"""caliper 0.1.0's results file (its schema/results.py, RunResults) from a spec's report and the records it names:
what `caliper run --output FILE` writes, so that a CI step reading `task_results`, `aggregate`, `baseline` and
`delta` reads a skillmake run the same way. Tasks are the spec's cases, attempts its `with_skill` trials (and the
`without_skill` ones for `baseline`), scores caliper's pass@k (1 - (1 - c/k)^k)."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Mapping
from typing import Any

from skillmake.results.snapshot import project_root
from skillmake.run.project import Project
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Spec
from skillmake.spec.skillfiles import manifest
from skillmake.store.objects import GRADE_SCHEMA, TRIAL_SCHEMA

# skillmake's agent kinds as caliper's backend names (adapters/caliper.py maps them the other way).
BACKENDS: Mapping[str, str] = {"claude-code": "claude-code", "codex": "codex", "anthropic": "claude-api",
                               "openai": "openai-api"}


def pass_at_k(successes: int, k: int) -> float:
    """caliper's scoring.pass_at_k."""
    return 0.0 if k == 0 else 1.0 - (1.0 - successes / k) ** k


def caliper_results(project: Project, spec: Spec, report: Mapping[str, Any], *,
                    judge_strategy: str = "autorater") -> dict[str, Any]:
    """RunResults of `spec` as `report` (its report.json) says, with each attempt read from the store."""
    rows = {(r["case"], r["arm"]): r for r in report["rows"]}
    k = int(report["spec"]["trials"])
    agent = spec.arms[0].agent
    with_skill = [_task(project, spec, case.id, case.description or "", rows.get((case.id, WITH_SKILL)), k)
                  for case in spec.cases]
    without = [_task(project, spec, case.id, case.description or "", rows[(case.id, WITHOUT_SKILL)], k)
               for case in spec.cases if (case.id, WITHOUT_SKILL) in rows]
    aggregate = _aggregate(with_skill, k)
    baseline = _aggregate(without, k) if without else None
    delta = None if baseline is None else {
        "with_skill": aggregate, "without_skill": baseline,
        "delta": aggregate["avg_pass_at_k"] - baseline["avg_pass_at_k"]}
    return {
        "run": {"spec": spec.name, "timestamp": report.get("generated") or _now(), "k": k,
                "judge_strategy": judge_strategy, "backend": BACKENDS.get(agent.kind, agent.kind),
                "model": agent.model},
        "skill_snapshot": _skill_snapshot(spec),
        "task_results": with_skill,
        "aggregate": aggregate,
        "baseline": baseline,
        "delta": delta,
    }


def _task(project: Project, spec: Spec, case: str, name: str, row: Mapping[str, Any] | None,
          k: int) -> dict[str, Any]:
    attempts = []
    if row is not None:
        for i, (tkey, gkey) in enumerate(zip(row.get("trial_keys", []), row.get("grade_keys", []), strict=False)):
            attempts.append(_attempt(project, i + 1, tkey, gkey))
    successes = int(row["passed"]) if row is not None else 0
    return {"task_id": case, "task_name": name, "attempts": attempts, "successes": successes,
            "pass_at_k": pass_at_k(successes, k)}


def _record(project: Project, key: str | None, schema: str) -> dict[str, Any]:
    if not key:
        return {}
    return project.store.get_action(key, schema=schema) or project.store.get_attempt(key, schema=schema) or {}


def _attempt(project: Project, n: int, tkey: str | None, gkey: str | None) -> dict[str, Any]:
    """One caliper AttemptRecord: the trial's output and duration, the grade's verdict split as caliper splits it
    (the deterministic checks are its `assert`, the judges its autorater)."""
    trial = _record(project, tkey, TRIAL_SCHEMA)
    grade = _record(project, gkey, GRADE_SCHEMA)
    digest = (trial.get("outputs") or {}).get("output")
    raw = project.store.get(digest) if digest else None
    expectations = grade.get("expectations") or []
    checks = [e for e in expectations if e.get("source") == "check" and e.get("id") != "sandbox"]
    judged = [e for e in expectations if e.get("source") != "check"]
    outcome = grade.get("outcome") or trial.get("outcome")
    cheated = outcome == "cheat"
    failed_checks = "; ".join(str(e.get("evidence", "")) for e in checks if not e.get("passed"))
    reasons = "; ".join(str(e.get("evidence", "")) for e in judged if e.get("evidence"))
    error = trial.get("error") if trial.get("outcome") in ("error", "timeout") else None
    return {
        "attempt": n,
        "output": raw.decode("utf-8", "replace") if raw is not None else "",
        "duration_seconds": round(float((trial.get("timing") or {}).get("duration_ms", 0.0)) / 1000, 3),
        "passed": outcome == "pass",
        "cheated": cheated,
        "cheat_evidence": list((trial.get("activation") or {}).get("forbidden_reads", [])) if cheated else [],
        "assert_passed": all(e.get("passed") for e in checks) if checks else (False if error else None),
        "assert_evidence": failed_checks or error or None,
        "autorater_passed": all(e.get("passed") for e in judged) if judged else None,
        "autorater_reasoning": reasons or grade.get("error") or None,
    }


def _aggregate(tasks: list[dict[str, Any]], k: int) -> dict[str, Any]:
    per_task = [{"task_id": t["task_id"], "task_name": t["task_name"], "k": k, "successes": t["successes"],
                 "score": pass_at_k(t["successes"], k)} for t in tasks]
    avg = sum(t["score"] for t in per_task) / len(per_task) if per_task else 0.0
    return {"avg_pass_at_k": avg, "per_task": per_task}


def _skill_snapshot(spec: Spec) -> dict[str, Any]:
    """caliper's SkillSnapshot: the skill's path, its text files (content and sha256) and the git commit."""
    if not spec.skill.present:
        return {"path": "", "git_repo": None, "git_sha": None, "files": {}}
    from skillmake.results.snapshot import _git

    files: dict[str, Any] = {}
    folder = spec.skill.path if spec.skill.kind == "folder" else os.path.dirname(spec.skill.path)
    for rel in manifest(spec.skill)["files"]:
        path = os.path.join(folder, rel)
        try:
            with open(path, "rb") as f:
                data = f.read()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # caliper snapshots text files only
        files[rel] = {"content": text, "hash": "sha256:" + hashlib.sha256(data).hexdigest()}
    root = project_root(spec)
    git = _git(root)
    return {"path": os.path.abspath(spec.skill.path), "git_repo": root if git else None,
            "git_sha": git["sha"] if git else None, "files": files}


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
