"""Grading one trial: run the case's checks and judges over the trial's stored outputs, cached by grade key."""

from __future__ import annotations

import contextlib
import datetime as dt
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillmake.core import fstree
from skillmake.core.canonical import digest_json
from skillmake.run.agents.base import Usage
from skillmake.run.keys import Part, grade_key, grade_part, part
from skillmake.run.project import Project, current_run_id
from skillmake.run.staging import check_files_changed, run_fragment
from skillmake.run.workspace import kept_tree, materialize
from skillmake.spec.model import Arm, Case, Spec
from skillmake.store.objects import GRADE_SCHEMA

CACHEABLE = frozenset({"pass", "fail", "cheat"})
TRIAL_RESULTS = frozenset({"completed", "cheat"})  # trial outcomes a grade result can be cached for
_NO_JUDGE = part({})  # the judge part of a case without judges


@dataclass(frozen=True, slots=True, kw_only=True)
class GradeRun:
    """A grade's record, whether it was made now (`ran`: else it came from the store), and the judge calls made."""

    record: dict[str, Any]
    ran: bool
    judge_calls: int = 0


def judge_part(spec: Spec, case: Case) -> Part:
    if not case.has_judge:
        return _NO_JUDGE
    from skillmake.run.judges import judge_key

    key = judge_key(spec, case)
    if spec.judge.temperature is not None:  # only when set: every grade key made without one stays valid
        key["temperature"] = spec.judge.temperature
    return part(key)


def reads_workspace(case: Case) -> bool:
    """A python check sees the whole workspace, so its grade depends on the workspace tree too."""
    return any(check.type == "python" for check in case.checks)


def outputs_digest(case: Case, trial_record: dict[str, Any]) -> str:
    """What of the trial a grade of `case` depends on: the outputs, and the workspace tree when it is read."""
    return graded_digest(case, digest_json(trial_record["outputs"]), kept_tree(trial_record))


def graded_digest(case: Case, outputs: str, workspace: str | None) -> str:
    """outputs_digest from the digest of a record's outputs and its workspace tree digest (the plan's index)."""
    if reads_workspace(case) and workspace:
        return digest_json({"outputs": outputs, "workspace": workspace})
    return outputs


# id(case) → (spec, case, its grade part), for cases whose checks read no file: then the part is worked out from the
# frozen spec and case alone, the same for every trial of the case (asked for by its grade and again by the report's
# view). The entry holds spec and case, so their ids are not reused while it lives.
_PARTS: dict[int, tuple[Spec, Case, Part]] = {}
_PARTS_MAX = 4096


def case_grade_part(spec: Spec, case: Case) -> Part:
    """keys.grade_part(spec, case), kept per loaded spec and case object unless a check of the case reads a file (a
    script, a schema file): that part names the file's content, worked out each time it is asked, so a script that
    changed between a cell's grade and its view makes them disagree (test_hermetic)."""
    hit = _PARTS.get(id(case))
    if hit is not None and hit[0] is spec and hit[1] is case:
        return hit[2]
    made = grade_part(spec, case)
    if b'_digest"' not in made.data:  # _check_raw names each file a check reads as "<key>_digest"
        if len(_PARTS) >= _PARTS_MAX:
            _PARTS.clear()
        _PARTS[id(case)] = (spec, case, made)
    return made


def key_for(spec: Spec, case: Case, trial_record: dict[str, Any]) -> tuple[str, dict[str, Any], list[Part]]:
    outputs = outputs_digest(case, trial_record)
    gpart, jpart = case_grade_part(spec, case), judge_part(spec, case)
    inputs = {"key_version": trial_record["inputs"]["key_version"], "outputs": outputs,
              "grade": gpart.digest, "judge": jpart.digest}
    return grade_key(outputs, gpart, jpart), inputs, [gpart, jpart]


