"""Trials and grades on a real Dask cluster (skillmake/engine/cluster.py): a scheduler and 2 worker processes on
127.0.0.1, started by the fixture with their own HOME and folder, and stopped by PID (tests/dask_cluster.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.dask_cluster import DaskCluster, dask_cluster
from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.remote_server import S3Server, s3_fixture  # noqa: F401

from .project import Project

AGENT = r'''
import os, sys
from pathlib import Path
prompt = sys.stdin.read().strip()
if "broken" in prompt:
    sys.exit("this agent cannot do that")
if "slow" in prompt:
    import time
    time.sleep(30)
Path("out.txt").write_text(prompt + " " + os.environ["SKILLMAKE_ARM"] + " " + os.environ["SKILLMAKE_TRIAL"] + "\n")
body = (Path(os.environ["SKILLMAKE_SKILL"]) / "SKILL.md").read_text() if os.environ["SKILLMAKE_SKILL"] else ""
extra = Path("data.txt").read_text().strip() if Path("data.txt").exists() else ""
print("HELLO " + prompt.upper() + (" LOUD" if "LOUD" in body else "") + " " + extra + " ["
      + os.environ["SKILLMAKE_ARM"] + " " + os.environ["SKILLMAKE_TRIAL"] + "]")
'''

SPEC = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
trials: 1
baseline: true
judge: {provider: anthropic, model: claude-sonnet-4-6}
cases:
  - {id: loud, prompt: say hi, input_files: [data.txt], checks: [{type: contains, needle: HELLO}]}
  - {id: warm, prompt: say bye, rubric: Is the farewell warm?, output_files: [out.txt]}
  - {id: broken, prompt: broken, checks: [{type: contains, needle: HELLO}]}
  - {id: slow, prompt: slow, timeout: 1, checks: [{type: contains, needle: HELLO}]}
"""


def _judge(request: Recorded) -> Reply:
    return Reply.tool_use("record_verdict", {"score": 4, "reason": "warm enough"})


class _Peak:
    """The most requests the fake API had in hand at once (each held `hold` seconds)."""

    def __init__(self, hold: float) -> None:
        self.hold = hold
        self.now = 0
        self.peak = 0
        self.lock = threading.Lock()

    def __call__(self, request: Recorded) -> Reply:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(self.hold)
        with self.lock:
            self.now -= 1
        return Reply.text("hello from the model")


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        fake.script = _judge
        yield fake


@pytest.fixture(scope="module")
def cluster(api: FakeAPI, s3: S3Server) -> Iterator[DaskCluster]:
    with dask_cluster(2, nthreads=4, env={**api.anthropic_env(), **s3.env()}) as made:
        yield made


def _project(root: Path) -> Project:
    p = Project.empty(root)
    p.write("agent.py", AGENT)
    p.write("skills/s/SKILL.md", "---\nname: s\ndescription: d\n---\nAnswer LOUD.\n")
    p.write("data.txt", "from the fixture\n")
    p.write("t.eval.yaml", SPEC)
    return p


def _records(store: Path) -> dict[str, dict[str, Any]]:
    """key → what a record says of its result (never when or by which run it was made)."""
    out = {}
    for path in sorted((store / "actions").glob("*/*.json")):
        record = orjson.loads(path.read_bytes())
        if record["kind"] == "trial":
            out[record["key"]] = {"outcome": record["outcome"], "outputs": record["outputs"],
                                  "workspace": record["workspace"], "labels": record["labels"]}
        else:
            out[record["key"]] = {"outcome": record["outcome"], "trial": record["trial_key"],
                                  "expectations": [(e["text"], e["passed"]) for e in record["expectations"]]}
    return out


def _attempts(store: Path) -> dict[str, str]:
    """key → outcome of every attempt kept (error-class records: never results)."""
    return {(r := orjson.loads(p.read_bytes()))["key"]: r["outcome"] for p in (store / "attempts").glob("*/*.json")}


