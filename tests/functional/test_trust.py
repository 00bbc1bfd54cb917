"""Results you can trust: each cell folder is a checkout of the store, a record serves a cell only where it
gives the same outcome, error-class outcomes are never cached, and every header, file and exit code agrees."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.fakeapi.server import FakeAPI

from .project import Project, assert_views_match_reports

AGENT = r'''
import os, sys, time
from pathlib import Path
here = Path(__file__).resolve().parent
with open(here / "calls.log", "a") as log:
    env = os.environ
    log.write(env["SKILLMAKE_CASE"] + " " + env["SKILLMAKE_ARM"] + " " + env["SKILLMAKE_TRIAL"] + "\n")
prompt = sys.stdin.read().strip()
mode = (here / "mode.txt").read_text().strip() if (here / "mode.txt").exists() else "ok"
if prompt.startswith("sleep"):
    time.sleep(float(prompt.split()[1]))
if mode == "fail" or prompt == "crash":
    sys.exit(3)
Path("made.txt").write_text("made by " + prompt + "\n")
print("HELLO " + prompt.upper())
'''


def _project(tmp_path: Path, spec: str, name: str = "t") -> Project:
    p = Project.empty(tmp_path / name)
    p.write("agent.py", AGENT)
    p.write("skills/s/SKILL.md", "---\nname: s\ndescription: d\n---\nbody\n")
    p.write(f"{name}.eval.yaml", spec)
    return p


def _json(path: Path) -> dict:
    return orjson.loads(path.read_bytes())


def _actions(p: Project, kind: str) -> list[dict]:
    found = [_json(f) for f in (p.root / ".skillmake" / "actions").rglob("*.json")]
    return [r for r in found if r["kind"] == kind]


SHARED = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
trials: 2
baseline: true
cases:
  - {id: one, prompt: same words, checks: [{type: contains, needle: HELLO}]}
  - {id: two, prompt: same words, checks: [{type: contains, needle: WORDS}]}
"""


def test_cells_sharing_a_record_each_get_their_own_labelled_folder(tmp_path: Path) -> None:
    p = _project(tmp_path, SHARED)
    run = p.run()
    assert run.code == 0, run.err + run.out
    # one and two have the same prompt: 4 distinct trial keys (2 arms × k), 8 cells.
    assert run.agent_calls == 4
    assert assert_views_match_reports(p.root) == 8
    runs = p.root / ".skillmake" / "runs" / "t"
    two = _json(runs / "two" / "with_skill" / "trial-1" / "grade.json")
    assert two["labels"] == {"spec": "t", "skill": "s", "case": "two", "arm": "with_skill", "k": 1}
    assert two["trial_key"] == _json(runs / "two" / "with_skill" / "trial-1" / "trial.json")["key"]
    report = _json(p.root / ".skillmake" / "reports" / "t" / "report.json")
    row = next(r for r in report["rows"] if r["case"] == "one" and r["arm"] == "with_skill")
    assert len(set(row["trial_keys"])) == 2  # trials 0 and 1 have their own keys, not trial-0's twice
    # the kept workspace is part of each view, checked out from the store
    assert (runs / "two" / "without_skill" / "trial-0" / "workspace" / "made.txt").read_text() == "made by same words\n"


def test_edit_run_revert_run_leaves_nothing_stale_in_any_cell(tmp_path: Path) -> None:
    p = _project(tmp_path, SHARED)
    assert p.run().code == 0
    view = p.root / ".skillmake" / "runs" / "t" / "one" / "with_skill" / "trial-0"
    before = _json(view / "trial.json")["key"]
    p.write("skills/s/SKILL.md", "---\nname: s\ndescription: d\n---\nedited body\n")
    assert p.run().code == 0
    edited = _json(view / "trial.json")["key"]
    assert edited != before
    p.write("skills/s/SKILL.md", "---\nname: s\ndescription: d\n---\nbody\n")
    run = p.run()
    assert run.agent_calls == 0 and run.code == 0
    assert _json(view / "trial.json")["key"] == before  # the view follows the record, not the last execution
    # why-stale reasons read the view: a judge-model change is not "the trial's outputs changed"
    p.write("skills/s/SKILL.md", "---\nname: s\ndescription: d\n---\nedited again\n")
    explained = p.run("explain", check_views=False)
    assert "trial:t/one/with_skill/0  skill file SKILL.md changed" in explained.out


