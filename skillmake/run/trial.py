"""Executing one trial: reuse it from the action cache, or run the agent in isolation and store the results."""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from skillmake.core import atomic
from skillmake.core.errors import SkillmakeError
from skillmake.run import hermetic, process
from skillmake.run.agents import AgentResult, TrialRequest, Usage, get_agent
from skillmake.run.keys import API_AGENTS, TrialKey
from skillmake.run.project import Project, current_run_id
from skillmake.run.staging import (
    RERUN_HINT,
    Changed,
    check_files_changed,
    check_programs,
    program_words,
    run_fragment,
    stage_skill,
)
from skillmake.run.workspace import TrialDir, capture, clean_env, output_text, prepare, release, scratch_dir, snapshot
from skillmake.spec.model import Arm, Case, Skill, Spec
from skillmake.spec.skillfiles import resolve_system_prompt
from skillmake.store.objects import TRIAL_SCHEMA

CACHEABLE = frozenset({"completed", "cheat"})  # results; error and timeout are retried next run


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialRun:
    record: dict[str, Any]
    ran: bool  # False when the record came from the action cache


def prompt_text(case: Case, skill: Skill | None) -> str:
    """The text sent to a model agent: the prompt and the args (clauditor test_args → `/skill args`)."""
    if case.prompt and case.args:
        return f"{case.prompt}\n\n{case.args}"
    if case.prompt:
        return case.prompt
    return f"/{skill.name} {case.args}" if skill else (case.args or "")


def timeout_of(spec: Spec, case: Case) -> float:
    return case.timeout or spec.timeout


def fits(record: dict[str, Any], timeout: float) -> bool:
    """Whether a stored result is this cell's result: a cacheable outcome reached within the cell's timeout.

    The timeout is not part of the key, so raising it reuses everything; lowering it re-runs only the
    trials whose agent took longer than the new limit (their own run would have timed out)."""
    if record.get("outcome") not in CACHEABLE:
        return False
    timing = record.get("timing") or {}
    took = timing.get("agent_ms", timing.get("duration_ms", 0.0))
    return float(took) <= timeout * 1000


def cached(project: Project, tkey: TrialKey, timeout: float) -> dict[str, Any] | None:
    record = project.store.get_action(tkey.key, schema=TRIAL_SCHEMA)
    return record if record and fits(record, timeout) else None


def execute(project: Project, spec: Spec, case: Case, arm: Arm, k: int, tkey: TrialKey, *,
            resample: bool = False) -> TrialRun:
    """The trial's record: from the cache when its key is there, else by running the agent now.

    One execution per key at a time: a second cell, run or project (on a shared store) with the same key
    waits for the first and then reuses its record. With `resample`, a stored result is run again unless this
    very run produced it (cells with the same inputs share one fresh sample)."""
    return reuse_or_run(project, tkey, timeout_of(spec, case), resample=resample,
                        run=lambda replacing: _run(project, spec, case, arm, k, tkey, replacing=replacing))


def reuse_or_run(project: Project, tkey: TrialKey, timeout: float, *, resample: bool,
                 run: Callable[[dict[str, Any] | None], dict[str, Any]]) -> TrialRun:
    """The cached record of `tkey` that fits `timeout`, else `run(replacing)`'s, under the key's lock (`replacing`:
    the stored record a resample replaces)."""
    hit = None if resample else cached(project, tkey, timeout)
    if hit is not None:
        return TrialRun(record=hit, ran=False)
    with project.store.key_lock(tkey.key):
        hit = cached(project, tkey, timeout)
        if hit is not None and (not resample or hit.get("run_id") == current_run_id()):
            return TrialRun(record=hit, ran=False)
        replacing = project.store.get_action(tkey.key, schema=TRIAL_SCHEMA) if resample else None
        return TrialRun(record=run(replacing), ran=True)


def keep_replaced(project: Project, record: dict[str, Any]) -> None:
    """Keep a stored result that a resample is about to replace: replaced/<2 hex>/<key hex>/<its run id>.json
    in the store, so earlier samples of a key stay readable (and countable) after --resample."""
    h = record["key"][7:]
    name = str(record.get("run_id") or "unknown")
    path = project.store.root / "replaced" / h[:2] / h / f"{name}.json"
    atomic.write_bytes(path, orjson.dumps(record, option=orjson.OPT_INDENT_2), durable=False)


def replaced(project: Project, key: str) -> list[dict[str, Any]]:
    """The earlier results of `key` that resamples replaced, oldest first."""
    h = key[7:]
    folder = project.store.root / "replaced" / h[:2] / h
    out = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            out.append(orjson.loads(path.read_bytes()))
        except (OSError, orjson.JSONDecodeError):
            continue
    return out


