"""engine/cluster.py and clusterjob.py without a cluster: which executor a run uses, what a job carries, the rebase of
a spec onto a worker's checkout. (tests/functional/test_cluster.py runs them on a real Dask cluster.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillmake.core.errors import UsageError
from skillmake.engine import cluster
from skillmake.engine.clusterjob import rebase
from skillmake.spec.config import ConfigErrors, load_config


@pytest.fixture(autouse=True)
def _no_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cluster.EXECUTOR_VAR, raising=False)


def test_the_environment_beats_the_config_and_threads_means_here(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "skillmake.toml").write_text('executor = "dask://10.0.0.5:8786"\n')

    class Opened:
        config = load_config(str(tmp_path))

    assert cluster.configured(Opened()) == "dask://10.0.0.5:8786"  # type: ignore[arg-type]
    monkeypatch.setenv(cluster.EXECUTOR_VAR, "threads")
    assert cluster.configured(Opened()) is None  # type: ignore[arg-type]
    monkeypatch.setenv(cluster.EXECUTOR_VAR, "dask://127.0.0.1:9")
    assert cluster.configured(Opened()) == "dask://127.0.0.1:9"  # type: ignore[arg-type]
    assert cluster.address("dask://127.0.0.1:9") == "tcp://127.0.0.1:9"


@pytest.mark.parametrize("url", ["ray://head:10001", "127.0.0.1:8786", "dask://"])
def test_an_executor_that_is_not_a_dask_scheduler_is_a_usage_error_with_the_fix(url: str) -> None:
    with pytest.raises(UsageError, match="is not a Dask scheduler URL") as caught:
        cluster.address(url)
    assert "dask://HOST:PORT" in caught.value.render()


def test_a_config_executor_that_is_not_a_url_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "skillmake.toml").write_text('jobs = 2\nexecutor = "my-cluster"\n')
    with pytest.raises(ConfigErrors) as caught:
        load_config(str(tmp_path))
    assert "skillmake.toml:2:" in str(caught.value) and "/executor" in str(caught.value)


def test_rebase_moves_every_path_under_the_root_and_nothing_else() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True, slots=True)
    class Inner:
        path: str
        other: str

    @dataclass(frozen=True, slots=True)
    class Outer:
        folder: str
        files: tuple[Inner, ...]
        extra: dict[str, str]

    old, new = os.path.join(os.sep, "p", "proj"), os.path.join(os.sep, "w", "co")
    value = Outer(folder=old, files=(Inner(path=f"{old}/a.txt", other=f"{old}x/b.txt"),),
                  extra={"k": f"{old}/s/SKILL.md", "n": "plain"})
    moved = rebase(value, old, new)
    assert moved == Outer(folder=new, files=(Inner(path=f"{new}/a.txt", other=f"{old}x/b.txt"),),
                          extra={"k": f"{new}/s/SKILL.md", "n": "plain"})


def test_only_grades_that_judge_or_run_a_program_are_sent() -> None:
    class Check:
        def __init__(self, kind: str) -> None:
            self.type = kind

    class Case:
        def __init__(self, judge: bool, *kinds: str) -> None:
            self.has_judge = judge
            self.checks = tuple(Check(k) for k in kinds)

    assert not cluster.remote_grade(Case(False, "contains", "regex"))
    assert cluster.remote_grade(Case(True, "contains"))
    assert cluster.remote_grade(Case(False, "regex", "python"))


def test_a_bad_executor_on_the_command_line_says_the_fix_without_a_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "skillmake.toml").write_text("")
    done = subprocess.run([sys.executable, "-m", "skillmake", "--executor", "ray://head:10001", "validate"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if not k.startswith("SKILLMAKE_")})
    assert done.returncode == 3, done.stderr
    assert "executor 'ray://head:10001' is not a Dask scheduler URL" in done.stderr
    assert "dask://HOST:PORT" in done.stderr and "Traceback" not in done.stderr


def test_a_worker_without_the_store_folder_says_to_set_a_remote(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from skillmake.engine.clusterjob import JobFailed, perform
    from skillmake.engine.plan import plan_spec
    from skillmake.run.project import Project

    for name in ("SKILLMAKE_REMOTE", "SKILLMAKE_STORE", "SKILLMAKE_ROOT"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "skills" / "s").mkdir(parents=True)
    (tmp_path / "skills" / "s" / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (tmp_path / "t.eval.yaml").write_text("skill: skills/s\nagent: {kind: command, command: [echo, hi]}\n"
                                          "cases:\n  - {id: c, prompt: go, checks: [{type: contains, needle: hi}]}\n")
    project = Project.open(str(tmp_path))
    item = plan_spec(project, project.specs[0]).items[0]
    job = cluster.make_job(project, item, "trial", resample=False)
    assert job.remote is None and job.store == str(project.store.root)
    monkeypatch.setenv("SKILLMAKE_WORKER_DIR", str(tmp_path / "worker"))
    with pytest.raises(JobFailed, match="is not on worker") as caught:
        perform(dataclasses.replace(job, store=str(tmp_path / "elsewhere")))
    assert "set a remote every worker can reach" in caught.value.render()