def test_removed_cases_and_trials_leave_no_folder(tmp_path: Path) -> None:
    p = _project(tmp_path, SHARED)
    assert p.run().code == 0
    p.replace("t.eval.yaml", "trials: 2", "trials: 1")
    p.replace("t.eval.yaml", "  - {id: two, prompt: same words, checks: [{type: contains, needle: WORDS}]}\n", "")
    run = p.run()
    assert run.agent_calls == 0
    runs = p.root / ".skillmake" / "runs" / "t"
    assert not (runs / "two").exists() and not (runs / "one" / "with_skill" / "trial-1").exists()


def test_judge_error_on_a_reused_trial_is_shown_with_its_cause(tmp_path: Path) -> None:
    spec = SHARED.replace("checks: [{type: contains, needle: WORDS}]", "rubric: is it loud? 1-5")
    p = _project(tmp_path, spec)
    with FakeAPI() as api:  # nothing scripted: every judge call gets a 400
        run = p.run(env=api.anthropic_env())
    assert run.code == 1
    assert run.agent_calls == 4  # case two reuses case one's trials; its grades are judged and fail
    grade = _json(p.root / ".skillmake" / "runs" / "t" / "two" / "with_skill" / "trial-0" / "grade.json")
    assert grade["outcome"] == "judge_error" and grade["error"]
    header = next(line for line in run.out.splitlines() if line.startswith("t ("))
    assert "FAILED" in header and "could not be graded" in header + run.out
    assert "judge_error" in run.out
    assert not _actions(p, "grade") or all(g["outcome"] != "judge_error" for g in _actions(p, "grade"))


TIMEOUTS = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
cases:
  - {id: patient, prompt: sleep 1.5, timeout: 20, checks: [{type: contains, needle: HELLO}]}
  - {id: hasty, prompt: sleep 1.5, timeout: 20, checks: [{type: contains, needle: HELLO}]}
"""


def test_a_record_serves_a_cell_only_within_its_timeout(tmp_path: Path) -> None:
    p = _project(tmp_path, TIMEOUTS)
    first = p.run()
    assert first.code == 0 and first.agent_calls == 1  # the same inputs: one execution for both cells
    p.replace("t.eval.yaml", "id: patient, prompt: sleep 1.5, timeout: 20",
              "id: patient, prompt: sleep 1.5, timeout: 60")
    raised = p.run()
    assert (raised.agent_calls, raised.code) == (0, 0)  # raising a timeout costs nothing
    p.replace("t.eval.yaml", "id: hasty, prompt: sleep 1.5, timeout: 20", "id: hasty, prompt: sleep 1.5, timeout: 1")
    explained = p.run("explain", check_views=False)
    assert "would run 1 trial " in explained.out
    lowered = p.run()
    assert lowered.agent_calls == 1  # only the cell the 1.5 s record no longer fits runs again …
    assert lowered.code == 1  # … and its own run timed out: no pass borrowed from the patient cell
    hasty = _json(p.root / ".skillmake" / "runs" / "t" / "hasty" / "with_skill" / "trial-0" / "trial.json")
    patient = _json(p.root / ".skillmake" / "runs" / "t" / "patient" / "with_skill" / "trial-0" / "trial.json")
    assert (hasty["outcome"], patient["outcome"]) == ("timeout", "completed")
    assert p.run().agent_calls == 1  # a timeout is never cached: retried next run


ERRORS = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
cases:
  - {id: crash, prompt: crash, checks: [{type: contains, needle: HELLO}]}
  - {id: slow, prompt: sleep 5, timeout: 1, checks: [{type: contains, needle: HELLO}]}
  - {id: fine, prompt: hi, checks: [{type: contains, needle: HELLO}]}
"""


@pytest.mark.parametrize("case", ["crash", "slow"])
def test_error_and_timeout_outcomes_are_never_cached(tmp_path: Path, case: str) -> None:
    p = _project(tmp_path, ERRORS)
    first = p.run()
    assert first.code == 1
    outcome = "error" if case == "crash" else "timeout"
    view = _json(p.root / ".skillmake" / "runs" / "t" / case / "with_skill" / "trial-0" / "trial.json")
    assert view["outcome"] == outcome
    assert not any(r["key"] == view["key"] for r in _actions(p, "trial"))  # no action entry
    explained = p.run("explain", check_views=False)
    assert f"trial:t/{case}/with_skill/0  last run ended in {outcome}" in explained.out  # the plan: stale
    again = p.run()
    assert again.code == 1
    assert sum(1 for line in p.calls() if line.startswith(f"{case} ")) == 2  # the agent was called again