def _run(project: Project, spec: Spec, case: Case, arm: Arm, k: int, tkey: TrialKey, *,
         replacing: dict[str, Any] | None = None) -> dict[str, Any]:
    store = project.store
    for piece in tkey.parts():  # the key's parts, readable later by `explain`
        store.put_known(piece.digest, piece.data)
    run_id = current_run_id()
    tdir = scratch_dir(project.work_dir, tkey.key, run_id)
    refused: SkillmakeError | None = None
    try:
        try:  # the snapshot the key names, never the live files (staging.py)
            held = prepare(tdir, case, digests=run_fragment(tkey.run.data).get("input_files") or {},
                           skill=tkey.skill is not None)
            if tkey.skill is not None:
                staged = stage_skill(spec.skill, tkey.skill.data, tdir.root / "skill", held=held)
                spec = dataclasses.replace(spec, skill=staged)
        except SkillmakeError as exc:
            refused = exc
        return run_in(project, spec, case, arm, k, tkey, tdir, run_id, replacing=replacing, refused=refused)
    finally:
        release(tdir)


def run_in(project: Project, spec: Spec, case: Case, arm: Arm, k: int, tkey: TrialKey, tdir: TrialDir,
            run_id: str, *, replacing: dict[str, Any] | None = None,
            refused: SkillmakeError | None = None) -> dict[str, Any]:
    """Run the trial in `tdir` (staged) and record it; `refused`: why it may not run (an error outcome)."""
    store = project.store
    skill = spec.skill if arm.skill and spec.skill.present else None
    timeout = timeout_of(spec, case)
    env = clean_env(tdir.home, extra_path=spec.extra_path, spec_folder=spec.folder)
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    refused = refused or hermetic.problem(tdir.workspace)
    if refused is None:
        try:
            check_programs(tkey.agent.data, spec.folder, when="before")
        except SkillmakeError as exc:
            refused = exc
    result = (AgentResult(outcome="error", output="", error=refused.render(), usage=Usage(num_turns=0))
              if refused else _setup(case, tdir.workspace, env, timeout))
    agent = get_agent(arm.agent.kind)
    agent_ms = 0.0
    if result is None:
        t_agent = time.monotonic()
        try:
            request = TrialRequest(
                spec=spec, case=case, arm_name=arm.name, k=k, agent=arm.agent, skill=skill,
                prompt=prompt_text(case, skill), system_prompt=_system_prompt(project, spec, skill, arm, tkey),
                workspace=str(tdir.workspace), home=str(tdir.home), env=env, timeout=timeout,
                program_files=program_words(tkey.agent.data))
            result = agent.run(request)
            check_programs(tkey.agent.data, spec.folder, when="while")
        except SkillmakeError as exc:  # e.g. a SKILL.md whose frontmatter cannot be read, a program edited mid-run
            result = AgentResult(outcome="error", output="", error=exc.render())
        except OSError as exc:
            result = AgentResult(outcome="error", output="", error=f"cannot prepare the trial: {exc}")
        except Exception as exc:  # an agent bug must cost one trial, not the whole run
            result = AgentResult(outcome="error", output="", error=f"agent crashed: {type(exc).__name__}: {exc}")
        agent_ms = (time.monotonic() - t_agent) * 1000
    captured = capture(tdir.workspace, case)
    if captured.error and result.outcome == "completed":
        result = dataclasses.replace(result, outcome="error", error=captured.error)
    files = captured.files
    # What is kept (and what python checks read) is the workspace as the task left it; cleanup runs after, as in
    # caliper, where a task's assert sees its files before cleanup removes them.
    tree, tree_note = snapshot(tdir.workspace, store.put)
    text = output_text(case, result.output, files) if result.outcome == "completed" else result.output
    result = _unchanged_checks(result, tkey, spec, when="before")
    early = _checks_before_cleanup(spec, case, result.outcome, text, files, str(tdir.workspace))
    result = _unchanged_checks(result, tkey, spec, when="while")
    if case.cleanup:
        process.run(case.cleanup, cwd=str(tdir.workspace), env=env, timeout=timeout, shell=True)
    duration_ms = (time.monotonic() - t0) * 1000
    outputs: dict[str, Any] = {
        "output": store.put(text.encode("utf-8")),
        "stdout": store.put(result.stdout),
        "stderr": store.put(result.stderr),
        "transcript": store.put(result.transcript) if result.transcript is not None else None,
        "files": {name: store.put(data) for name, data in files.items()},
    }
    record: dict[str, Any] = {
        "schema": "skillmake/trial-record@1", "kind": "trial", "key": tkey.key, "inputs": tkey.inputs(),
        "labels": {"spec": spec.name, "skill": spec.skill.name, "case": case.id, "arm": arm.name, "k": k},
        "agent": {"kind": arm.agent.kind, "model": _model(arm), "version": _version(agent, arm)},
        "outcome": result.outcome, "error": result.error, "exit_code": result.exit_code, "outputs": outputs,
        "usage": result.usage.to_json(),
        "timing": {"started": started, "duration_ms": round(duration_ms, 3), "agent_ms": round(agent_ms, 3),
                   "timeout_s": timeout},
        "activation": {"skills": list(result.activated_skills), "forbidden_reads": list(result.forbidden_reads)},
        "details": result.details,
        "workspace": store.put_json(tree) if tree is not None else None,
        "workspace_note": tree_note or (f"{len(captured.skipped)} matching path(s) not captured: "
                                        + "; ".join(captured.skipped[:3]) if captured.skipped else None),
        "run_id": run_id,
    }
    if early is not None:
        record["checks_before_cleanup"] = early
    if result.outcome in CACHEABLE:
        if replacing is not None:  # a resample that failed to produce a result leaves the stored one in place
            keep_replaced(project, replacing)
        record = store.put_action(record, schema=TRIAL_SCHEMA)
        store.clear_attempt(tkey.key)
    else:
        record = store.put_attempt(record, schema=TRIAL_SCHEMA)
    return record  # as stored (redacted): a merged cell's grade and view take it as they would read it back