def test_records_on_the_cluster_equal_a_threaded_run_key_for_key(tmp_path: Path, cluster: DaskCluster,
                                                                   api: FakeAPI) -> None:
    local = _project(tmp_path / "local")
    here = local.run("-j", "2", env=api.anthropic_env())
    assert here.code == 1, here.out + here.err  # the broken case's trials err
    judged = api.count("/v1/messages")
    api.reset()
    api.script = _judge

    shared = tmp_path / "shared"
    remote = _project(tmp_path / "remote")
    env = {**api.anthropic_env(), "SKILLMAKE_EXECUTOR": cluster.url, "SKILLMAKE_REMOTE": shared.as_uri()}
    there = remote.run("-j", "4", env=env)
    assert there.code == 1, there.out + there.err
    assert (there.trials, there.grades) == (here.trials, here.grades) == (8, 8), there.out
    assert api.count("/v1/messages") == judged == 2  # the judge calls were made on the workers

    mine, theirs = _records(local.root / ".skillmake"), _records(remote.root / ".skillmake")
    # 4 trials + 4 grades with results; the 2 broken and the 2 timed-out trials have none
    assert mine == theirs and len(mine) == 8
    assert _records(shared) == mine  # the shared store holds every record, with its objects (read back from it)
    broken = _attempts(remote.root / ".skillmake")
    assert broken == _attempts(local.root / ".skillmake")
    assert sorted(broken.values()).count("timeout") >= 2 and sorted(broken.values()).count("error") >= 2, broken
    assert "this agent cannot do that" in there.out + there.err
    rows = [orjson.loads((p.root / ".skillmake/reports/t/report.json").read_bytes())["rows"] for p in (local, remote)]
    # the same report, row for row, but for which run drew each sample
    assert [sorted(k for k in a if a[k] != b[k]) for a, b in zip(*rows, strict=True)] == [["trial_runs"]] * 8

    again = remote.run("-j", "4", env=env)  # errors and timeouts are never cached: only those trials run again
    assert (again.trials, again.grades) == (4, 4), again.out + again.err
    assert not cluster.descendants()


