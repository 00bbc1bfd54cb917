"""Settled specs (engine/settled.py): once a spec is settled a plain run plans none of its trials, yet every input
change still costs exactly the calls it must, and a record, object, view or report deleted behind its back is
found as before. Each test starts from a copy of one populated project, settled by one no-op run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from .project import Project, copy_of, template

# alpha: 3 cases × (with_skill, without_skill) × 2 trials = 12; beta: 2 cases × 3 arms × 2 = 12.
ALL = 24

PLAN = r"""
import json
from skillmake.engine import tasks
tasks.FULL_GRAPH, tasks.COMMAND = False, ["run"]  # a plain run's task creators
root = tasks.current_root()
plans = tasks.plans_at(root)
names = lambda gen: [t["name"] for t in gen if t.get("name")]
trial, grade = names(tasks.trial_tasks(root)), names(tasks.grade_tasks(root))  # first: planned says what they planned
print(json.dumps({"settled": {p.spec.name: p.settled for p in plans},
                  "planned": {p.spec.name: p._items is not None for p in plans},
                  "trial": trial, "grade": grade}))
"""


def _build(root: Path) -> Project:
    p = Project(root)
    first = p.run()
    assert (first.code, first.agent_calls) == (0, ALL), first.out + first.err
    return p


@pytest.fixture
def p(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Project:
    """The project after its first run, copied, and settled by a no-op run (a copy's files have new inodes, so its
    first run plans in full and stamps every spec)."""
    project = copy_of(template(tmp_path_factory, "settled", _build), tmp_path / "proj")
    run = project.run()
    assert (run.code, run.agent_calls) == (0, 0), run.out + run.err
    assert _stamped(project) == {"alpha", "beta"}
    return project


def _stamped(p: Project) -> set[str]:
    return {f.name.removesuffix(".settled.json") for f in (p.root / ".skillmake" / "index").glob("*.settled.json")}


def _plan(p: Project) -> dict[str, dict[str, object]]:
    proc = subprocess.run([sys.executable, "-c", PLAN], cwd=p.root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout.splitlines()[-1]))


def _view(p: Project, spec: str = "alpha", case: str = "one", arm: str = "with_skill", k: int = 0) -> Path:
    return p.root / ".skillmake" / "runs" / spec / case / arm / f"trial-{k}"


def _object(p: Project, digest: str) -> Path:
    h = digest.removeprefix("sha256:")
    return p.root / ".skillmake" / "objects" / h[:2] / h[2:]


def test_an_unchanged_spec_plans_no_per_trial_tasks_and_a_changed_one_only_its_stale_ones(p: Project) -> None:
    plan = _plan(p)
    assert plan["settled"] == {"alpha": True, "beta": True}
    assert plan["planned"] == {"alpha": False, "beta": False}  # not one Item made, not one key computed
    assert (plan["trial"], plan["grade"]) == ([], [])
    p.write("skills/beta/SKILL.md", p.read("skills/beta/SKILL.md") + "Be brief.\n")
    plan = _plan(p)
    assert plan["settled"] == {"alpha": True, "beta": False}
    assert plan["planned"] == {"alpha": False, "beta": True}
    trials = plan["trial"]
    assert isinstance(trials, list) and len(trials) == 8  # beta: 2 cases × (with_skill, alt) × 2 trials
    assert all(name.startswith("beta/") and "/without_skill/" not in name for name in trials)


def test_each_input_change_costs_exactly_its_calls_beside_a_settled_spec(p: Project) -> None:
    p.write("skills/beta/SKILL.md", p.read("skills/beta/SKILL.md") + "Be brief.\n")
    run = p.run()
    assert (run.agent_calls, run.trials) == (8, 8)  # beta's with_skill and alt arms; alpha is settled
    assert {line.split()[0] for line in p.calls()[-8:]} == {"four", "five"}
    assert p.run().agent_calls == 0
    p.write("fixtures/only3.txt", "three's new input\n")  # staged by alpha's case three only
    run = p.run()
    assert run.agent_calls == 4 and {line.split()[0] for line in p.calls()[-4:]} == {"three"}
    p.replace("alpha.eval.yaml", "needle: ONE", "needle: SAY")  # a check: re-graded, nothing re-run
    run = p.run()
    assert (run.agent_calls, run.grades) == (0, 4)
    p.replace("alpha.eval.yaml", "trials: 2", "trials: 3")
    run = p.run()
    assert run.agent_calls == 6 and {line.split()[2] for line in p.calls()[-6:]} == {"2"}
    again = p.run()
    assert again.agent_calls == 0
    assert "nothing stale — 30 trials and 30 grades up to date" in again.out  # settled cells are counted
    assert _stamped(p) == {"alpha", "beta"}


def test_a_whitespace_or_touch_only_edit_runs_nothing_and_settles_again(p: Project) -> None:
    p.write("alpha.eval.yaml", p.read("alpha.eval.yaml") + "\n# a comment\n")
    p.write("skills/alpha/SKILL.md", p.read("skills/alpha/SKILL.md"))  # touched, same bytes
    assert p.run().agent_calls == 0
    assert _plan(p)["settled"] == {"alpha": True, "beta": True}


def test_a_deleted_object_of_a_settled_spec_runs_its_trial_again(p: Project) -> None:
    trial = orjson.loads((_view(p) / "trial.json").read_bytes())
    _object(p, trial["outputs"]["output"]).unlink()
    run = p.run()
    assert (run.code, run.agent_calls) == (0, 1)
    assert p.calls()[-1] == "one with_skill 0"
    assert p.run().agent_calls == 0
    assert _plan(p)["settled"] == {"alpha": True, "beta": True}


def test_a_deleted_record_of_a_settled_spec_runs_its_trial_again(p: Project) -> None:
    trial = orjson.loads((_view(p, "beta", "five", "alt", 1) / "trial.json").read_bytes())
    h = trial["key"].removeprefix("sha256:")
    (p.root / ".skillmake" / "actions" / h[:2] / f"{h}.json").unlink()
    run = p.run()
    assert (run.code, run.agent_calls) == (0, 1)
    assert p.calls()[-1] == "five alt 1"


def test_removed_views_and_report_files_of_a_settled_spec_are_made_again(p: Project) -> None:
    shutil.rmtree(_view(p, "alpha", "two", "without_skill", 1))
    shutil.rmtree(p.root / ".skillmake" / "runs" / "beta" / "four")
    (p.root / ".skillmake" / "reports" / "alpha" / "report.json").unlink()
    run = p.run()  # p.run checks every cell folder shows what report.json says
    assert (run.code, run.agent_calls) == (0, 0)
    assert (_view(p, "alpha", "two", "without_skill", 1) / "trial.json").is_file()
    assert (_view(p, "beta", "four", "alt", 0) / "trial.json").is_file()
    assert (p.root / ".skillmake" / "reports" / "alpha" / "report.json").is_file()


def test_listing_selection_and_info_still_see_every_task_of_a_settled_spec(p: Project) -> None:
    listed = p.run("list", "--all")
    assert listed.code == 0
    trials = [line.split()[0] for line in listed.out.splitlines() if line.startswith("trial:")]
    assert len(trials) == ALL
    info = p.run("info", "trial:alpha/one/with_skill/0")
    assert info.code == 0 and "trial:alpha/one/with_skill/0" in info.out
    selected = p.run("-k", "alpha and one", "--resample")
    assert selected.agent_calls == 4  # case one × 2 arms × 2 trials, drawn again
    assert _stamped(p) == {"alpha", "beta"}  # the resampled spec's report passed again


ERRING = r'''
import os, sys
from pathlib import Path
here = Path(__file__).resolve().parent
with open(here / "calls.log", "a") as log:
    log.write(os.environ["SKILLMAKE_CASE"] + "\n")
if os.environ["SKILLMAKE_CASE"] == "bad":
    sys.exit(3)
print("fine " + sys.stdin.read())
'''


def test_an_erring_trial_never_settles_its_spec(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "proj", {
        "agent.py": ERRING, "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n",
        "s.eval.yaml": "skill: skills/s\nagent: {kind: command, command: [python3, agent.py]}\ncases:\n"
                       "  - {id: good, prompt: say good, checks: [{type: contains, needle: fine}]}\n"
                       "  - {id: bad, prompt: say bad, checks: [{type: contains, needle: fine}]}\n"})
    for n in range(3):  # the error is retried by every run, never stamped as done
        run = p.run(check_views=False)
        assert run.agent_calls == (2 if n == 0 else 1), run.out + run.err
        assert _stamped(p) == set()
    assert p.calls().count("bad") == 3 and p.calls().count("good") == 1