def test_header_history_stamp_and_exit_code_agree(tmp_path: Path) -> None:
    p = _project(tmp_path, ERRORS)
    run = p.run()
    assert run.code == 1
    header = next(line for line in run.out.splitlines() if line.startswith("t ("))
    assert "FAILED" in header and "error or timeout" in header
    history = (p.root / ".skillmake" / "reports" / "t" / "history.jsonl").read_text().splitlines()
    assert [orjson.loads(line)["gates_passed"] for line in history] == [False]
    report = _json(p.root / ".skillmake" / "reports" / "t" / "report.json")
    assert report["verdict"]["passed"] is False and report["passed"] is False
    # `report` again changes nothing, so it appends no history row; it exits as the run did
    again = p.run("report")
    assert again.code == 1 and again.agent_calls == 0
    assert len((p.root / ".skillmake" / "reports" / "t" / "history.jsonl").read_text().splitlines()) == 1


def test_no_thresholds_and_a_failing_trial_is_not_ok(tmp_path: Path) -> None:
    spec = SHARED.replace("needle: WORDS", "needle: NEVER-THERE").replace("trials: 2\nbaseline: true\n", "")
    p = _project(tmp_path, spec)
    run = p.run()
    assert run.code == 1
    header = next(line for line in run.out.splitlines() if line.startswith("t ("))
    assert "FAILED" in header and "every trial must pass" in header