@pytest.mark.parametrize("kind", ["folder", "s3"])
def test_a_worker_reads_the_project_from_the_store_never_from_the_submitting_disk(
        tmp_path: Path, cluster: DaskCluster, s3: S3Server, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The job is made, then the project is deleted: the worker has only the remote (a shared folder, or S3 through
    moto's server) to read the skill, the fixture and the agent's program from."""
    from skillmake.engine import cluster as executor
    from skillmake.engine.plan import plan_spec
    from skillmake.run.project import Project as Opened
    from skillmake.store.objects import TRIAL_SCHEMA

    p = _project(tmp_path / "p")
    url = (tmp_path / "shared").as_uri() if kind == "folder" else s3.make_bucket(f"cluster-{os.getpid()}") + "/e"
    for name, value in {**s3.env(), "SKILLMAKE_REMOTE": url}.items():
        monkeypatch.setenv(name, value)
    project = Opened.open(str(p.root))
    item = next(i for i in plan_spec(project, project.specs[0]).items
                if i.case.id == "loud" and i.arm.name == "with_skill")
    job = executor.make_job(project, item, "trial", resample=False)
    assert sorted(job.files) == ["agent.py", "data.txt", "skills/s/SKILL.md"]
    shutil.rmtree(p.root)  # nothing of the project is left on this disk but the shared store

    try:
        result = executor.submit(cluster.url, job)
    finally:
        executor._close_clients()  # this process's client goes before the fixture stops the scheduler
    record = result["record"]
    assert (record["outcome"], result["ran"]) == ("completed", True), record["error"]
    back = executor._take(project, record, schema=TRIAL_SCHEMA, cacheable=frozenset({"completed"}))
    assert back["key"] == record["key"]  # read back through the remote, with its objects
    output = project.store.get(back["outputs"]["output"])
    assert output == b"HELLO SAY HI LOUD from the fixture [with_skill 0]\n"


SLOW = r'''
import os, subprocess, sys
from pathlib import Path
subprocess.run(["sleep", "300"])
print("too late")
'''


def test_ctrl_c_cancels_the_remote_trials_and_leaves_no_process_on_any_worker(tmp_path: Path,
                                                                              cluster: DaskCluster) -> None:
    p = Project.empty(tmp_path / "p", {
        "agent.py": SLOW, "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n",
        "t.eval.yaml": "skill: skills/s\nagent: {kind: command, command: [python3, agent.py]}\ntrials: 4\n"
                       "cases:\n  - {id: slow, prompt: wait, checks: [{type: contains, needle: x}]}\n"})
    env = dict(os.environ, SKILLMAKE_EXECUTOR=cluster.url, SKILLMAKE_REMOTE=(tmp_path / "shared").as_uri())
    run = subprocess.Popen([sys.executable, "-m", "skillmake", "-j", "4"], cwd=p.root, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while len([c for _, c in cluster.descendants() if c.startswith("sleep 300")]) < 4:
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.2)
        on_workers = cluster.descendants()
        assert {pid for pid, c in on_workers if "skillmake.engine.clusterjob" in c}, on_workers
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 130, out.decode() + err.decode()
    deadline = time.monotonic() + 30
    while cluster.descendants() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cluster.descendants() == []  # no job, no agent, no `sleep` on any worker
    assert not list((tmp_path / "shared").glob("actions/*/*.json"))  # nothing recorded for the cancelled trials


API_SPEC = """\
skill: skills/s
agent: {kind: anthropic, model: claude-haiku-4-5}
trials: 8
cases:
  - {id: ask, prompt: say hello, checks: [{type: contains, needle: hello}]}
"""


def test_the_fake_api_never_sees_more_concurrent_requests_than_the_cluster_wide_cap(
        tmp_path: Path, cluster: DaskCluster, api: FakeAPI) -> None:
    """4 trials at once on 2 workers × 4 threads, a cap of 2 requests in flight: each job's process would allow 2 on
    its own (4 at once); the cluster-wide cap holds them to 2. (Four are enough to tell the two apart: each job of an
    API agent is a process that imports the SDK, ~2 CPU-s.)"""
    peak = _Peak(hold=1.2)
    api.script = peak
    try:
        p = Project.empty(tmp_path / "p", {"skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n",
                                           "t.eval.yaml": API_SPEC.replace("trials: 8", "trials: 4")})
        env = {**api.anthropic_env(), "SKILLMAKE_EXECUTOR": cluster.url, "SKILLMAKE_MAX_CONNECTIONS": "2",
               "SKILLMAKE_REMOTE": (tmp_path / "shared").as_uri()}
        done = p.run("-j", "4", env=env)
    finally:
        api.script = _judge
    assert done.code == 0, done.out + done.err
    assert done.trials == 4 and api.count("/v1/messages") >= 4
    assert 1 <= peak.peak <= 2, peak.peak


class _FirstPushedBack:
    """Answers the first request with a 429 asking for `pause` seconds, every later one at once; notes when each
    request arrived."""

    def __init__(self, pause: float) -> None:
        self.pause = pause
        self.arrivals: list[float] = []
        self.lock = threading.Lock()

    def __call__(self, request: Recorded) -> Reply:
        with self.lock:
            self.arrivals.append(time.monotonic())
            first = len(self.arrivals) == 1
        return Reply.fault("429", retry_after=self.pause) if first else Reply.text("hello from the model")


def test_a_retry_after_pauses_every_worker(tmp_path: Path, cluster: DaskCluster, api: FakeAPI) -> None:
    """One request in flight at a time (cap 1), 4 trials on 2 workers: the first request is told to wait 3 s. No
    request of any worker may reach the API before those 3 s are over (each job's own limiter would let the
    next job's request through the moment the lease is free)."""
    pushed = _FirstPushedBack(pause=3.0)
    api.script = pushed
    try:
        p = Project.empty(tmp_path / "p", {"skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n",
                                           "t.eval.yaml": API_SPEC.replace("trials: 8", "trials: 4")})
        env = {**api.anthropic_env(), "SKILLMAKE_EXECUTOR": cluster.url, "SKILLMAKE_MAX_CONNECTIONS": "1",
               "SKILLMAKE_REMOTE": (tmp_path / "shared").as_uri()}
        done = p.run("-j", "4", env=env)
    finally:
        api.script = _judge
    assert done.code == 0, done.out + done.err
    assert len(pushed.arrivals) == 5  # 4 trials, one of them asked twice
    first, *later = pushed.arrivals
    assert min(later) - first >= 2.8, [round(t - first, 2) for t in later]


def test_a_resample_on_the_cluster_replaces_the_stored_sample_with_the_workers_fresh_one(
        tmp_path: Path, cluster: DaskCluster) -> None:
    p = Project.empty(tmp_path / "p", {
        "agent.py": AGENT, "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n",
        "t.eval.yaml": "skill: skills/s\nagent: {kind: command, command: [python3, agent.py]}\ntrials: 2\n"
                       "cases:\n  - {id: c, prompt: hi, checks: [{type: contains, needle: HELLO}]}\n"})
    env = {"SKILLMAKE_EXECUTOR": cluster.url, "SKILLMAKE_REMOTE": (tmp_path / "shared").as_uri()}
    first = p.run("-j", "2", env=env)
    assert first.code == 0 and first.trials == 2, first.out + first.err

    def runs() -> list[str]:
        report = orjson.loads((p.root / ".skillmake/reports/t/report.json").read_bytes())
        return [run for row in report["rows"] for run in row["trial_runs"]]

    before = runs()
    again = p.run("--resample", "-j", "2", env=env)
    assert again.code == 0 and again.trials == 2, again.out + again.err
    after = runs()
    assert len(set(after)) == 1 and not set(after) & set(before), (before, after)  # both fresh, from this run
    kept = [orjson.loads(f.read_bytes()) for f in (p.root / ".skillmake" / "replaced").glob("*/*/*.json")]
    assert sorted(r["run_id"] for r in kept if r["kind"] == "trial") == sorted(before)  # the replaced samples


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_a_worker_killed_mid_trial_takes_its_trials_processes_with_it_and_the_trial_runs_elsewhere(
        tmp_path: Path) -> None:
    # The first attempt sleeps long (so only its worker's death can end it in time); the one run again does not.
    slow = ("import os, subprocess, sys\nmarker = sys.stdin.read().split()[-1]\n"
            "if not os.path.exists(marker):\n    open(marker, 'w').close()\n    subprocess.run(['sleep', '400'])\n"
            "print('HELLO')\n")
    marker = tmp_path / "first-attempt"
    p = Project.empty(tmp_path / "p", {
        "agent.py": slow, "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n",
        "t.eval.yaml": "skill: skills/s\nagent: {kind: command, command: [python3, agent.py]}\n"
                       f"cases:\n  - {{id: c, prompt: go {marker}, checks: [{{type: contains, needle: HELLO}}]}}\n"})
    with dask_cluster(2, nthreads=1) as own:
        env = dict(os.environ, SKILLMAKE_EXECUTOR=own.url, SKILLMAKE_REMOTE=(tmp_path / "shared").as_uri())
        run = subprocess.Popen([sys.executable, "-m", "skillmake"], cwd=p.root, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120
            while not [c for _, c in own.descendants() if c.startswith("sleep 400")]:
                assert run.poll() is None and time.monotonic() < deadline, run.communicate()
                time.sleep(0.1)
            busy = next(w for w in own.worker_pids
                        if any(c.startswith("sleep 400") for _, c in DaskCluster(
                            url="", scheduler_pid=0, worker_pids=[w], home=own.home).descendants()))
            below = [pid for pid, _ in DaskCluster(url="", scheduler_pid=0, worker_pids=[busy],
                                                    home=own.home).descendants()]
            os.kill(busy, signal.SIGKILL)
            out, err = run.communicate(timeout=120)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        deadline = time.monotonic() + 15
        while any(_alive(pid) for pid in below) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in below if _alive(pid)]  # the job and its agent died with their worker
    assert run.returncode == 0, out.decode() + err.decode()  # the trial ran again on the other worker
    assert "ran 1 trial " in out.decode(), out.decode()
