"""clauditor's per-grade folder, `.clauditor/iteration-N/<skill>/`, written after `skillmake clauditor grade` so a CI
step that reads clauditor's files finds them: grading.json (its GradingReport, schema_version 5, the primary run's
criteria as `results[]`), assertions.json (schema_version 2, every run's assertion results) and each run's
output.txt. Built from the cell views (runs/<spec>/<case>/with_skill/trial-<k>/), staged in a hidden folder and
renamed into place, as clauditor finalizes its own (a reader never sees half a folder).

Not written: extraction.json (skillmake's sections judge grades each field over every entry at once and keeps no
per-entry values, so clauditor's per-entry shape cannot be filled honestly), context.json, timing.json and
history.jsonl (skillmake's own report.json, timing.json and reports/<spec>/history.jsonl hold that)."""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from skillmake.spec.adapters.clauditor_assertions import clauditor_name
from skillmake.spec.model import WITH_SKILL, Spec

CLAUDITOR_DIR = ".clauditor"
_ITERATION = re.compile(r"^iteration-(\d+)$")
# clauditor's AssertionResult.kind of each assertion type (assertions.py)
_KIND = {"contains": "presence", "not_contains": "presence", "regex": "pattern", "min_count": "count",
         "min_length": "count", "max_length": "count", "has_urls": "count", "has_entries": "count",
         "urls_reachable": "reachability", "has_format": "count"}


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _runs(root: Path, spec: Spec) -> list[tuple[int, dict[str, Any], dict[str, Any], Path]]:
    """(k, trial view, grade view, its folder) of every graded with_skill run of the spec's one case, by k."""
    case = spec.cases[0]
    out = []
    for k in range(spec.trials):
        folder = root / ".skillmake" / "runs" / spec.name / case.id / WITH_SKILL / f"trial-{k}"
        trial, grade = _read(folder / "trial.json"), _read(folder / "grade.json")
        if trial is not None and grade is not None:
            out.append((k, trial, grade, folder))
    return out


def _grading(spec: Spec, seed: dict[str, Any], trial: dict[str, Any], grade: dict[str, Any]) -> dict[str, Any]:
    by_id = {e.get("id"): e for e in grade.get("expectations", ()) if e.get("source") == "judge"}
    results = []
    for c in seed.get("grading_criteria") or ():
        e = by_id.get(c["id"], {})
        results.append({"id": c["id"], "criterion": c["criterion"], "passed": bool(e.get("passed")),
                        "score": float(e.get("score") or 0.0), "evidence": str(e.get("evidence") or ""),
                        "reasoning": ""})  # skillmake keeps the judge's evidence and reasoning as one text
    usage, agent = grade.get("usage") or {}, trial.get("usage") or {}
    judge_in, judge_out = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    skill_in, skill_out = int(agent.get("input_tokens") or 0), int(agent.get("output_tokens") or 0)
    return {
        "schema_version": 5, "skill_name": _skill_name(spec, seed), "model": spec.judge.model,
        "transport_source": "cli" if spec.judge.provider == "claude-code" else "api",
        "provider_source": "openai" if spec.judge.provider == "openai" else "anthropic",
        "harness": (trial.get("agent") or {}).get("kind") or spec.agent.kind,
        "duration_seconds": round(float((grade.get("timing") or {}).get("duration_ms") or 0.0) / 1000, 6),
        "input_tokens": judge_in, "output_tokens": judge_out, "reasoning_tokens": None,
        "timestamp": datetime.datetime.now(datetime.UTC).isoformat(), "results": results,
        "thresholds": {key: getattr(spec.thresholds, key) for key in ("min_pass_rate", "min_mean_score")},
        "metrics": {"skill": {"input_tokens": skill_in, "output_tokens": skill_out},
                    "quality": {"input_tokens": judge_in, "output_tokens": judge_out},
                    "total": {"input_tokens": skill_in + judge_in, "output_tokens": skill_out + judge_out,
                              "total": skill_in + judge_in + skill_out + judge_out}},
    }


def _assertion_results(seed: dict[str, Any], grade: dict[str, Any]) -> list[dict[str, Any]]:
    """The run's results of the spec's assertions, in their order (checks are graded in the order written)."""
    checks = [e for e in grade.get("expectations", ()) if e.get("source") == "check"]
    out = []
    for a, e in zip(seed.get("assertions") or (), checks, strict=False):
        out.append({"id": a.get("id"), "name": clauditor_name(a), "passed": bool(e.get("passed")),
                    "message": str(e.get("evidence") or ""), "kind": _KIND.get(a.get("type", ""), "custom"),
                    "evidence": None, "raw_data": None, "transcript_path": None})
    return out


def _skill_name(spec: Spec, seed: dict[str, Any]) -> str:
    name = seed.get("skill_name")
    return name if isinstance(name, str) and name else spec.skill.name


def _next_iteration(base: Path) -> int:
    taken = [int(m.group(1)) for p in base.iterdir() if (m := _ITERATION.match(p.name))] if base.is_dir() else []
    return max(taken, default=0) + 1


def write_iteration(root: str, spec: Spec) -> Path | None:
    """Write `.clauditor/iteration-N/<skill>/` for the clauditor spec's last grade; its folder, or None when a run
    has no grade to write (nothing is written then, as clauditor writes nothing for a grade it could not finish)."""
    seed = _read(Path(spec.path)) or {}
    runs = _runs(Path(root), spec)
    if not runs or runs[0][0] != 0 or any(g.get("outcome") not in ("pass", "fail") for _, _, g, _ in runs):
        return None
    skill = _skill_name(spec, seed)
    base = Path(root) / CLAUDITOR_DIR
    base.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=base))
    try:
        folder = staging / skill
        folder.mkdir()
        _, trial, grade, _ = runs[0]
        (folder / "grading.json").write_text(json.dumps(_grading(spec, seed, trial, grade), indent=2),
                                             encoding="utf-8")
        iteration = _next_iteration(base)
        assertions = {"schema_version": 2, "harness": (trial.get("agent") or {}).get("kind") or spec.agent.kind,
                      "skill": skill, "iteration": iteration,
                      "runs": [{"run": k, "input_tokens": 0, "output_tokens": 0, "results": _assertion_results(seed, g)}
                               for k, _, g, _ in runs]}
        for k, _, _, view in runs:
            if (view / "output.txt").is_file():
                (folder / f"run-{k}").mkdir()
                shutil.copyfile(view / "output.txt", folder / f"run-{k}" / "output.txt")
        while True:  # another grade may take a number meanwhile: the rename of a taken one fails, take the next
            (folder / "assertions.json").write_text(json.dumps({**assertions, "iteration": iteration}, indent=2),
                                                    encoding="utf-8")
            for path in folder.rglob("*"):
                if path.is_file():
                    with open(path, "rb") as fh:
                        os.fsync(fh.fileno())
            target = base / f"iteration-{iteration}"
            try:
                os.rename(staging, target)
            except OSError:
                if not target.exists():
                    raise
                iteration += 1
                continue
            return target / skill
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
