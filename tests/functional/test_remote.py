"""The shared remote store (skillmake/store/remote.py), run for real: S3 through moto's server on 127.0.0.1, and a
shared folder through file://. Calls are counted at the agent's log and at the fake judge API."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.remote_server import S3Server, s3_fixture, slow_proxy  # noqa: F401

from .project import Project

MESSAGES = "/v1/messages"
SECRET = "testing-secret-never-logged"  # S3Server.env()'s AWS_SECRET_ACCESS_KEY

AGENT = r'''
import os, sys
from pathlib import Path
here = Path(__file__).resolve().parent
with open(here / "calls.log", "a") as log:
    log.write(os.environ["SKILLMAKE_CASE"] + " " + os.environ["SKILLMAKE_ARM"] + " " + os.environ["SKILLMAKE_TRIAL"]
              + "\n")
prompt = sys.stdin.read().strip()
files = int((here / "files.txt").read_text()) if (here / "files.txt").exists() else 2
for i in range(files):  # the kept workspace: files whose bytes differ per trial
    Path(f"out-{i}.txt").write_text(f"{prompt} {os.environ['SKILLMAKE_ARM']} {os.environ['SKILLMAKE_TRIAL']} {i}\n")
print("HELLO " + prompt.upper() + " [" + os.environ["SKILLMAKE_ARM"] + " " + os.environ["SKILLMAKE_TRIAL"] + "]")
'''

SPEC = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
trials: 2
baseline: true
judge: {provider: anthropic, model: claude-sonnet-4-6}
cases:
  - {id: loud, prompt: say hi, checks: [{type: contains, needle: HELLO}]}
  - {id: warm, prompt: say bye, rubric: Is the farewell warm?}
"""
CELLS = 8  # 2 cases × 2 arms × 2 trials
JUDGED = 4  # the warm case's cells


def _judge(request: Recorded) -> Reply:
    return Reply.tool_use("record_verdict", {"score": 4, "reason": "warm enough"})


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        fake.script = _judge
        yield fake


def clone(tmp_path: Path, name: str) -> Project:
    """A fresh clone of the project: its files only, no .skillmake/ (what `git clone` gives a teammate)."""
    p = Project.empty(tmp_path / name)
    p.write("agent.py", AGENT)
    p.write("skills/s/SKILL.md", "---\nname: s\ndescription: d\n---\nbody\n")
    p.write("t.eval.yaml", SPEC)
    return p


def rows(p: Project) -> list[dict[str, Any]]:
    report = orjson.loads((p.root / ".skillmake" / "reports" / "t" / "report.json").read_bytes())
    return list(report["rows"])


def outputs(p: Project) -> dict[str, str]:
    runs = p.root / ".skillmake" / "runs" / "t"
    return {str(f.relative_to(runs)): f.read_text() for f in sorted(runs.rglob("*"))
            if f.is_file() and (f.name == "output.txt" or "workspace" in f.relative_to(runs).parts)}


def remote_files(fs: Any, root: str) -> dict[str, bytes]:
    return {path: fs.cat_file(path) for path in fs.find(root)}


def dangling(files: dict[str, bytes], root: str) -> list[str]:
    """Entries in the remote naming an object (an output, a kept tree, a tree's file) the remote lacks."""
    from skillmake.store.objects import named_objects

    def obj(digest: str) -> str:
        return f"{root}/objects/{digest[7:9]}/{digest[9:]}"

    bad = []
    for path, data in files.items():
        if "/actions/" not in path:
            continue
        record = orjson.loads(data)
        needed = named_objects(record)
        tree = record.get("workspace")
        if isinstance(tree, str) and tree.startswith("sha256:") and obj(tree) in files:
            needed += [n["file"] for n in orjson.loads(files[obj(tree)]).values() if "file" in n]
        bad += [f"{path} names {d}" for d in needed if obj(d) not in files]
    return bad


def s3fs_of(server: S3Server) -> Any:
    import s3fs

    return s3fs.S3FileSystem(key="testing", secret=SECRET, client_kwargs={"endpoint_url": server.endpoint},
                             skip_instance_cache=True)


