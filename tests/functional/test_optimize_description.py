"""`skillmake optimize-description` through the real CLI: the stand-in `claude` of trigger_fakes.py (it fires the first
installed skill whose description shares a word of five letters or more with the query, and logs every call) and the
improver at the loopback fake API, scripted by the description it is shown. Every claim counts calls: agent calls at
the stand-in's log, improver calls at the fake API. The command runs through `skillmake.commands.cli.main` in this
process (inprocess.py), except under Ctrl-C, which needs a process of its own to signal.

With holdout 0.4 and seed 42 the seven queries below split into
  train: activities-for-children…, fun-outings-with-toddlers, find-kid-activities…, find-a-place-to-eat…, weather
  test:  plan-a-birthday-party…, write-me-a-python-script
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from tests.fakeapi import FakeAPI, Recorded, Reply

from .inprocess import InProcess
from .project import Project, Run
from .trigger_fakes import claude_log, install_fake_claude

REPO = Path(__file__).resolve().parents[2]
MESSAGES = "/v1/messages"
SPEC = """\
skill: skills/kids
agent: {kind: command, command: [python3, agent.py]}
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: one}]
trigger_tests:
  agent: {kind: claude-code, env: {ANTHROPIC_API_KEY: sk-fake}}
  runs: 1
  distractors:
    - {name: weather, description: Weather forecasts for any place}
  should_trigger:
    - find kid activities in Cupertino
    - activities for children this weekend
    - plan a birthday party for my daughter
    - fun outings with toddlers
  should_not_trigger:
    - what's the weather today
    - write me a python script
    - find a place to eat near the office
