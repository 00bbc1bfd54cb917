"""Schema-valid trial and grade records and a small Spec, for the results tests."""

from __future__ import annotations

from typing import Any

from skillmake.core.canonical import digest_json
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, AgentConfig, Arm, Case, Skill, Spec, Thresholds
from skillmake.spec.schema import validate_record


def make_spec(*, trials: int = 2, thresholds: Thresholds | None = None, baseline: bool = True,
              required: tuple[str, ...] = (), cases: tuple[str, ...] = ("greeting", "question")) -> Spec:
    agent = AgentConfig(kind="command", command=("python3", "agent.py"))
    arms = [Arm(name=WITH_SKILL, agent=agent, skill=True)]
    if baseline:
        arms.append(Arm(name=WITHOUT_SKILL, agent=agent, skill=False))
    return Spec(name="shout", path="/p/shout.eval.yaml", relpath="shout.eval.yaml",
                skill=Skill(name="shout", path="/p/skills/shout", kind="folder"), agent=agent, arms=tuple(arms),
                cases=tuple(Case(id=c, index=i, prompt=f"prompt {c}", required=c in required)
                            for i, c in enumerate(cases)),
                trials=trials, thresholds=thresholds or Thresholds())


def _d(*parts: Any) -> str:
    return digest_json(list(parts))


def trial_record(case: str, arm: str, k: int, *, tokens: int | None = 1000, cost: float | None = 0.01,
                 ms: float = 2000.0, salt: str = "", outcome: str = "completed", error: str | None = None,
                 run_id: str | None = None) -> dict[str, Any]:
    record = {
        "schema": "skillmake/trial-record@1", "kind": "trial", "key": _d("trial", case, arm, k, salt),
        "inputs": {"key_version": 1, "skill": _d("skill", salt) if arm == WITH_SKILL else None,
                   "run": _d("run", case), "agent": _d("agent"), "k": k},
        "labels": {"spec": "shout", "skill": "shout", "case": case, "arm": arm, "k": k},
        "agent": {"kind": "command", "model": None, "version": None},
        "outcome": outcome, "error": error, "exit_code": 0 if outcome == "completed" else None,
        "outputs": {"output": _d("out", case, arm, k), "stdout": _d("out", case, arm, k),
                    "stderr": _d("err"), "transcript": None, "files": {}},
        "usage": {"input_tokens": None if tokens is None else tokens - 100,
                  "output_tokens": None if tokens is None else 100, "cost_usd": cost},
        "timing": {"started": "2026-11-22T20:00:00Z", "duration_ms": ms},
    }
    if run_id is not None:
        record["run_id"] = run_id
    validate_record("trial-record.schema.json", record, what="fixture trial")
    return record


def grade_record(trial: dict[str, Any], outcome: str, *verdicts: tuple[str, bool, str],
                 score: float | None = None, judge_tokens: int | None = None, salt: str = "",
                 error: str | None = None, run_id: str | None = None, cost: float | None = None) -> dict[str, Any]:
    """A grade of `trial`; an error/timeout grade carries the trial's error (else "boom") unless given one."""
    labels = trial["labels"]
    expectations = [{"text": f"check {i}", "passed": p, "evidence": ev, "source": "check", "id": i}
                    for i, p, ev in verdicts]
    if score is None and expectations and outcome in ("pass", "fail"):
        score = sum(1.0 for e in expectations if e["passed"]) / len(expectations)
    record = {
        "schema": "skillmake/grade-record@1", "kind": "grade", "key": _d("grade", trial["key"], salt),
        "trial_key": trial["key"],
        "inputs": {"key_version": 1, "outputs": _d("outs", trial["key"]), "grade": _d("g", labels["case"], salt),
                   "judge": _d("judge")},
        "labels": dict(labels), "outcome": outcome,
        "error": error or (trial["error"] or "boom" if outcome in ("error", "timeout") else None),
        "score": score, "expectations": expectations,
        "usage": {k: v for k, v in (("total_tokens", judge_tokens), ("cost_usd", cost)) if v is not None},
        "timing": {"started": "2026-11-22T20:00:05Z", "duration_ms": 500.0},
    }
    if run_id is not None:
        record["run_id"] = run_id
    validate_record("grade-record.schema.json", record, what="fixture grade")
    return record


def scenario(*, salt: str = "", question_with: tuple[bool, bool] = (True, False)) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]]]:
    """greeting passes 2/2 with the skill and 0/2 without; question passes per `question_with` / 0/2."""
    trials: list[dict[str, Any]] = []
    grades: list[dict[str, Any]] = []
    for k in range(2):
        t = trial_record("greeting", WITH_SKILL, k, salt=salt)
        trials.append(t)
        grades.append(grade_record(t, "pass", ("shouts", True, "matched 'HELLO'"), ("len", True, "ok"), salt=salt))
        t = trial_record("greeting", WITHOUT_SKILL, k, tokens=1500, ms=3000.0)
        trials.append(t)
        grades.append(grade_record(t, "fail", ("shouts", False, "no match for /^[A-Z !]+$/ in 'hello'"),
                                   ("len", True, "ok")))
        t = trial_record("question", WITH_SKILL, k, salt=salt)
        trials.append(t)
        ok = question_with[k]
        grades.append(grade_record(t, "pass" if ok else "fail", ("bang", ok, "ends with !" if ok else "ends with ?"),
                                   salt=salt))
        t = trial_record("question", WITHOUT_SKILL, k, tokens=1500, ms=3000.0)
        trials.append(t)
        grades.append(grade_record(t, "fail", ("bang", False, "ends with ?")))
    return trials, grades