# --- two clones sharing a bucket ---------------------------------------------------------------------------------

def test_a_second_clone_sharing_a_bucket_costs_no_agent_and_no_judge_call(tmp_path: Path, s3: S3Server,
                                                                          api: FakeAPI) -> None:
    url = s3.make_bucket("team-a") + "/evals"
    env = {**s3.env(), **api.anthropic_env(), "SKILLMAKE_REMOTE": url}
    first = clone(tmp_path, "alice")
    one = first.run(env=env)
    assert one.code == 0, one.out + one.err
    assert (one.agent_calls, api.count(MESSAGES)) == (CELLS, JUDGED)
    api.reset()

    second = clone(tmp_path, "bob")
    two = second.run(env=env)
    assert two.code == 0, two.out + two.err
    assert (two.agent_calls, api.count(MESSAGES)) == (0, 0), two.out + two.err
    assert rows(second) == rows(first)
    assert outputs(second) == outputs(first)  # every view, kept workspaces included, from the bucket
    assert "fetched" in two.out and "s3://team-a/evals" in two.out

    # No credential lands in a record, a log line, a view or the bucket.
    fs = s3fs_of(s3)
    stored = remote_files(fs, "team-a/evals")
    assert stored and not dangling(stored, "team-a/evals")
    for p, run in ((first, one), (second, two)):
        assert SECRET not in run.out + run.err
        for f in (p.root / ".skillmake").rglob("*"):
            if f.is_file() and not f.is_symlink():
                assert SECRET.encode() not in f.read_bytes(), f
    assert not [path for path, data in stored.items() if SECRET.encode() in data]


def test_offline_makes_no_remote_request(tmp_path: Path) -> None:
    """--offline never connects, nor does a warm no-op with the remote configured; a cold run without --offline
    does (so this test can fail), and an unreachable remote costs one note, not a failed run."""
    accepted: list[int] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            accepted.append(1)
            conn.close()  # no S3 here: every request fails

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        env = {**S3Server(endpoint=f"http://127.0.0.1:{port}", pid=0).env(), "AWS_MAX_ATTEMPTS": "1",
               "SKILLMAKE_REMOTE": "s3://nowhere/evals"}
        p = clone(tmp_path, "p")
        p.replace("t.eval.yaml", "  - {id: warm, prompt: say bye, rubric: Is the farewell warm?}\n", "")
        offline = p.run("--offline", env=env)
        assert offline.code == 0, offline.out + offline.err
        assert accepted == [] and offline.agent_calls == 4
        warm = p.run(env=env)  # the remote configured, the local store warm: a no-op sends no request
        assert warm.code == 0 and "nothing stale" in warm.out, warm.out + warm.err
        assert accepted == []
        shutil.rmtree(p.root / ".skillmake")
        online = p.run(env=env)
        assert online.code == 0, online.out + online.err  # the remote is a cache: losing it costs nothing more
        assert accepted, "without --offline the run asks the remote"
        assert online.err.count("unreachable") == 1, online.err
    finally:
        stop.set()
        thread.join()
        listener.close()


# --- a shared folder, and a corrupt object ---------------------------------------------------------------------------

