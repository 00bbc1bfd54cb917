"""Batch judging: the judge requests of every stale grade of a run sent as one provider batch, at half price.

How it fits the task graph: when batching is on, one `batch` task runs after the run's trials and before its grades.
It asks each stale grade with a model judge what its judges would ask (`requests_of`), sends every request no stored
batch answers as one batch per provider and model (`settle`), polls it until it ends, and keeps the results in
`.skillmake/batches/`. The grade tasks then run as always (`grade.execute`), except that their judges' questions are
answered from those results (`answer`) instead of by a call: each verdict is read and recorded by the very code of a
synchronous grade, under the same grade key, so a later synchronous run reuses it and the other way round.

A batch's id is written to `.skillmake/batches/` as soon as the provider returns it: a run stopped by Ctrl-C or
SIGKILL while the batch is processed leaves it there, and the next run that needs any of its requests polls that
batch instead of sending (and paying for) them again. A request the batch did not answer (errored, expired,
canceled) makes its grade a judge_error, never cached: the next run asks for it in a new batch.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic
from skillmake.core.canonical import digest_json
from skillmake.run import process
from skillmake.run.judges.base import Endpoint, JudgeCallError, JudgeRequest, ProviderReply
from skillmake.run.project import Project
from skillmake.spec.model import Case, Spec

ENV = "SKILLMAKE_BATCH"  # --batch sets it to 1 (workers inherit it); 0 turns off judge.batch of specs and config
POLL_ENV = "SKILLMAKE_BATCH_POLL"  # seconds between polls (the first poll; later ones double, up to POLL_MAX_S)
POLL_FIRST_S, POLL_MAX_S = 5.0, 60.0
KEEP_S = 29 * 24 * 3600  # Anthropic keeps a batch's results 29 days; an older batch file is of no use
BATCHABLE = ("anthropic", "openai")  # the CLI judges (claude-code, codex) have no batch API: they stay synchronous
# One batch holds at most this much (Anthropic: 100,000 requests or 256 MB; OpenAI: 50,000 requests, a 200 MB file):
# a larger run is sent as several batches, well under both.
MAX_REQUESTS, MAX_BYTES = 10_000, 100_000_000


def wanted(spec: Spec, config_judge: Mapping[str, Any] | None, *, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the grades of `spec` are judged in a batch: --batch / $SKILLMAKE_BATCH (1 or 0), else the spec's
    judge.batch, else the project config's [judge] batch, else no."""
    env = os.environ if environ is None else environ
    given = env.get(ENV, "").strip().lower()
    if given:
        return given not in ("0", "false", "no", "off")
    if spec.judge.batch is not None:
        return spec.judge.batch
    return bool((config_judge or {}).get("batch", False))


def batched(spec: Spec, case: Case, config_judge: Mapping[str, Any] | None) -> bool:
    """Whether this case's judges are answered from a batch (batching on, and a provider with a batch API)."""
    if not case.has_judge or not wanted(spec, config_judge):
        return False
    from skillmake.run.judges.resolve import applicable, choose

    return bool(applicable(case)) and choose(spec, case).provider in BATCHABLE


def custom_id(request: JudgeRequest, endpoint: Endpoint) -> str:
    """A request's id in a batch: the digest of what is sent (64 characters of [a-z0-9-], as both APIs accept), so
    a stored answer is only ever used for the identical question."""
    body = {"provider": endpoint.provider, "model": endpoint.model, "system": request.system, "user": request.user,
            "schema": request.schema, "max_tokens": request.max_tokens, "temperature": request.temperature,
            "shared": request.shared}
    return "sm-" + digest_json(body).removeprefix("sha256:")[:61]


@dataclass(frozen=True, slots=True, kw_only=True)
class Wanted:
    endpoint: Endpoint
    request: JudgeRequest


def requests_of(spec: Spec, case: Case, *, output: str, files: Mapping[str, bytes]) -> dict[str, Wanted]:
    """What the judges of `case` would ask about one trial's output, by custom id (empty: nothing to batch)."""
    from skillmake.run.judges.run import judge_requests

    asked = judge_requests(spec, case, output=output, files=files)
    if asked is None or asked[0].provider not in BATCHABLE:
        return {}
    target, requests = asked
    return {custom_id(request, target): Wanted(endpoint=target, request=request) for _, request in requests}


# --- the batch files ----------------------------------------------------------------------------------------------

def folder(project: Project) -> Path:
    return project.state_dir / "batches"


def _path(project: Project, provider: str, batch_id: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in batch_id)
    return folder(project) / f"{provider}-{safe}.json"


