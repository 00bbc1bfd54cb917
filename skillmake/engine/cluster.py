"""Trials and grades on a Dask distributed cluster (`--executor dask://HOST:PORT`): doit plans, the cluster runs.

doit stays the planner (staleness, the graph, reports): a trial or grade task that would run here is sent instead,
as a job (clusterjob.py), to a worker of the cluster, and the task waits for its result. What reaches the worker is
the action's inputs by content: the submitting run puts the project files the action reads into the store (and the
remote, when the project has one) and names them by digest; the worker checks them out of the store, never from
this machine's disk. The record lands in the shared store (the remote, read back here through it; or the store
folder itself when the cluster shares it), and errors and timeouts come back as attempts, never cached.

An interrupted run cancels the futures it waits on (and a client that goes away has its futures released by the
scheduler): each job's worker thread sees its task cancelled and ends the job's process, which stops its trial's
supervisors. distributed is imported here and in clusterjob.py only, when an executor is set.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from typing import Any

from skillmake.core import interrupts
from skillmake.core.errors import SkillmakeError, UsageError
from skillmake.core.paths import within
from skillmake.engine.clusterjob import Job, JobFailed
from skillmake.engine.plan import Item
from skillmake.run import grade as grading
from skillmake.run import process
from skillmake.run import trial as trials
from skillmake.run.project import Project, current_run_id
from skillmake.run.staging import run_fragment
from skillmake.store.objects import GRADE_SCHEMA, TRIAL_SCHEMA, named_objects
from skillmake.store.remote import remote_of

EXECUTOR_VAR = "SKILLMAKE_EXECUTOR"  # `--executor URL` sets it; beats the config's `executor`
WAIT_SLICE_S = 0.2  # how often a task waiting on its job looks for an interrupt


class ClusterError(SkillmakeError):
    """The cluster cannot be used, or lost a job: the task fails, nothing is recorded."""


def configured(project: Project | None = None) -> str | None:
    """The executor URL of this run: $SKILLMAKE_EXECUTOR, else the config's `executor`; None runs tasks here.
    `threads` (or empty) is the local default."""
    url = (os.environ.get(EXECUTOR_VAR) or "").strip()
    if not url and project is not None and project.config is not None:
        url = str(getattr(project.config, "executor", None) or "")
    return None if url in ("", "threads", "local") else url


def address(url: str) -> str:
    """The scheduler address of an executor URL: dask://HOST:PORT (or tcp://…) → tcp://HOST:PORT."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("dask", "tcp", "tls") or not rest:
        raise UsageError(f"executor {url!r} is not a Dask scheduler URL",
                         hint="use dask://HOST:PORT (a `dask scheduler`'s address), or threads to run here")
    return f"{'tls' if scheme == 'tls' else 'tcp'}://{rest}"


_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def client(url: str) -> Any:
    """One Dask client per scheduler per process, connected on first use."""
    target = address(url)
    with _clients_lock:
        found = _clients.get(target)
        if found is not None:
            return found
        try:
            from distributed import Client
        except ImportError:
            raise ClusterError("--executor needs Dask distributed: pip install 'skillmake[cluster]'") from None
        try:
            made = Client(target, timeout=10, set_as_default=False)
        except OSError as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {target} ({exc})",
                               hint="start one (`dask scheduler`, then `dask worker HOST:PORT` on each machine), "
                                    "or leave --executor out to run here") from None
        _clients[target] = made
        return made


@atexit.register
def _close_clients() -> None:
    """A client that closes releases its futures: the scheduler cancels their tasks and the workers end them."""
    with _clients_lock:
        for made in _clients.values():
            try:
                made.close(timeout=5)
            except Exception:  # closing at exit: nothing left to tell anyone
                pass
        _clients.clear()


# --- what a job reads, sent to the store by content ------------------------------------------------------------


_sent: set[str] = set()  # digests this process has put into the shared store already
_sent_lock = threading.Lock()