def test_a_corrupt_remote_object_is_a_miss_said_once_and_the_trial_runs_again(tmp_path: Path, api: FakeAPI) -> None:
    shared = tmp_path / "shared"
    env = {**api.anthropic_env(), "SKILLMAKE_REMOTE": shared.as_uri()}
    first = clone(tmp_path, "alice")
    assert first.run(env=env).agent_calls == CELLS
    # One trial's own output (each trial's output differs), damaged in the shared folder.
    record = orjson.loads((first.root / ".skillmake/runs/t/loud/with_skill/trial-1/trial.json").read_bytes())
    digest = record["outputs"]["output"]
    target = shared / "objects" / digest[7:9] / digest[9:]
    assert target.is_file()
    os.chmod(target, 0o644)
    target.write_bytes(b"HELLO SAY HI [with_skill 1] but not the bytes its name says\n")

    second = clone(tmp_path, "bob")
    run = second.run(env=env)
    assert run.code == 0, run.out + run.err
    assert run.agent_calls == 1 and second.calls() == ["loud with_skill 1"]
    assert run.err.count("is corrupt") == 1, run.err
    assert outputs(second) == outputs(first)  # the re-run's output, never the damaged bytes
    # The re-run put a good copy back: a third clone costs nothing.
    assert (shared / "objects" / digest[7:9] / digest[9:]).read_bytes() != b""
    third = clone(tmp_path, "carol")
    again = third.run(env=env)
    assert (again.agent_calls, again.err.count("is corrupt")) == (0, 0), again.out + again.err


def test_push_sends_what_an_offline_run_made_and_pull_fetches_it(tmp_path: Path, api: FakeAPI) -> None:
    shared = tmp_path / "shared"
    env = {**api.anthropic_env(), "SKILLMAKE_REMOTE": shared.as_uri()}
    first = clone(tmp_path, "alice")
    assert first.run("--offline", env=env).agent_calls == CELLS
    assert not shared.exists()
    pushed = first.run("push", env=env, check_views=False)
    assert pushed.code == 0 and "pushed" in pushed.out, pushed.out + pushed.err
    again = first.run("push", env=env, check_views=False)
    assert "pushed 0 of" in again.out, again.out  # only what is missing moves

    second = clone(tmp_path, "bob")
    pulled = second.run("pull", env=env, check_views=False)
    assert pulled.code == 0, pulled.out + pulled.err
    assert "are stored here now" in pulled.out and pulled.agent_calls == 0
    api.reset()
    run = second.run("--offline", env=env)  # everything is local now
    assert (run.agent_calls, api.count(MESSAGES)) == (0, 0), run.out + run.err
    assert rows(second) == rows(first)

    none = clone(tmp_path, "carol").run("push", env={"SKILLMAKE_REMOTE": ""}, check_views=False)
    assert none.code == 3 and "no remote store" in none.err


# --- killed mid-upload ------------------------------------------------------------------------------------------

def test_a_run_killed_mid_upload_leaves_no_entry_naming_a_missing_object(tmp_path: Path, s3: S3Server) -> None:
    """Uploads slowed by a proxy (30 workspace files per trial); the run is SIGKILLed as soon as its first upload
    lands in the bucket, twice: after every kill, each entry in the bucket names only objects the bucket
    holds; a last run completes the bucket."""
    url = s3.make_bucket("team-k") + "/evals"
    p = clone(tmp_path, "p")
    p.replace("t.eval.yaml", "  - {id: warm, prompt: say bye, rubric: Is the farewell warm?}\n", "")
    p.write("files.txt", "30")
    fs = s3fs_of(s3)

    def bucket() -> dict[str, bytes]:
        fs.invalidate_cache()
        return remote_files(fs, "team-k/evals") if fs.exists("team-k/evals") else {}

    def count() -> int:
        fs.invalidate_cache()
        return len(fs.find("team-k/evals"))

    kills = 0
    with slow_proxy(s3.endpoint, delay=0.03) as endpoint:
        env = {**s3.env(), "AWS_ENDPOINT_URL": endpoint, "SKILLMAKE_REMOTE": url}
        for _ in range(2):
            before = count()
            proc = subprocess.Popen([sys.executable, "-m", "skillmake"], cwd=p.root, env=dict(os.environ, **env),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            while proc.poll() is None and count() == before:
                time.sleep(0.02)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                kills += 1
            proc.wait()
            assert not dangling(bucket(), "team-k/evals")
        finished = p.run(env=env)
    assert kills == 2
    assert finished.code == 0, finished.out + finished.err
    stored = bucket()
    # 4 trials and their 4 grades: what the killed runs finished locally went up from the outbox too.
    assert sum(1 for path in stored if "/actions/" in path) == 8 and not dangling(stored, "team-k/evals")