def _write(project: Project, data: dict[str, Any]) -> None:
    folder(project).mkdir(parents=True, exist_ok=True)
    atomic.write_bytes(_path(project, data["provider"], data["id"]), orjson.dumps(data))


def stored(project: Project) -> list[dict[str, Any]]:
    """Every batch file, oldest first; an unreadable one is left out (a miss, never a crash)."""
    out = []
    try:
        names = sorted(os.listdir(folder(project)))
    except OSError:
        return []
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            data = orjson.loads((folder(project) / name).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if isinstance(data, dict) and {"provider", "id", "ids", "status"} <= data.keys():
            out.append(data)
    return sorted(out, key=lambda d: str(d.get("created", "")))


# --- a run's batches ----------------------------------------------------------------------------------------------

@dataclass(slots=True, kw_only=True)
class Summary:
    """What `settle` did: batches created and resumed, requests sent, answered from stored results, not answered."""

    created: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    sent: int = 0
    reused: int = 0
    failed: int = 0


def settle(project: Project, wanted_requests: Mapping[str, Wanted], *, say: Callable[[str], None],
           poll_s: float | None = None) -> Summary:
    """Make sure every wanted request has a result in `.skillmake/batches/`: resume the stored batches that hold any
    of them, send the rest as one new batch per provider and model, and wait for them all to end. Raises
    BatchError when a batch cannot be sent or read (the run's batch task fails with it)."""
    from skillmake.run.judges import batch_providers

    summary = Summary()
    files = stored(project)
    _forget_useless(project, files, wanted_requests)
    files = stored(project)
    answered = {cid for data in files for cid, result in (data.get("results") or {}).items() if "message" in result}
    summary.reused = len(answered & wanted_requests.keys())
    endpoints = _endpoints(wanted_requests)
    for data in files:
        if data["status"] == "open" and set(data["ids"]) & wanted_requests.keys():
            target = endpoints.get((data["provider"], data.get("model", "")))
            if target is None:
                continue
            say(f"batch {data['id']}: resuming the {len(data['ids'])} judge requests sent by an earlier run")
            try:
                _wait(project, data, target, say=say, poll_s=poll_s)
            except batch_providers.BatchGone:  # another account or base URL: waiting on it would fail every run
                say(f"batch {data['id']}: {data['provider']} does not know this batch (another key or base URL?); "
                    "its requests are sent again")
                _path(project, data["provider"], data["id"]).unlink(missing_ok=True)
                continue
            summary.resumed.append(data["id"])
    in_flight = {cid for data in stored(project) for cid in data["ids"] if data["status"] == "open"}
    answered = {cid for data in stored(project) for cid, result in (data.get("results") or {}).items()
                if "message" in result}
    todo: dict[tuple[str, str], list[tuple[str, JudgeRequest]]] = {}
    for cid, want in sorted(wanted_requests.items()):
        if cid not in answered and cid not in in_flight:
            todo.setdefault((want.endpoint.provider, want.endpoint.model), []).append((cid, want.request))
    # Every batch is sent (and its id stored) before any is waited for: they are processed side by side.
    sent = [(_send(project, endpoints[key], entries, summary, say=say), endpoints[key])
            for key, group in sorted(todo.items()) for entries in _chunks(group)]
    for data, target in sent:
        _wait(project, data, target, say=say, poll_s=poll_s)
    done = {cid for data in stored(project) for cid, result in (data.get("results") or {}).items()
            if "message" in result}
    summary.failed = len(wanted_requests.keys() - done)
    _CACHE.clear()
    return summary


def _chunks(entries: list[tuple[str, JudgeRequest]]) -> Iterable[list[tuple[str, JudgeRequest]]]:
    """`entries` cut into batches within MAX_REQUESTS and (roughly: the prompt texts) MAX_BYTES."""
    chunk: list[tuple[str, JudgeRequest]] = []
    size = 0
    for entry in entries:
        request = entry[1]
        weight = len(request.system.encode()) + len(request.user.encode()) + 4096  # the schema, tool, envelope
        if chunk and (len(chunk) >= MAX_REQUESTS or size + weight > MAX_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(entry)
        size += weight
    if chunk:
        yield chunk


def _send(project: Project, target: Endpoint, entries: list[tuple[str, JudgeRequest]], summary: Summary, *,
          say: Callable[[str], None]) -> dict[str, Any]:
    """Create one batch of `entries` and store its id at once; its stored file."""
    from skillmake.run.judges import batch_providers

    provider, model = target.provider, target.model
    batch_id = batch_providers.submit(target, entries)
    data = {"schema": "skillmake/judge-batch@1", "provider": provider, "model": model, "id": batch_id,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "status": "open",
            "ids": [cid for cid, _ in entries], "results": {}}
    _write(project, data)  # at once: an interrupted run's next run resumes this batch rather than paying again
    summary.created.append(batch_id)
    summary.sent += len(entries)
    say(f"batch {batch_id}: {len(entries)} judge requests sent to {provider} ({model}) at the batch price")
    return data


def _endpoints(wanted_requests: Mapping[str, Wanted]) -> dict[tuple[str, str], Endpoint]:
    return {(w.endpoint.provider, w.endpoint.model): w.endpoint for w in wanted_requests.values()}


def _wait(project: Project, data: dict[str, Any], target: Endpoint, *, say: Callable[[str], None],
          poll_s: float | None) -> None:
    """Poll the batch until it ends, saying how far it is when that changes; then store its results."""
    from skillmake.run.judges import batch_providers

    first = poll_s if poll_s is not None else _poll_setting()
    delay, shown = first, None
    while True:
        state = batch_providers.progress(target, data["id"])
        if (state.done, state.state) != shown:
            shown = (state.done, state.state)
            say(f"batch {data['id']}: {state.done}/{state.total} done ({state.state})")
        if state.ended:
            break
        _sleep(delay)
        delay = min(delay * 2, max(first, POLL_MAX_S))
    results = batch_providers.results(target, data["id"])
    for cid in data["ids"]:
        results.setdefault(cid, {"error": f"the batch ended ({state.state}) without a result for this request"})
    data.update(status="ended", results={cid: results[cid] for cid in data["ids"]},
                ended=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
    _write(project, data)
    good = sum(1 for r in data["results"].values() if "message" in r)
    bad = len(data["ids"]) - good
    say(f"batch {data['id']}: ended, {good} answered" + (f", {bad} not (judge_error; asked again next run)"
                                                          if bad else ""))


def _poll_setting() -> float:
    try:
        value = float(os.environ.get(POLL_ENV, "") or POLL_FIRST_S)
    except ValueError:
        value = POLL_FIRST_S
    return max(0.0, value)


def _sleep(seconds: float) -> None:
    """Wait between polls in short steps, leaving at once when the run is interrupted (the batch stays stored)."""
    end = time.monotonic() + seconds
    while True:
        process.raise_if_interrupted()
        left = end - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 0.2))


def _forget_useless(project: Project, files: Iterable[dict[str, Any]], wanted_requests: Mapping[str, Wanted]) -> None:
    """Delete the batch files nothing needs any more: ended ones without an answer to a request this run asks, and
    any past the providers' 29 days."""
    now = dt.datetime.now(dt.UTC)
    for data in files:
        try:
            age = (now - dt.datetime.fromisoformat(str(data.get("created")))).total_seconds()
        except ValueError:
            age = KEEP_S + 1
        useful = any("message" in (data.get("results") or {}).get(cid, {}) for cid in wanted_requests)
        if age > KEEP_S or (data["status"] == "ended" and not useful):
            _path(project, data["provider"], data["id"]).unlink(missing_ok=True)


# --- answering the grades' judges ---------------------------------------------------------------------------------

_CACHE: dict[tuple[str, int, int], dict[str, Any]] = {}
_CACHE_LOCK = threading.Lock()


def answer(project: Project) -> Callable[[JudgeRequest, Endpoint], ProviderReply]:
    """The judges' call for a batched grade: the stored result of the identical request, read as a synchronous
    reply would be. No result (the batch task did not run, or its batch could not answer) is a JudgeCallError, so
    the grade is a judge_error, asked again next run; never a synchronous call."""
    from skillmake.run.judges import batch_providers

    def call(request: JudgeRequest, endpoint: Endpoint) -> ProviderReply:
        cid = custom_id(request, endpoint)
        result = _lookup(project, cid)
        if result is None:
            raise JudgeCallError("no batch holds this judge request (the batch task did not send it); it is judged "
                                 "again on the next run", requests=0)
        return batch_providers.reply(result, request, endpoint)

    return call


def _lookup(project: Project, cid: str) -> dict[str, Any] | None:
    """The newest stored answer to `cid`, else its newest error; each batch file read once per version."""
    found: dict[str, Any] | None = None
    for path in sorted(folder(project).glob("*.json")) if folder(project).is_dir() else ():
        try:
            stat = path.stat()
        except OSError:
            continue
        memo = (str(path), stat.st_mtime_ns, stat.st_size)
        with _CACHE_LOCK:
            data = _CACHE.get(memo)
        if data is None:
            try:
                data = orjson.loads(path.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue
            with _CACHE_LOCK:
                _CACHE[memo] = data
        result = ((data or {}).get("results") or {}).get(cid)
        if result is not None and (found is None or "message" in result):
            found = result
    return found