def job_files(project: Project, item: Item, kind: str) -> dict[str, str]:
    """The project files a trial (or grade) of `item` reads, as path relative to the root → the digest its key
    names: the skill's files (arms that install it), the input files, the command agent's program files, and the
    files of its checks (scripts, schemas)."""
    spec, case = item.spec, item.case
    found: dict[str, str] = {}

    def add(path: str, digest: str | None) -> None:
        if not digest:
            return
        full = os.path.abspath(path)
        if not within(full, project.root):
            raise ClusterError(f"{path} is outside the project root {project.root}: a cluster worker gets only "
                               "the project's files", hint="move it inside the project, or run without --executor")
        found[os.path.relpath(full, project.root)] = digest

    if kind == "trial":
        if item.tkey.skill is not None:
            import orjson

            manifest = orjson.loads(item.tkey.skill.data)
            for rel, digest in (manifest.get("files") or {}).items():
                add(os.path.join(spec.skill.path, *rel.split("/")) if manifest.get("kind") == "folder"
                    else spec.skill.path, digest)
        fragment = run_fragment(item.tkey.run.data)
        inputs = fragment.get("input_files") or {}
        for f in case.input_files:
            add(f.source, inputs.get(f.dest))
        for arg, digest in (run_fragment(item.tkey.agent.data).get("program_files") or {}).items():
            add(os.path.join(spec.folder, arg), digest)
        checks = fragment.get("checks_before_cleanup") or []
    else:
        from skillmake.run.keys import grade_part

        checks = run_fragment(grade_part(spec, case).data).get("checks") or []
    for raw in checks:
        for name in ("script", "schema_file"):
            if isinstance(raw, dict) and raw.get(f"{name}_digest"):
                add(os.path.join(spec.folder, raw[name]), raw[f"{name}_digest"])
    return found


def send_files(project: Project, files: dict[str, str]) -> None:
    """Put the files into the store (each checked against its digest: a file edited since planning is left out,
    and the worker's staging records the trial as an error, never cached) and up to the remote."""
    store = project.store
    fresh = []
    for rel, digest in files.items():
        with _sent_lock:
            if digest in _sent:
                continue
        if not store.has(digest):
            try:
                with open(os.path.join(project.root, rel), "rb") as f:
                    data = f.read()
            except OSError:
                continue
            if store.put(data) != digest:
                continue
        fresh.append(digest)
    remote = remote_of(store)
    if remote is not None and fresh:
        unsent = set(remote.send_objects(fresh, store))
        fresh = [d for d in fresh if d not in unsent]
    with _sent_lock:
        _sent.update(fresh)


def make_job(project: Project, item: Item, kind: str, *, resample: bool,
             trial: dict[str, Any] | None = None) -> Job:
    files = job_files(project, item, kind)
    send_files(project, files)
    remote = remote_of(project.store)
    return Job(kind=kind, run_id=current_run_id(), root=project.root, files=files,
               remote=remote.url if remote is not None else None, store=str(project.store.root),
               spec=item.spec, case=item.case, arm=item.arm, k=item.k, tkey=item.tkey, trial=trial,
               resample=resample, limits=_limits(project))


def _limits(project: Project) -> dict[str, Any] | None:
    """What a job needs to join the cluster-wide cap (clusterlimit.py): the scheduler and the cap (the run's
    max_connections)."""
    from skillmake.run import ratelimit
    from skillmake.spec import overrides

    url = configured(project)
    if url is None:
        return None
    cap = overrides.resolve("max_connections", project=getattr(project.config, "max_connections", None)).value
    return {"address": address(url), "max_connections": int(cap or ratelimit.DEFAULT_MAX_CONNECTIONS)}


# --- running a job and taking its record back ------------------------------------------------------------------


def submit(url: str, job: Job) -> dict[str, Any]:
    """Run `job` on the cluster and wait for its result; an interrupt cancels it (process.Interrupted)."""
    from skillmake.engine import clusterjob

    made = client(url)
    future = made.submit(clusterjob.execute, job, pure=False,
                         key=f"skillmake-{job.kind}-{job.tkey.key[7:23]}-{os.urandom(4).hex()}")
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    try:
        # Waiting on an event, not on future.result(timeout=…): distributed's timed wait can fail on its own
        # (an UnboundLocalError when the timeout and the result race).
        while not done.wait(WAIT_SLICE_S):
            if interrupts.interrupted():
                raise process.Interrupted("the run was interrupted")
        try:
            result: dict[str, Any] = future.result()
        except JobFailed:
            raise
        except (OSError, ConnectionError) as exc:
            raise ClusterError(f"the Dask scheduler went away while a {job.kind} ran ({exc})",
                               hint="nothing was recorded for it; the next run runs it again") from None
        except Exception as exc:
            if type(exc).__name__ in ("CancelledError", "FutureCancelledError", "KilledWorker"):
                raise ClusterError(f"the cluster gave up on the {job.kind} job ({type(exc).__name__}: {exc})",
                                   hint="nothing was recorded for it; the next run runs it again") from None
            raise
        return result
    except BaseException:
        future.cancel()
        raise