def cached(project: Project, spec: Spec, case: Case, trial_record: dict[str, Any], *, key: str | None = None
           ) -> dict[str, Any] | None:
    """The cached grade of `trial_record` under `case` (`key`: its grade key, when the caller has it)."""
    if trial_record["outcome"] not in TRIAL_RESULTS:
        return None
    key = key or key_for(spec, case, trial_record)[0]
    record = project.store.get_action(key, schema=GRADE_SCHEMA)
    return record if record and record["outcome"] in CACHEABLE else None


def stale(project: Project, spec: Spec, case: Case, trial_record: dict[str, Any], *, resample: bool = False,
          key: str | None = None) -> tuple[dict[str, Any] | None, bool]:
    """The cached grade of `trial_record` (or None), and whether `execute` grades it afresh all the same."""
    hit = cached(project, spec, case, trial_record, key=key)
    run_id = current_run_id()
    fresh_trial = resample and trial_record.get("run_id") == run_id
    return hit, not (hit is not None and not (fresh_trial and hit.get("run_id") != run_id))


def judged_output(project: Project, trial_record: dict[str, Any]) -> tuple[str, dict[str, bytes]] | None:
    """The output text and files a grade's judges read; None when the trial cannot be judged (not completed, or
    its stored outputs are missing)."""
    if trial_record["outcome"] != "completed":
        return None
    store = project.store
    text = store.get(trial_record["outputs"]["output"])
    files = {name: store.get(d) for name, d in trial_record["outputs"]["files"].items()}
    if text is None or any(v is None for v in files.values()):
        return None
    return text.decode("utf-8", "replace"), {name: data for name, data in files.items() if data is not None}


def execute(project: Project, spec: Spec, case: Case, arm: Arm, k: int, trial_record: dict[str, Any], *,
            resample: bool = False, batched: bool = False) -> GradeRun:
    """The grade of `trial_record`: from the cache, else by running its checks and judges now. With
    `resample`, a trial sampled afresh by this run is graded afresh too (judges are samples as well), unless
    this run already graded the same outputs. With `batched`, the judges' answers come from this run's batch
    (run/batch.py) instead of calls; the record is made the same way."""
    key, inputs, parts = key_for(spec, case, trial_record)
    hit, again = stale(project, spec, case, trial_record, resample=resample, key=key)
    run_id = current_run_id()
    fresh_trial = resample and trial_record.get("run_id") == run_id
    if not again:
        assert hit is not None
        return GradeRun(record=hit, ran=False)
    # One grading of a key at a time: threads, runs, and clones sharing a remote (its lease): the second waits and
    # reuses the first's record.
    with project.store.key_lock(key):
        made = cached(project, spec, case, trial_record, key=key)
        if made is not None and not (fresh_trial and made.get("run_id") != run_id):
            return GradeRun(record=made, ran=False)
        return _grade(project, spec, case, arm, k, trial_record, key=key, inputs=inputs, parts=parts, hit=hit,
                      batched=batched)


def _grade(project: Project, spec: Spec, case: Case, arm: Arm, k: int, trial_record: dict[str, Any], *, key: str,
           inputs: dict[str, Any], parts: list[Part], hit: dict[str, Any] | None, batched: bool = False) -> GradeRun:
    """Run the checks and judges of `case` over `trial_record` now and store the grade (its key's lock held)."""
    run_id = current_run_id()
    for piece in parts:
        project.store.put_known(piece.digest, piece.data)
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    with _workspace(project, case, trial_record) as workspace:
        expectations, score, usage, outcome, error, calls = _judge_trial(project, spec, case, trial_record,
                                                                         workspace, batched=batched)
    changed = check_files_changed(run_fragment(parts[0].data).get("checks") or [], spec.folder)
    if changed and outcome in CACHEABLE:  # a verdict of other content than its key names is never cached
        outcome, error = "error", (f"the check file {', '.join(changed)} changed while the grade ran (its grade key "
                                   "names other content); it is graded again next run")
    record: dict[str, Any] = {
        "schema": "skillmake/grade-record@1", "kind": "grade", "key": key, "trial_key": trial_record["key"],
        "inputs": inputs, "labels": dict(trial_record["labels"], case=case.id, arm=arm.name, k=k),
        "outcome": outcome, "error": error, "score": score, "expectations": expectations,
        "usage": usage.to_json(),
        "timing": {"started": started, "duration_ms": round((time.monotonic() - t0) * 1000, 3)},
        "run_id": run_id,
    }
    if outcome in CACHEABLE:
        if hit is not None:
            from skillmake.run.trial import keep_replaced

            keep_replaced(project, hit)
        record = project.store.put_action(record, schema=GRADE_SCHEMA)
        project.store.clear_attempt(key)
    else:
        record = project.store.put_attempt(record, schema=GRADE_SCHEMA)
    return GradeRun(record=record, ran=True, judge_calls=calls)  # as stored (redacted), for the cell's view


