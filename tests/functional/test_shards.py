"""`--shard I/N` for CI matrices (skillmake/engine/shard.py), run for real: every job a fresh clone, as CI gives it,
sharing one remote store — a shared folder (file://) here, to keep the suite quick: the S3 protocol itself is
tested in test_remote.py and test_remote_lease.py. Calls counted at the agent's log and the fake judge API."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
import yaml

from skillmake.commands import argv
from tests.fakeapi import FakeAPI

from .project import Project
from .test_remote import CELLS, JUDGED, MESSAGES, _judge, clone, rows
from .test_remote_lease import slow_clone


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        fake.script = _judge
        yield fake


WORKFLOW = Path(__file__).resolve().parents[2] / "examples" / "github-actions" / "skillmake-shards.yml"


def would_run(p: Project, shard: str) -> int:
    """How many trials `explain` says the shard runs (read locally: the clone is fresh, so every trial)."""
    out = p.run("explain", "--shard", shard, "--format", "json", env={"SKILLMAKE_OFFLINE": "1"}, check_views=False)
    assert out.code == 0, out.out + out.err
    return int(orjson.loads(out.out)["would_run"]["trials"])


def job(tmp_path: Path, name: str, *, sleep: float = 0.0) -> Project:
    """A fresh clone whose agent sleeps `sleep` seconds (sleep.txt is read, not hashed: every clone's keys agree)."""
    return slow_clone(tmp_path, name, sleep)


def shares(p: Project, n: int) -> dict[int, int]:
    """Trials per shard of `n`, from the project's trial keys (in this process: no run, no store)."""
    from skillmake.engine.plan import plan_spec
    from skillmake.engine.shard import Shard
    from skillmake.run.project import Project as Loaded

    loaded = Loaded.open(str(p.root))
    keys = [i.tkey.key for spec in loaded.specs for i in plan_spec(loaded, spec).items]
    return {i: sum(Shard(i, n).has(k) for k in keys) for i in range(1, n + 1)}


def trial_entries(shared: Path) -> int:
    """Trial records in the shared store (the temp names of uploads under way are not entries)."""
    entries = [f for f in (shared / "actions").rglob("*.json") if not f.name.startswith(".")]
    return sum(1 for f in entries if orjson.loads(f.read_bytes())["kind"] == "trial")


def test_four_shards_are_disjoint_cover_every_stale_trial_and_a_report_job_builds_every_report(
        tmp_path: Path, api: FakeAPI) -> None:
    env = {**api.anthropic_env(), "SKILLMAKE_REMOTE": (tmp_path / "shared").as_uri()}
    share = shares(clone(tmp_path, "plan"), 4)
    assert would_run(clone(tmp_path, "explain"), "3/4") == share[3]  # explain --shard says what the job will run
    calls: list[str] = []
    for i in range(1, 5):
        shard_job = clone(tmp_path, f"job-{i}")
        run = shard_job.run("--shard", f"{i}/4", "-j", "2", env=env)
        assert run.code == 0, run.out + run.err
        assert run.agent_calls == share[i], (i, run.out)
        assert not (shard_job.root / ".skillmake" / "reports").exists()  # a shard's share is not the suite: no report
        calls += shard_job.calls()
    assert sorted(calls) == sorted(set(calls)) and len(calls) == CELLS  # disjoint, and every trial ran
    assert sum(share.values()) == CELLS and api.count(MESSAGES) == JUDGED  # grades follow their trials: judged once
    api.reset()

    reporter = clone(tmp_path, "report-job")
    report = reporter.run("report", env=env)
    assert report.code == 0, report.out + report.err
    assert (report.agent_calls, api.count(MESSAGES)) == (0, 0)
    whole = clone(tmp_path, "teammate")  # a plain run of a fresh clone afterwards: everything is in the store
    run = whole.run(env=env)
    assert run.code == 0, run.out + run.err
    assert (run.agent_calls, api.count(MESSAGES)) == (0, 0)
    assert rows(reporter) == rows(whole) and len(rows(whole)) == 4


def test_a_failed_shard_leaves_the_others_usable_and_its_rerun_runs_only_what_it_had_not_finished(
        tmp_path: Path, api: FakeAPI) -> None:
    shared = tmp_path / "shared"
    # The killed job's lease on the trial it was running is taken over after 3 s of silence (lease.py).
    env = {**api.anthropic_env(), "SKILLMAKE_REMOTE": shared.as_uri(), "SKILLMAKE_LEASE_TTL": "3"}
    share = shares(job(tmp_path, "plan"), 4)
    worst = max(share, key=lambda i: share[i])  # ≥ 2 trials: 8 cells in 4 shards

    # The job of shard `worst` is killed (SIGKILL: a runner lost) after its first trial went up.
    crashed = job(tmp_path, "crashed", sleep=0.4)
    proc = subprocess.Popen([sys.executable, "-m", "skillmake", "--shard", f"{worst}/4", "-j", "1"], cwd=crashed.root,
                            env=dict(os.environ, **env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while trial_entries(shared) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = trial_entries(shared)
    assert 1 <= finished < share[worst]

    for i in (i for i in share if i != worst):
        assert job(tmp_path, f"job-{i}").run("--shard", f"{i}/4", env=env).code == 0
    partial = job(tmp_path, "report-1").run("report", env=env)
    assert partial.code == 1 and partial.agent_calls == 0, partial.out + partial.err  # its gates see the gap
    shown = sum(len(r["trial_keys"]) for r in rows(Project.empty(tmp_path / "report-1")))
    # Every cell of the other shards is reported (and those the crashed job graded before it was killed).
    assert CELLS - share[worst] <= shown <= CELLS - share[worst] + finished

    again = job(tmp_path, "rerun").run("--shard", f"{worst}/4", env=env)  # CI's "re-run failed jobs": a fresh runner
    assert again.code == 0, again.out + again.err
    assert again.agent_calls == share[worst] - finished
    final = job(tmp_path, "report-2").run("report", env=env)
    assert final.code == 0 and final.agent_calls == 0, final.out + final.err


def test_a_shard_whose_trials_could_not_run_fails_its_job(tmp_path: Path, api: FakeAPI) -> None:
    """A shard checks no threshold, so an agent that cannot run (a missing key, a broken install) must fail the job
    itself: CI's "re-run failed jobs" then re-runs it, and only what did not run."""
    env = {**api.anthropic_env(), "SKILLMAKE_REMOTE": (tmp_path / "shared").as_uri()}
    p = job(tmp_path, "p")
    p.write("agent.py", p.read("agent.py").replace("prompt = sys.stdin", "sys.exit(3) if (here / 'broken').exists() "
                                                   "else None\nprompt = sys.stdin"))
    p.write("broken", "")
    failed = p.run("--shard", "1/1", env=env, check_views=False)
    assert failed.code == 1 and "ended in error" in failed.out, failed.out + failed.err
    (p.root / "broken").unlink()
    fixed = p.run("--shard", "1/1", env=env, check_views=False)
    assert fixed.code == 0 and fixed.agent_calls == CELLS, fixed.out + fixed.err


def test_a_bad_shard_is_one_line_and_exit_3(tmp_path: Path) -> None:
    """Every bad form's message is tested in tests/unit/engine/test_shard.py; here, each way in says it alike."""
    value, says = "5/4", "I must be 1 to 4"
    p = clone(tmp_path, "p")
    for args in (["--shard", value], ["explain", "--shard", value]):
        run = p.run(*args, check_views=False)
        assert run.code == 3 and says in run.err and "Traceback" not in run.err, run.err
        assert run.agent_calls == 0
    env = {"SKILLMAKE_SHARD": value}  # plain doit reads the variable: the same line, the same code
    run = p.run(env=env, cmd=[sys.executable, "-m", "doit", "-f", str(dodo(p))], check_views=False)
    assert run.code == 3 and says in run.err and "Traceback" not in run.err, run.err


def dodo(p: Project) -> Path:
    return p.write("dodo.py", "from skillmake.dodo import *  # noqa: F403\n")


# --- the example workflow ---------------------------------------------------------------------------------------

def test_the_example_workflow_runs_a_matrix_of_shards_then_a_report_with_real_commands() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    jobs = workflow["jobs"]
    matrix = jobs["trials"]["strategy"]["matrix"]["shard"]
    commands = [step["run"] for job in jobs.values() for step in job["steps"] if "run" in step]
    sharded = [c for c in commands if "--shard" in c]
    assert len(sharded) == 1
    n = int(re.search(r"--shard \$\{\{ matrix.shard \}\}/(\d+)", sharded[0]).group(1))  # type: ignore[union-attr]
    assert matrix == list(range(1, n + 1))  # every shard once, numbered as --shard counts
    assert jobs["report"]["needs"] == "trials" and "!cancelled()" in jobs["report"]["if"]
    assert jobs["trials"]["strategy"]["fail-fast"] is False
    assert workflow["env"]["SKILLMAKE_REMOTE"].startswith("s3://")
    skillmake = [c for c in commands if c.startswith("skillmake")]
    assert any(c.split("#")[0].split() == ["skillmake", "report"] for c in skillmake)
    for command in skillmake:
        for shard in matrix:
            words = shlex.split(command.replace("${{ matrix.shard }}", str(shard)), comments=True)[1:]
            inv = argv.parse(words, doit_commands=lambda: {"run": ()})  # raises UsageError for anything unknown
            assert inv.command in ("run", "report")
            if inv.command == "run":
                assert inv.shard == f"{shard}/{n}" and inv.jobs == 4