def _checks_before_cleanup(spec: Spec, case: Case, outcome: str, text: str, files: dict[str, bytes],
                           workspace: str) -> list[dict[str, Any]] | None:
    """A case with a cleanup runs its python checks (caliper's assert) before the cleanup, as caliper does: they
    see what the task left, outside the workspace too (caliper's own example asserts on /tmp/out.txt, which its
    cleanup removes). Their verdicts are the trial's; the grade takes them as they are (grade.py)."""
    early = [check for check in case.checks if check.type == "python"]
    if not case.cleanup or not early or outcome != "completed":
        return None
    from skillmake.run.checks import CheckContext, run_checks

    return run_checks(early, CheckContext(output=text, files=files, workspace=workspace, spec_folder=spec.folder))


def _unchanged_checks(result: AgentResult, tkey: TrialKey, spec: Spec, *, when: str) -> AgentResult:
    """`result`, or an error when a file of the checks the trial runs (before its cleanup, keyed in the run part)
    no longer has the content the key names (`when`: before or while they ran)."""
    if result.outcome != "completed":
        return result
    checks = run_fragment(tkey.run.data).get("checks_before_cleanup") or []
    changed = check_files_changed(checks, spec.folder)
    if not changed:
        return result
    why = Changed(f"the check file {', '.join(changed)} changed {when} the trial's checks ran (its trial key names "
                  "other content)", hint=RERUN_HINT)
    return dataclasses.replace(result, outcome="error", error=why.render())


def _setup(case: Case, workspace: Any, env: dict[str, str], timeout: float) -> AgentResult | None:
    """Run the case's setup command (caliper); a failing setup is an error outcome."""
    if not case.setup:
        return None
    done = process.run(case.setup, cwd=str(workspace), env=env, timeout=timeout, shell=True)
    if done.timed_out:
        return AgentResult(outcome="timeout", output="", error=f"setup timed out after {timeout:g}s")
    if done.error or done.returncode != 0:
        detail = done.error or done.stderr.decode("utf-8", "replace").strip()[-300:]
        return AgentResult(outcome="error", output="", stdout=done.stdout, stderr=done.stderr,
                           exit_code=done.returncode, error=f"setup failed ({done.returncode}): {detail}")
    return None


def _system_prompt(project: Project, spec: Spec, skill: Skill | None, arm: Arm, tkey: TrialKey) -> str | None:
    """Resolved only for the agents that send one (the CLIs read the installed skill themselves): the text the
    key's run fragment holds, never the files as they are now (an AGENTS.md or SKILL.md edited since)."""
    fragment = run_fragment(tkey.run.data)
    if "system_prompt" in fragment:
        value = fragment["system_prompt"]
        return value if isinstance(value, str) else None
    if arm.agent.kind in API_AGENTS:
        return resolve_system_prompt(spec, skill, project.root)
    return spec.system_prompt


def _model(arm: Arm) -> str | None:
    from skillmake.run.keys import resolved_model

    return resolved_model(arm.agent)


def _version(agent: Any, arm: Arm) -> str | None:
    try:
        return agent.version(arm.agent)
    except Exception:
        return None
