"""Two clones running at once against one bucket (moto's S3 server on 127.0.0.1): a lease in the remote store
(skillmake/store/lease.py) makes each trial key run once in all, and a crashed holder's lease is taken over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeapi import FakeAPI
from tests.remote_server import S3Server, s3_fixture  # noqa: F401

from .project import Project, summary_counts
from .test_remote import CELLS, JUDGED, MESSAGES, _judge, clone, rows, s3fs_of


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        fake.script = _judge
        yield fake


SLOW = "import time; time.sleep(float(open(__import__('pathlib').Path(__file__).parent / 'sleep.txt').read()))\n"


def slow_clone(tmp_path: Path, name: str, seconds: float) -> Project:
    p = clone(tmp_path, name)
    p.write("agent.py", SLOW + p.read("agent.py"))
    p.write("sleep.txt", str(seconds))
    return p


def start(p: Project, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "skillmake", *args], cwd=p.root, env=dict(os.environ, **env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def test_two_clones_running_at_once_run_each_trial_key_once(tmp_path: Path, s3: S3Server, api: FakeAPI) -> None:
    url = s3.make_bucket("team-race") + "/evals"
    env = {**s3.env(), **api.anthropic_env(), "SKILLMAKE_REMOTE": url}
    alice, bob = slow_clone(tmp_path, "alice", 0.6), slow_clone(tmp_path, "bob", 0.6)
    procs = [start(alice, env, "-j", "4"), start(bob, env, "-j", "4")]
    outs = [p.communicate(timeout=240) for p in procs]
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, out + err
    calls = alice.calls() + bob.calls()
    assert len(calls) == CELLS and len(set(calls)) == CELLS, calls  # every trial key ran once, in one clone
    assert api.count(MESSAGES) == JUDGED  # and every grade was judged once
    ran = [summary_counts(out)[0] for out, _ in outs]
    assert sum(ran) == CELLS and min(ran) < CELLS, ran
    assert rows(alice) == rows(bob)
    fs = s3fs_of(s3)
    fs.invalidate_cache()
    assert not [p for p in fs.find("team-race/evals") if "/leases/" in p]  # every lease released


def test_a_crashed_holders_lease_is_taken_over_after_its_ttl(tmp_path: Path, s3: S3Server, api: FakeAPI) -> None:
    """Alice's run is SIGKILLed while its trials hold their leases (the agent sleeps); Bob, starting then, waits
    for the silent leases to expire (2 s of his own clock) and runs the trials himself."""
    url = s3.make_bucket("team-crash") + "/evals"
    env = {**s3.env(), **api.anthropic_env(), "SKILLMAKE_REMOTE": url, "SKILLMAKE_LEASE_TTL": "2"}
    # The same trial keys in both (sleep.txt is read by the agent, not hashed).
    alice, bob = slow_clone(tmp_path, "alice", 60), slow_clone(tmp_path, "bob", 0)
    fs = s3fs_of(s3)

    def leases() -> list[str]:
        fs.invalidate_cache()
        return [p for p in fs.find("team-crash/evals") if "/leases/" in p] if fs.exists("team-crash/evals") else []

    proc = subprocess.Popen([sys.executable, "-m", "skillmake", "-j", "8"], cwd=alice.root, env=dict(os.environ, **env),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while len(leases()) < CELLS and time.monotonic() < deadline:  # every trial started (its agent sleeps first)
        time.sleep(0.1)
    assert len(leases()) == CELLS
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    t0 = time.monotonic()
    run = bob.run("-j", "8", env=env)
    took = time.monotonic() - t0
    assert run.code == 0, run.out + run.err
    assert run.agent_calls == CELLS and took >= 2.0, (run.out, took)
    assert not leases()  # the dead generations went with the release of the ones that took them over