def test_two_runs_at_once_in_one_project_never_run_a_trial_twice(tmp_path: Path) -> None:
    spec = "\n".join(["skill: skills/s", "agent: {kind: command, command: [python3, agent.py]}", "trials: 10",
                      "cases:", "  - {id: a, prompt: sleep 0.2, checks: [{type: contains, needle: HELLO}]}",
                      "  - {id: b, prompt: sleep 0.1, checks: [{type: contains, needle: HELLO}]}", ""])
    p = _project(tmp_path, spec)
    cmd = [sys.executable, "-m", "skillmake", "-n", "3", "-P", "thread"]
    procs = [subprocess.Popen(cmd, cwd=p.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outs
    assert len(p.calls()) == 20  # 0 duplicate executions
    assert any("waiting for the run of pid" in err for _, err in outs)  # the second said who it waited for
    assert assert_views_match_reports(p.root) == 20  # 0 lost workspaces


def test_two_projects_sharing_a_store_never_run_the_same_key_at_once(tmp_path: Path) -> None:
    spec = "\n".join(["skill: skills/s", "agent: {kind: command, command: [python3, agent.py]}", "trials: 6",
                      "cases:", "  - {id: a, prompt: sleep 0.3, checks: [{type: contains, needle: HELLO}]}", ""])
    a, b = _project(tmp_path, spec, "x"), _project(tmp_path / "copy", spec, "x")
    env = dict(os.environ, SKILLMAKE_STORE=str(tmp_path / "store"))
    cmd = [sys.executable, "-m", "skillmake", "-n", "3", "-P", "thread"]
    procs = [subprocess.Popen(cmd, cwd=q.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for q in (a, b)]
    outs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outs
    assert len(a.calls()) + len(b.calls()) == 6  # each key executed once, whichever project got it first
    for q in (a, b):
        assert assert_views_match_reports(q.root) == 6


ODD = r'''
import os, sys
from pathlib import Path
prompt = sys.stdin.read().strip()
if prompt == "deep":
    fd = os.open(".", os.O_RDONLY)
    for _ in range(1200):
        os.mkdir("d", dir_fd=fd)
        new = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = new
    Path("out.md").write_text("deep done\n")
elif prompt == "links":
    os.symlink(os.environ["SECRET"], "secret.md")
    os.symlink(os.path.dirname(os.environ["SECRET"]), "outside")
    Path("own.md").write_text("mine\n")
elif prompt == "many":
    Path("many").mkdir()
    for i in range(1100):
        Path(f"many/{i}.md").write_text("x")
print("ran " + prompt)
'''


def test_odd_workspaces_deep_trees_links_and_too_many_files(tmp_path: Path) -> None:
    secret = tmp_path / "secret" / "key.md"
    secret.parent.mkdir()
    secret.write_text("TOP-SECRET\n")
    p = Project.empty(tmp_path / "odd")
    p.write("agent.py", ODD)
    p.write("skills/s/SKILL.md", "---\nname: s\ndescription: d\n---\nbody\n")
    p.write("odd.eval.yaml", "\n".join([
        "skill: skills/s", f"agent: {{kind: command, command: [python3, agent.py], env: {{SECRET: '{secret}'}}}}",
        "cases:",
        "  - {id: deep, prompt: deep, output_files: ['**/*.md'], checks: [{type: contains, needle: deep done}]}",
        "  - {id: links, prompt: links, output_files: ['**/*.md'], checks: [{type: not_contains, needle: SECRET}]}",
        "  - {id: many, prompt: many, output_files: ['many/*.md'], checks: [{type: contains, needle: x}]}", ""]))
    run = p.run()
    assert "Traceback" not in run.err + run.out
    assert run.code == 1  # `many` is over the capture limits
    runs = p.root / ".skillmake" / "runs" / "odd"
    assert _json(runs / "deep" / "with_skill" / "trial-0" / "grade.json")["outcome"] == "pass"
    links = _json(runs / "links" / "with_skill" / "trial-0" / "trial.json")
    assert list(links["outputs"]["files"]) == ["own.md"]  # links are never followed out
    assert "secret.md is a link" in links["workspace_note"]
    store = p.root / ".skillmake" / "objects"
    assert not any(b"TOP-SECRET" in f.read_bytes() for f in store.rglob("*") if f.is_file())
    many = _json(runs / "many" / "with_skill" / "trial-0" / "trial.json")
    assert many["outcome"] == "error" and "capture limits" in many["error"]
    assert p.run().code == 1  # later runs cope with what the deep trial left
    cleaned = p.run("clean", check_views=False)
    assert cleaned.code == 0 and "Traceback" not in cleaned.err
    assert (p.root / ".skillmake" / "objects").is_dir()  # clean never touches the store


def test_a_garbage_doit_db_is_recovered_with_a_message(tmp_path: Path) -> None:
    p = _project(tmp_path, SHARED)
    assert p.run().code == 0
    (p.root / ".skillmake" / "doit.db").write_bytes(b"this is not a database" * 100)
    run = p.run()
    assert run.code == 0 and "Traceback" not in run.err
    assert "could not be read" in run.err and run.agent_calls == 0
    assert p.run().err == ""  # recovered for good


def test_clean_never_deletes_above_its_own_folders(tmp_path: Path) -> None:
    p = _project(tmp_path, SHARED)
    assert p.run().code == 0
    assert p.run("clean", check_views=False).code == 0
    state = p.root / ".skillmake"
    assert not list((state / "runs" / "t").glob("*/*/trial-*")) and not (state / "reports" / "t").exists()
    assert (state / "objects").is_dir() and (state / "actions").is_dir()
    run = p.run()  # views come back from the store, with no agent call
    assert run.agent_calls == 0 and run.code == 0
    assert assert_views_match_reports(p.root) == 8


def test_a_run_whose_judge_has_no_key_stops_before_any_trial(tmp_path: Path) -> None:
    spec = SHARED.replace("checks: [{type: contains, needle: WORDS}]", "rubric: is it loud? 1-5")
    p = _project(tmp_path, spec)
    no_key = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "", "SKILLMAKE_JUDGE_PROVIDER": ""}
    run = p.run(env=no_key, check_views=False)
    assert run.code == 3 and run.agent_calls == 0
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and "ANTHROPIC_API_KEY" in lines[0] and "Traceback" not in run.err
    explained = p.run("explain", env=no_key, check_views=False)
    assert lines[0].removeprefix("skillmake: ") in explained.out
    doit = p.run(env=no_key, check_views=False, cmd=[sys.executable, "-m", "doit", "-f", str(_dodo(p))])
    assert doit.code == 3 and doit.agent_calls == 0


def _dodo(p: Project) -> Path:
    return p.write("dodo.py", "from skillmake.dodo import *  # noqa: F403\n")


def test_output_piped_to_head_loses_nothing(tmp_path: Path) -> None:
    p = _project(tmp_path, SHARED)
    shell = f"{sys.executable} -m skillmake -n 2 -P thread | head -1"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", shell], cwd=p.root, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr  # the reader left early; the run still finished and passed
    assert "Traceback" not in done.stderr and len(done.stdout.splitlines()) == 1
    again = p.run()
    assert again.agent_calls == 0 and "nothing stale" in again.out  # every trial, grade and report was kept
