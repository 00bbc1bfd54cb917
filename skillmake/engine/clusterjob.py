"""One trial or grade on a cluster worker: the job the submitting run sends, and how a worker carries it out.

A worker never reads the submitting machine's disk. A job names the project files its action reads (the skill's
files, the case's input files, the command agent's program, the check scripts) by path *and digest*; the worker
checks them out of the shared store by content into a folder of its own, rebases the spec's paths onto it, and
runs the ordinary trial or grade code there (trial.execute, grade.execute), so every check a local run makes holds
(each file verified against the key, one execution per key, errors and timeouts never cached). The store is the
project's remote (read-through and write-back, remote.py) in a cache folder of the worker's, or — without a
remote — the submitter's store folder itself, which must then be shared (one machine, NFS).

Each job runs in a process of its own (`python -m skillmake.engine.clusterjob`): it is the run of its trial, so its
supervisors die with it (supervisor.py), it is the subreaper of whatever they leave (reaper.py), and it dies with
the worker (PDEATHSIG). The worker's thread waits on it and ends it when the job's future is cancelled: by the
submitting run when it is interrupted, or by the scheduler when the submitting client goes away (Ctrl-C, a
killed process), so an interrupted run leaves no process on any worker.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from skillmake.core.errors import SkillmakeError
from skillmake.run.keys import TrialKey
from skillmake.spec.model import Arm, Case, Spec

WORKER_DIR_VAR = "SKILLMAKE_WORKER_DIR"  # a worker's cache (store copy, checkouts); default ~/.cache/skillmake/worker
STOP_GRACE_S = 5.0  # a job told to stop has this long to stop its trial's processes before it is killed
POLL_S = 0.1


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """What a worker needs to run one action, all of it picklable and none of it a path it must read."""

    kind: str  # "trial" | "grade"
    run_id: str
    root: str  # the submitting project's root: the spec's paths are rebased from it onto the worker's checkout
    files: dict[str, str]  # path relative to root → digest: the project files the action reads, from the store
    remote: str | None  # the shared store's URL; None: `store` is a folder the worker shares
    store: str
    spec: Spec
    case: Case
    arm: Arm
    k: int
    tkey: TrialKey
    trial: dict[str, Any] | None = None  # a grade's trial record
    resample: bool = False
    limits: dict[str, Any] | None = None  # the cluster-wide rate limit (cluster.py's Limits)


class JobFailed(SkillmakeError):
    """The job's process could not run the action (a crash, a killed worker): nothing was recorded."""


# --- in the worker (a thread of the engine's worker process) ---------------------------------------------------