def _judge_trial(project: Project, spec: Spec, case: Case, trial: dict[str, Any], workspace: str | None, *,
                 batched: bool = False) -> tuple[list[dict[str, Any]], float | None, Usage, str, str | None, int]:
    outcome = trial["outcome"]
    if outcome in ("error", "timeout"):
        return [], None, Usage(), outcome, trial["error"], 0
    if outcome == "cheat":
        reads = ", ".join(trial.get("activation", {}).get("forbidden_reads", []))
        return ([{"text": "the agent did not read forbidden files", "passed": False,
                  "evidence": f"read {reads}", "source": "check", "id": "sandbox"}], 0.0, Usage(), "cheat",
                f"read forbidden files: {reads}", 0)
    store = project.store
    text_bytes = store.get(trial["outputs"]["output"])
    files = {name: store.get(d) for name, d in trial["outputs"]["files"].items()}
    if text_bytes is None or any(v is None for v in files.values()):
        return [], None, Usage(), "error", "the trial's stored outputs are missing; it will re-run", 0
    text = text_bytes.decode("utf-8", "replace")
    present = {name: data for name, data in files.items() if data is not None}
    from skillmake.run.checks import CheckContext, run_check

    ctx = CheckContext(output=text, files=present, workspace=workspace, spec_folder=spec.folder)
    # Checks the trial ran before its cleanup (trial._checks_before_cleanup) keep the verdicts they got there.
    early = {e["id"]: e for e in trial.get("checks_before_cleanup") or []}
    expectations = [dict(early[check.label]) if check.label in early else run_check(check, ctx)
                    for check in case.checks]
    usage, error, calls = Usage(), None, 0
    scores = [1.0 if e["passed"] else 0.0 for e in expectations]
    if case.has_judge:
        from skillmake.run.judges import judge_case

        call = None
        if batched:
            from skillmake.run import batch

            call = batch.answer(project)
        verdict = judge_case(spec, case, output=text, files=present, call=call)
        expectations.extend(verdict.expectations)
        usage, error = verdict.usage, verdict.error
        calls = verdict.usage.requests or 0
        if verdict.score is not None:
            scores.append(verdict.score)
    if error:
        return expectations, None, usage, "judge_error", error, calls
    passed = all(e["passed"] for e in expectations)
    score = round(sum(scores) / len(scores), 6) if scores else None
    return expectations, score, usage, "pass" if passed else "fail", None, calls


@contextlib.contextmanager
def _workspace(project: Project, case: Case, trial: dict[str, Any]) -> Iterator[str | None]:
    """The trial's own workspace, checked out of the store into a scratch folder for the python checks
    (which may write into it); None when no check reads it or the trial's tree was not kept."""
    digest = kept_tree(trial) if reads_workspace(case) else None
    tree = project.store.get_json(digest) if digest else None
    if not isinstance(tree, dict):
        yield None
        return
    project.work_dir.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="grade-", dir=project.work_dir))
    try:
        materialize(tree, folder / "workspace", project.store.get)
        (folder / "workspace").mkdir(exist_ok=True)
        yield str(folder / "workspace")
    finally:
        fstree.remove_tree(folder)