def _take(project: Project, record: dict[str, Any], *, schema: str, cacheable: frozenset[str]) -> dict[str, Any]:
    """The job's record, in this project's store: a result read back from the shared store (verified, with its
    objects); an error-class attempt kept as one (with what objects came)."""
    store = project.store
    key = record["key"]
    if record["outcome"] in cacheable:
        remote = remote_of(store)
        if remote is not None:
            remote.forget_absent(key)
        local = store.get_action(key, schema=schema)
        if local is not None and local.get("run_id") != record.get("run_id") and store.remote is not None:
            # A resample: the worker's fresh sample replaced this stored one in the remote (the caller keeps the
            # old one in replaced/); drop the local entry so the fresh one comes down.
            with contextlib.suppress(OSError):
                os.unlink(store.action_path(key))
            local = store.get_action(key, schema=schema)
        if local is None:
            raise ClusterError(f"the worker's record of {key[:19]}… is not in the shared store",
                               hint="set a remote every worker can reach (`remote` in the config, or --remote), "
                                    "or share the store folder; nothing was recorded here")
        return local
    remote = remote_of(store)
    if remote is not None and schema == TRIAL_SCHEMA:
        remote.fetch_objects(named_objects(record), store)
    store.put_attempt(record, schema=schema)
    return record


def execute_trial(project: Project, item: Item, url: str, *, resample: bool = False) -> trials.TrialRun:
    """trial.execute, on the cluster: the cached record when it fits, else the worker's."""
    timeout = trials.timeout_of(item.spec, item.case)
    hit = None if resample else trials.cached(project, item.tkey, timeout)
    if hit is not None:
        return trials.TrialRun(record=hit, ran=False)
    for piece in item.tkey.parts():  # the key's parts, readable here by `explain`
        project.store.put(piece.data)
    replacing = project.store.get_action(item.tkey.key, schema=TRIAL_SCHEMA) if resample else None
    try:
        result = submit(url, make_job(project, item, "trial", resample=resample))
    except JobFailed as exc:
        raise ClusterError(exc.message, hint=exc.hint) from None
    record = _take(project, result["record"], schema=TRIAL_SCHEMA, cacheable=trials.CACHEABLE)
    if replacing is not None and record["outcome"] in trials.CACHEABLE and replacing.get("run_id") != record.get(
            "run_id"):
        trials.keep_replaced(project, replacing)
    return trials.TrialRun(record=record, ran=bool(result["ran"]))


def execute_grade(project: Project, item: Item, trial_record: dict[str, Any], url: str, *,
                  resample: bool = False) -> grading.GradeRun:
    """grade.execute, on the cluster when it calls a judge or runs a check's program; else here: a trial with no
    result (nothing runs for it) and checks made in process (regex, contains, schemas…) cost less than sending."""
    spec, case = item.spec, item.case
    if trial_record["outcome"] not in grading.TRIAL_RESULTS or not remote_grade(case):
        return grading.execute(project, spec, case, item.arm, item.k, trial_record, resample=resample)
    hit = grading.cached(project, spec, case, trial_record)
    run_id = current_run_id()
    fresh_trial = resample and trial_record.get("run_id") == run_id
    if hit is not None and not (fresh_trial and hit.get("run_id") != run_id):
        return grading.GradeRun(record=hit, ran=False)
    remote = remote_of(project.store)
    if remote is not None:  # the worker reads the trial's outputs through the remote
        remote.push([trial_record], project.store, skip_present=True)
    try:
        result = submit(url, make_job(project, item, "grade", resample=resample, trial=trial_record))
    except JobFailed as exc:
        raise ClusterError(exc.message, hint=exc.hint) from None
    record = _take(project, result["record"], schema=GRADE_SCHEMA, cacheable=grading.CACHEABLE)
    return grading.GradeRun(record=record, ran=bool(result["ran"]), judge_calls=int(result.get("judge_calls") or 0))


def remote_grade(case: Any) -> bool:
    """Whether a grade of `case` is worth a job: it calls a judge, or runs a python check (a program)."""
    return bool(case.has_judge) or any(check.type == "python" for check in case.checks)


def wait_for_workers(url: str, n: int, *, timeout: float = 30.0) -> None:
    """Block until the cluster has `n` workers (tests and the bench start theirs just before)."""
    deadline = time.monotonic() + timeout
    made = client(url)
    made.wait_for_workers(n, timeout=max(1.0, deadline - time.monotonic()))
