"""--resample: fresh samples for the selected cells even though their keys are stored, counted at the agent."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from .project import Project, Run, copy_of, populated_with_dodo


def doit(project: Project, *args: str, env: dict[str, str] | None = None) -> Run:
    return project.run(cmd=[sys.executable, "-m", "doit", *args], env=env)


def view(project: Project, cell: str, name: str) -> dict:
    spec, case, arm, k = cell.split("/")
    folder = project.root / ".skillmake" / "runs" / spec / case / arm / f"trial-{k}"
    return orjson.loads((folder / name).read_bytes())


def replaced(project: Project) -> list[dict]:
    folder = project.root / ".skillmake" / "replaced"
    return [orjson.loads(p.read_bytes()) for p in sorted(folder.glob("*/*/*.json"))]


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The project with the three-line dodo.py after its first plain `doit` run, copied from one built once."""
    return copy_of(populated_with_dodo(tmp_path_factory), tmp_path / "proj")


def test_resample_runs_exactly_the_selected_trials_again_then_nothing(project: Project) -> None:
    cells = ["alpha/one/with_skill/0", "alpha/one/with_skill/1", "alpha/one/without_skill/0",
             "alpha/one/without_skill/1"]
    before = {c: (view(project, c, "trial.json"), view(project, c, "grade.json")) for c in cells}
    other = view(project, "alpha/two/with_skill/0", "trial.json")
    run = doit(project, env={"SKILLMAKE_K": "alpha and one", "SKILLMAKE_RESAMPLE": "1"})
    assert run.code == 0, run.err
    assert run.agent_calls == 4
    assert sorted(project.calls()[-4:]) == ["one with_skill 0", "one with_skill 1", "one without_skill 0",
                                            "one without_skill 1"]
    assert (run.trials, run.grades) == (4, 4)  # each fresh sample is graded afresh too
    assert run.out.count("resampled: a fresh sample replaces the stored one") == 4
    assert "alpha: 4 trial(s) fresh this run" in run.out and "; 8 stored" in run.out
    # The cells show the fresh records (same keys, a new run); the other cells still show the stored ones.
    fresh_run = {view(project, c, "trial.json")["run_id"] for c in cells}
    assert len(fresh_run) == 1 and fresh_run != {before[cells[0]][0]["run_id"]}
    for c in cells:
        trial, grade = view(project, c, "trial.json"), view(project, c, "grade.json")
        assert trial["key"] == before[c][0]["key"]
        assert grade["run_id"] == trial["run_id"]
    assert view(project, "alpha/two/with_skill/0", "trial.json") == other
    report = orjson.loads((project.root / ".skillmake/reports/alpha/report.json").read_bytes())
    assert report["usage"]["spent"]["records"] == 8  # 4 trials + 4 grades drawn by this run
    # Each row says which run drew each of its samples: the resampled rows name this run, the others an earlier one.
    runs = {r["case"] + "/" + r["arm"]: r["trial_runs"] for r in report["rows"]}
    assert runs["one/with_skill"] == runs["one/without_skill"] == [report["run_id"]] * 2
    assert all(report["run_id"] not in v for k, v in runs.items() if not k.startswith("one/"))
    # The replaced results stay readable, one per key, under the store's replaced/ folder.
    kept = replaced(project)
    assert sorted((r["kind"], r["key"]) for r in kept) == sorted(
        [("trial", before[c][0]["key"]) for c in cells] + [("grade", before[c][1]["key"]) for c in cells])
    assert {r["run_id"] for r in kept} == {before[cells[0]][0]["run_id"]}

    again = doit(project)
    assert again.agent_calls == 0
    assert "nothing stale" in again.out
    assert doit(project, env={"SKILLMAKE_K": "alpha and one"}).agent_calls == 0  # selected, not resampled


def test_failed_with_resample_draws_fresh_samples_of_the_failures_only(project: Project) -> None:
    run = doit(project, env={"SKILLMAKE_FAILED": "1", "SKILLMAKE_RESAMPLE": "1"})
    assert run.agent_calls == 10  # every without_skill cell: alpha 3 × 2, beta 2 × 2
    assert all(" without_skill " in line for line in project.calls()[-10:])
    assert "stored results" not in run.err
    assert doit(project).agent_calls == 0


def test_resample_without_a_selection_resamples_everything(project: Project) -> None:
    run = project.run(env={"SKILLMAKE_RESAMPLE": "1"})  # the skillmake front end
    assert run.code == 0, run.err
    assert run.agent_calls == 24
    assert len(replaced(project)) == 48  # 24 trials and 24 grades replaced
    assert project.run().agent_calls == 0


def test_cells_sharing_a_key_share_one_fresh_sample(project: Project) -> None:
    # A second spec identical to alpha (same skill, cases, agent): its cells map to alpha's keys.
    project.write("gamma.eval.yaml", project.read("alpha.eval.yaml"))
    assert doit(project).agent_calls == 0
    run = doit(project, env={"SKILLMAKE_K": "one and with_skill", "SKILLMAKE_RESAMPLE": "1"})
    assert run.agent_calls == 2  # alpha's and gamma's one/with_skill/{0,1}: two keys, sampled once each
    assert view(project, "alpha/one/with_skill/0", "trial.json")["run_id"] == \
        view(project, "gamma/one/with_skill/0", "trial.json")["run_id"]
    assert doit(project).agent_calls == 0