"""
AGENT = "import sys; print(sys.stdin.read())\n"
SKILL = "---\nname: kids\ndescription: Find activities for kids near a place\nlicense: MIT\n---\nBody v1.\n"
D0 = "Find activities for kids near a place"  # train 3/5 (misses outings, fires on the place query), test 1/2
GOOD = "Use this skill for birthday parties, activities and outings with toddlers"  # train 5/5, test 2/2
OVERFIT = "Use this skill for activities and outings with toddlers, and python scripts"  # train 5/5, test 0/2
NARROW = "Use this skill for outings with toddlers"  # train 3/5, test 1/2
TRIALS = 7  # queries × runs (1): one evaluation of a description not seen before
_CURRENT = re.compile(r'<current_description>\n"(.*?)"\n</current_description>', re.DOTALL)


def improver(proposals: dict[str, str]) -> Any:
    """An improver that proposes proposals[current description]."""
    def script(request: Recorded) -> Reply:
        text = request.message_text(0)  # the prompt arrives as text blocks, its shared prefix marked cacheable
        match = _CURRENT.search(text)
        assert match, text[:300]
        return Reply.tool_use("record_verdict", {"description": proposals[match.group(1)], "note": "ignored"})
    return script


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        yield fake


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.empty(tmp_path / "proj", {"agent.py": AGENT, "skills/kids/SKILL.md": SKILL, "kids.eval.yaml": SPEC})


@pytest.fixture
def cli(capfd: pytest.CaptureFixture[str]) -> InProcess:
    return InProcess(capfd)


def optimize(cli: InProcess, p: Project, api: FakeAPI, *args: str,
             env: dict[str, str] | None = None) -> tuple[Run, int]:
    """Run the command (in this process); (its result, the agent calls it made)."""
    folder = p.root.parent
    before = len(claude_log(folder))
    full = {"SKILLMAKE_CLAUDE": str(install_fake_claude(folder)), **api.anthropic_env(), **(env or {})}
    run = cli.run(p, "optimize-description", *args, env=full, check_views=False)
    return run, len(claude_log(folder)) - before


def result(p: Project) -> dict[str, Any]:
    data = json.loads((p.root / ".skillmake/reports/kids/description-optimization.json").read_text())
    schema = json.loads((REPO / "schemas/description-optimization.schema.json").read_text())
    assert [e.message for e in Draft7Validator(schema).iter_errors(data)] == []
    return dict(data)


def calls(data: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    """(agent made, agent reused, improver made, improver reused) of each iteration."""
    return [(c["agent"]["made"], c["agent"]["reused"], c["improver"]["made"], c["improver"]["reused"])
            for c in (it["calls"] for it in data["iterations"])]


def test_calls_per_iteration_and_a_second_run_costs_nothing(project: Project, cli: InProcess, api: FakeAPI) -> None:
    api.script = improver({D0: GOOD})
    first, agent_calls = optimize(cli, project, api, "kids", "-j", "2")
    assert first.code == 0, first.err + first.out
    assert agent_calls == 2 * TRIALS and api.count(MESSAGES) == 1
    data = result(project)
    assert calls(data) == [(TRIALS, 0, 1, 0), (TRIALS, 0, 0, 0)]
    assert [(it["description"], it["train_score"], it["train_passed"], it["train_total"], it["test_score"],
             it["test_passed"], it["test_total"]) for it in data["iterations"]] == [
        (D0, 0.6, 3, 5, 0.5, 1, 2), (GOOD, 1.0, 5, 5, 1.0, 2, 2)]
    assert (data["exit_reason"], data["best_description"], data["best_score"], data["best_iteration"]) == (
        "all_passed (iteration 2)", GOOD, 1.0, 2)
    assert (data["original_description"], data["final_description"], data["iterations_run"]) == (D0, GOOD, 2)
    assert (data["train_size"], data["test_size"], data["holdout"], data["seed"]) == (5, 2, 0.4, 42)
    assert data["history"][0]["test_results"][0]["query"] == "plan a birthday party for my daughter"
    assert "iteration 1: train 0.60 (3/5), test 0.50 (1/2); agent calls 7 made, 0 reused; improver 1 made, " \
           "0 reused" in first.out
    # The improver was shown the train failures and the train history, never a test query or score.
    shown = api.requests[0].message_text(0)
    assert '"fun outings with toddlers" (triggered 0/1 times)' in shown.split("FALSE TRIGGERS")[0]
    assert '"find a place to eat near the office" (triggered 1/1 times)' in shown.split("FALSE TRIGGERS")[1]
    # The skill's own content may say anything; everything else the improver reads (now on both sides of it: the
    # shared prefix comes first, the results after) names no test query or score.
    besides_skill = re.sub(r"<skill_content>.*?</skill_content>", "", shown, flags=re.DOTALL)
    assert "<skill_content>" in shown and "Body v1." not in besides_skill
    assert "birthday" not in shown and "python" not in shown and "test" not in besides_skill.lower()
    assert "1024 characters" in shown and "Body v1." in shown

    again, agent_calls = optimize(cli, project, api, "kids", "-j", "2")
    assert again.code == 0, again.err
    assert agent_calls == 0 and api.count(MESSAGES) == 1  # no agent call, no improver call
    assert calls(result(project)) == [(0, TRIALS, 0, 1), (0, TRIALS, 0, 0)]
    assert "exit: all_passed (iteration 2); calls: agent 0 made, 14 reused; improver 0 made, 1 reused" in again.out
    assert (project.root / "skills/kids/SKILL.md").read_bytes() == SKILL.encode()  # never touched without --apply
    assert api.unexpected == [] and api.errors == []


def test_returning_to_an_earlier_description_costs_nothing(project: Project, cli: InProcess, api: FakeAPI) -> None:
    api.script = improver({D0: NARROW, NARROW: D0})
    run, agent_calls = optimize(cli, project, api, "kids", "-j", "2", "--max-iterations", "3")
    assert run.code == 0, run.err + run.out
    data = result(project)
    assert [it["description"] for it in data["iterations"]] == [D0, NARROW, D0]
    assert calls(data) == [(TRIALS, 0, 1, 0), (TRIALS, 0, 1, 0), (0, TRIALS, 0, 0)]
    assert agent_calls == 2 * TRIALS and api.count(MESSAGES) == 2
    assert data["exit_reason"] == "max_iterations (3)"
    # Starting from a description tried before: its evaluation is free too; its proposal (a new history) is not.
    api.script = improver({NARROW: GOOD})
    run, agent_calls = optimize(cli, project, api, "kids", "-j", "2", "--description", NARROW, "--max-iterations", "2")
    assert run.code == 0, run.err
    assert calls(result(project)) == [(0, TRIALS, 1, 0), (TRIALS, 0, 0, 0)]
    assert agent_calls == TRIALS and api.count(MESSAGES) == 3 and api.errors == []


def test_the_best_is_chosen_by_test_score_not_train(project: Project, cli: InProcess, api: FakeAPI) -> None:
    api.script = improver({D0: OVERFIT})
    run, _ = optimize(cli, project, api, "kids", "-j", "2")
    assert run.code == 0, run.err
    data = result(project)
    assert [(it["train_passed"], it["test_passed"]) for it in data["iterations"]] == [(3, 1), (5, 0)]
    assert data["exit_reason"] == "all_passed (iteration 2)"  # the loop stops on train …
    assert (data["best_iteration"], data["best_description"], data["best_by"]) == (1, D0, "test")  # … keeps by test
    assert (data["best_score"], data["best_passed"], data["best_total"]) == (0.5, 1, 2)
    assert (data["best_train_score"], data["best_test_score"]) == (0.6, 0.5)
    assert "best: iteration 1, test 0.50 (1/2), train 0.60 (3/5)" in run.out
    # Without a test set the train score decides.
    run, agent_calls = optimize(cli, project, api, "kids", "--holdout", "0", "-j", "2", "--max-iterations", "2")
    assert run.code == 0, run.err
    data = result(project)
    assert [it["train_passed"] for it in data["iterations"]] == [4, 5]  # of 7: OVERFIT misses birthday, python
    assert (data["best_iteration"], data["best_by"], data["test_size"], data["best_test_score"]) == (2, "train", 0,
                                                                                                      None)
    assert agent_calls == 0  # the same two descriptions: the same trials, split differently
    assert api.count(MESSAGES) == 2 and api.errors == []  # the history the improver saw differs: asked again


def test_apply_rewrites_only_the_description_and_a_normal_run_reuses_its_trials(project: Project, cli: InProcess,
                                                                                 api: FakeAPI) -> None:
    api.script = improver({D0: GOOD})
    run, _ = optimize(cli, project, api, "kids", "-j", "2", "--apply", "--format", "json", "-o", "out/result.json")
    assert run.code == 0, run.err
    printed = json.loads(run.out)
    assert printed == result(project) == json.loads((project.root / "out/result.json").read_text())
    assert printed["applied"] is True
    assert (project.root / "skills/kids/SKILL.md").read_text() == SKILL.replace(D0, f'"{GOOD}"')
    assert "iteration 2: train 1.00 (5/5)" in run.err  # progress goes to stderr with --format json
    # The applied description is the one the optimiser evaluated: the normal run's trigger trials are its records.
    before = len(claude_log(project.root.parent))
    normal = project.run("--tag", "trigger", env={"SKILLMAKE_CLAUDE": str(install_fake_claude(project.root.parent))})
    assert len(claude_log(project.root.parent)) == before, normal.out + normal.err
    assert "reused 0 trials and 0 grades and 7 trigger trials from the store" in normal.out
    # Applying again changes nothing.
    run, _ = optimize(cli, project, api, "kids", "-j", "2", "--apply")
    assert run.code == 0 and "already holds the best description" in run.out
    assert api.count(MESSAGES) == 1 and api.errors == []


def test_refusals_and_usage_errors_say_the_fix(project: Project, cli: InProcess, api: FakeAPI) -> None:
    project.write("plain.eval.yaml", "skill: skills/kids\nagent: {kind: command, command: [python3, agent.py]}\n"
                                     "cases: [{id: a, prompt: hi, checks: [{type: contains, needle: hi}]}]\n")
    run, _ = optimize(cli, project, api, "plain")
    assert run.code == 2 and "spec plain has no trigger_tests" in run.err and "should_trigger" in run.err
    project.replace("kids.eval.yaml", "kind: claude-code, env", "kind: command, command: [python3, agent.py], env")
    run, _ = optimize(cli, project, api, "kids")
    assert run.code == 2 and "shows no skill activation" in run.err and "{kind: claude-code}" in run.err
    project.write("kids.eval.yaml", SPEC)
    for args, message in ((["kid"], "no spec named 'kid'; did you mean 'kids'?"),
                          (["kids", "--max-itterations", "2"], "did you mean --max-iterations?"),
                          (["kids", "--holdout", "1.5"], "--holdout needs a number"),
                          (["kids", "--runs", "0"], "--runs needs a whole number above 0"),
                          (["kids", "--format", "yaml"], "--format must be text or json")):
        run, agent_calls = optimize(cli, project, api, *args)
        assert (run.code, agent_calls) == (3, 0), (args, run.err)
        assert message in run.err and "Traceback" not in run.err
    # No credentials for the improver: said before any trial runs.
    run, agent_calls = optimize(cli, project, api, "kids", env={"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""})
    assert (run.code, agent_calls) == (3, 0) and "the improver needs ANTHROPIC_API_KEY" in run.err
    assert (project.root / "skills/kids/SKILL.md").read_text() == SKILL and api.count() == 0


def test_ctrl_c_stops_the_agents_and_exits_130(project: Project, api: FakeAPI, tmp_path: Path) -> None:
    fake = install_fake_claude(tmp_path)
    slow = tmp_path / "bin" / "slow-claude"
    slow.write_text(f"#!/bin/sh\ncase \"$*\" in *--version*) ;; *) sleep 0.4 ;; esac\nexec {fake} \"$@\"\n")
    slow.chmod(0o755)
    env = dict(os.environ, SKILLMAKE_CLAUDE=str(slow), **api.anthropic_env())
    proc = subprocess.Popen([sys.executable, "-m", "skillmake", "optimize-description", "kids", "-j", "2"],
                            cwd=project.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(claude_log(tmp_path)) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "skillmake: interrupted; finished trials are kept in the store"
    assert "Traceback" not in err
    assert not (project.root / ".skillmake/reports/kids/description-optimization.json").exists()


def test_a_trial_that_failed_is_reported_left_out_of_the_rate_and_tried_again(project: Project, cli: InProcess,
                                                                              api: FakeAPI) -> None:
    project.replace("kids.eval.yaml", "    - write me a python script\n",
                    "    - write me a python script\n    - FAIL-HARD please\n")
    run, agent_calls = optimize(cli, project, api, "kids", "--max-iterations", "1", "--apply")
    assert (run.code, agent_calls) == (1, 8)
    assert "1 trigger trial(s) ended in error or timeout (tried again next run); first, fail-hard-please run 0: " \
           "claude exited with 1" in run.err
    data = result(project)
    failed = next(r for r in data["history"][0]["train_results"] + data["history"][0]["test_results"]
                  if r["id"] == "fail-hard-please")
    assert (failed["runs"], failed["errors"], failed["trigger_rate"], failed["pass"]) == (0, 1, None, False)
    assert data["iterations"][0]["errors"] == 1 and data["applied"] is False
    assert "not changed: the loop did not finish cleanly" in run.out
    assert (project.root / "skills/kids/SKILL.md").read_bytes() == SKILL.encode()
    run, agent_calls = optimize(cli, project, api, "kids", "--max-iterations", "1")
    assert (run.code, agent_calls) == (1, 1)  # only the failed trial runs again
    assert calls(result(project)) == [(1, 7, 0, 0)]