def execute(job: Job) -> dict[str, Any]:
    """Run `job` in a process of its own; its result ({"record", "ran", "judge_calls"}). Ends the process when
    the job's future is cancelled (JobFailed then: the submitter has stopped waiting anyway)."""
    cancelled = _cancel_check()
    env = dict(os.environ)
    env.pop("SKILLMAKE_RUN_PID", None)  # the job is a run of its own (process.prepare_run)
    proc = subprocess.Popen([sys.executable, "-m", "skillmake.engine.clusterjob", str(os.getpid())],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [threading.Thread(target=lambda s=s, b=b: b.append(s.read()), daemon=True)
               for s, b in ((proc.stdout, out), (proc.stderr, err))]
    for reader in readers:
        reader.start()
    try:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(pickle.dumps(job))
            proc.stdin.close()
        while proc.poll() is None:
            if cancelled():
                _stop(proc)
                raise JobFailed("the job was cancelled: its run was interrupted")
            time.sleep(POLL_S)
    except BaseException:
        _stop(proc)
        raise
    for reader in readers:
        reader.join()
    if proc.returncode != 0:
        tail = b"".join(err).decode("utf-8", "replace").strip().splitlines()[-5:]
        raise JobFailed(f"the {job.kind} job on worker {os.uname().nodename} (pid {os.getpid()}) exited with "
                        f"{proc.returncode}: {' / '.join(tail) or 'no output'}",
                        hint="the worker needs skillmake installed (the same version as the submitting run)")
    result: dict[str, Any] = orjson.loads(b"".join(out))
    return result


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the job (it stops its trial's supervisors), then SIGKILL it and its session if it lingers."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(OSError):
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _cancel_check() -> Callable[[], bool]:
    """Whether the future of the task this thread runs was cancelled (the worker keeps running a cancelled task:
    the engine cannot stop a thread, so the task looks at its own state)."""
    try:
        from distributed import get_worker
        from distributed.worker import thread_state

        worker = get_worker()
        key = thread_state.key
    except (ImportError, ValueError, AttributeError):  # not on a dask worker (a test calling it directly)
        return lambda: False

    def cancelled() -> bool:
        task = worker.state.tasks.get(key)
        return task is None or task.state in ("cancelled", "released", "forgotten")

    return cancelled


# --- in the job's own process ----------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    from skillmake.run import process, supervisor

    parent = int(argv[1]) if len(argv) > 1 else 0
    prctl = supervisor.prctl()
    if prctl is not None:
        prctl(supervisor.PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if parent and os.getppid() != parent:  # the worker died before PDEATHSIG was set
        return 3
    job: Job = pickle.loads(sys.stdin.buffer.read())
    os.environ["SKILLMAKE_RUN_ID"] = job.run_id  # records say which run made them: the submitting one
    process.install_interrupt_handlers(raise_keyboard_interrupt=True)
    from skillmake.core import interrupts

    interrupts.arm()
    try:
        result = perform(job)
    except KeyboardInterrupt:
        return 130
    except SkillmakeError as exc:  # said to the submitting run through the worker (execute's JobFailed)
        sys.stderr.write(exc.render() + "\n")
        return 2
    sys.stdout.buffer.write(orjson.dumps(result))
    sys.stdout.buffer.flush()
    return 0


def perform(job: Job) -> dict[str, Any]:
    """Check the job's files out of the store, run its action there, and say what it recorded."""
    from skillmake.run import grade as grading
    from skillmake.run import trial as trials
    from skillmake.run.keys import KeyMaker
    from skillmake.run.project import Project

    cache = worker_dir()
    store = open_store(job, cache)
    checkout = check_out(job, store, cache)
    spec, case, arm = rebase((job.spec, job.case, job.arm), job.root, str(checkout))
    project = Project(root=str(checkout), store=store, state_dir=cache / "state", keys=KeyMaker(str(checkout)))
    if job.limits:
        from skillmake.engine import clusterlimit

        clusterlimit.install(job.limits)
    if job.kind == "trial":
        run = trials.execute(project, spec, case, arm, job.k, job.tkey, resample=job.resample)
        record, ran, calls = run.record, run.ran, 0
    else:
        assert job.trial is not None
        if store.remote is not None:  # the trial's outputs and kept workspace, for the checks
            from skillmake.store.objects import TRIAL_SCHEMA

            store.remote.forget_absent(job.trial["key"])
            store.get_action(job.trial["key"], schema=TRIAL_SCHEMA)
        grade = grading.execute(project, spec, case, arm, job.k, job.trial, resample=job.resample)
        record, ran, calls = grade.record, grade.ran, grade.judge_calls
    if store.remote is not None and record.get("outcome") not in (trials.CACHEABLE | grading.CACHEABLE):
        from skillmake.store.objects import named_objects

        store.remote.send_objects(named_objects(record) if job.kind == "trial" else [], store)
    return {"record": record, "ran": ran, "judge_calls": calls}


def worker_dir() -> Path:
    folder = Path(os.environ.get(WORKER_DIR_VAR) or Path.home() / ".cache" / "skillmake" / "worker")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_store(job: Job, cache: Path) -> Any:
    from skillmake.store.objects import Store
    from skillmake.store.remote import Remote

    if job.remote is None:
        if not os.path.isdir(os.path.join(job.store, "objects")):
            raise JobFailed(f"the store folder {job.store} is not on worker {os.uname().nodename}",
                            hint="set a remote every worker can reach (`remote` in the config, or --remote URL), or "
                                 "share the store folder with the workers")
        return Store(job.store)
    store = Store(cache / "stores" / hashlib.sha256(job.remote.encode()).hexdigest()[:16])
    store.remote = Remote(job.remote)
    return store


def check_out(job: Job, store: Any, cache: Path) -> Path:
    """The job's files, checked out of the store under a folder named by their digests (shared by every job that
    reads the same files; written once, then only read)."""
    from skillmake.core import atomic

    name = hashlib.sha256(orjson.dumps(job.files, option=orjson.OPT_SORT_KEYS)).hexdigest()[:24]
    folder = cache / "checkouts" / name
    if (folder / ".complete").exists():
        return folder
    missing = [d for d in job.files.values() if not store.has(d)]
    if missing and store.remote is not None:
        store.remote.fetch_objects(missing, store)
    for rel, digest in sorted(job.files.items()):
        data = store.get(digest)
        if data is None:  # the trial's staging says which file, and the record is an error (never cached)
            continue
        target = folder / rel
        if not os.path.normpath(target).startswith(str(folder) + os.sep):
            continue
        atomic.write_bytes(target, data, durable=False)
        if _executable(job, rel):
            os.chmod(target, 0o755)
    atomic.write_bytes(folder / ".complete", b"", durable=False)
    return folder


def _executable(job: Job, rel: str) -> bool:
    """Program files of a command agent keep their execute bit (a `./agent.sh` must still run)."""
    agent = job.arm.agent
    return isinstance(agent.command, tuple) and any(
        os.path.normpath(os.path.join(os.path.relpath(job.spec.folder, job.root), a)) == os.path.normpath(rel)
        for a in agent.command)


def rebase(value: Any, old: str, new: str) -> Any:
    """`value` with every path under `old` moved under `new` (frozen dataclasses, tuples, lists, dicts, strings)."""
    if isinstance(value, str):
        if value == old:
            return new
        return new + value[len(old):] if value.startswith(old + os.sep) else value
    if isinstance(value, tuple):
        return tuple(rebase(v, old, new) for v in value)
    if isinstance(value, list):
        return [rebase(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: rebase(v, old, new) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if isinstance(value, TrialKey):
            return value
        changes = {}
        for f in dataclasses.fields(value):
            current = getattr(value, f.name)
            moved = rebase(current, old, new)
            if moved is not current:
                changes[f.name] = moved
        return dataclasses.replace(value, **changes) if changes else value
    return value


if __name__ == "__main__":
    sys.exit(main(sys.argv))
