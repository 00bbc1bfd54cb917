"""`skillmake compare` through the real CLI: a command agent that logs every call, and the anthropic judge at the
loopback fake, counting agent calls and judge requests for every claim — a rerun asks nothing, a new case asks
only about its own pairs, swapping A and B reuses both orders, and a judge that prefers whatever it is shown
first is cancelled by the swap. `compare` runs through `skillmake.commands.cli.main` in this process (inprocess.py); a
build (`skillmake` alone) in a child."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fakeapi import FakeAPI, Recorded, Reply

from .inprocess import InProcess
from .project import Project, Run

MESSAGES = "/v1/messages"
# Uppercase and "!" with a skill that says UPPERCASE, title case with one that says Title, else the prompt as is.
# The trial index makes every trial's output distinct; nothing in an output names its arm.
AGENT = '''\
import os, sys
from pathlib import Path
here = Path(__file__).resolve().parent
env = os.environ
with open(here / "calls.log", "a") as log:
    log.write(env["SKILLMAKE_CASE"] + " " + env["SKILLMAKE_ARM"] + " " + env["SKILLMAKE_TRIAL"] + "\\n")
prompt = sys.stdin.read().strip()
skill = os.environ.get("SKILLMAKE_SKILL", "")
body = Path(skill, "SKILL.md").read_text() if skill else ""
out = prompt.upper() + "!" if "UPPERCASE" in body else prompt.title() + "." if "Title" in body else prompt
print(out + " #" + env["SKILLMAKE_TRIAL"])
'''
LOUD = "---\nname: alpha\ndescription: shouts\n---\nAnswer in UPPERCASE.\n"
TITLED = "---\nname: alpha\ndescription: shouts\n---\nAnswer in Title case.\n"
SPEC = '''\
skill: skills/alpha
agent: {kind: command, command: [python3, agent.py]}
trials: 2
baseline: true
cases:
  - {id: one, prompt: say one, checks: [{type: contains, needle: ONE}]}
  - {id: two, prompt: say two, user_prompt: "Greet the team, please", checks: [{type: contains, needle: TWO}]}
'''
CASE_THREE = "  - {id: three, prompt: say three, checks: [{type: contains, needle: THREE}]}\n"


def project(root: Path, spec: str = SPEC) -> Project:
    return Project.empty(root, {"agent.py": AGENT, "skills/alpha/SKILL.md": LOUD, "alpha.eval.yaml": spec})


def shown(request: Recorded, n: int) -> str:
    """What the judge was shown as Output n."""
    text = request.message_text(0)  # the prompt arrives as text blocks, its shared prefix marked cacheable
    return text.split(f"<output_{n}>", 1)[1].split(f"</output_{n}>", 1)[0]


def prefers_first(request: Recorded) -> Reply:
    """A judge with pure position bias: whatever it sees first wins."""
    return Reply.tool_use("record_verdict", {"winner": "1", "reasoning": "Output 1 is better than Output 2."})


def prefers_loud(request: Recorded) -> Reply:
    """A judge that prefers the shouted output, wherever it is shown."""
    loud = [n for n in (1, 2) if "!" in shown(request, n)]
    winner = str(loud[0]) if len(loud) == 1 else "tie"
    return Reply.tool_use("record_verdict", {"winner": winner, "reasoning": f"Output {winner} shouts as asked.",
                                             "confidence": "high"})  # a key the schema does not name


@pytest.fixture
def api() -> Any:
    with FakeAPI() as fake:
        yield fake


@pytest.fixture
def cli(capfd: pytest.CaptureFixture[str]) -> InProcess:
    return InProcess(capfd)


def compare(cli: InProcess, p: Project, api: FakeAPI, *args: str) -> Run:
    return cli.run(p, "compare", *args, env=api.anthropic_env())


def result(p: Project, name: str = "with_skill-vs-without_skill") -> dict[str, Any]:
    return dict(json.loads((p.root / ".skillmake/reports/alpha/comparisons" / f"{name}.json").read_text()))


def forget_stored_copy(p: Project, text: str) -> None:
    """Take a file's content out of the store, where a run's snapshot of the skill keeps it (as a store from before
    snapshots kept their files would be): then only git, if anything, has the old version."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    (p.root / ".skillmake" / "objects" / digest[:2] / digest[2:]).unlink()


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=root,
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


# -- incrementality, by counting calls -------------------------------------------------------------------------


def test_judge_calls_first_run_rerun_added_case_and_swapped_order(tmp_path: Path, cli: InProcess, api: FakeAPI) -> None:
    p = project(tmp_path)
    api.script = prefers_loud
    first = compare(cli, p, api, "alpha")
    assert first.code == 0, first.err + first.out
    assert first.agent_calls == 8  # 2 cases × 2 arms × 2 trials
    assert api.count(MESSAGES) == 8  # 2 cases × 2 trials (pairs) × 2 orders
    assert "agent calls: 8 made, 0 reused; judge calls: 8 made (8 request(s)" in first.out

    again = compare(cli, p, api, "alpha")
    assert again.code == 0 and again.agent_calls == 0 and api.count(MESSAGES) == 8
    assert "agent calls: 0 made, 8 reused; judge calls: 0 made (0 request(s)), 8 reused" in again.out

    p.write("alpha.eval.yaml", SPEC + CASE_THREE)
    added = compare(cli, p, api, "alpha")
    assert added.code == 0, added.err
    assert added.agent_calls == 4  # case three × 2 arms × 2 trials
    assert api.count(MESSAGES) == 8 + 4  # only case three's 2 pairs, in both orders
    assert [c["id"] for c in result(p)["cases"]] == ["one", "two", "three"]

    swapped = compare(cli, p, api, "alpha", "without_skill", "with_skill")
    assert swapped.code == 0, swapped.err
    assert swapped.agent_calls == 0 and api.count(MESSAGES) == 12  # both orders of every pair are stored
    data = result(p, "without_skill-vs-with_skill")
    assert data["summary"]["b_wins"] == 6 and data["summary"]["win_rate"] == 0.0
    assert data["summary"]["winner"] == "B" and data["calls"]["judge"] == {"made": 0, "reused": 12, "requests": 0,
                                                                          "cost_usd": None}
    assert api.unexpected == [] and api.errors == []


def test_position_bias_injected_by_the_judge_is_cancelled_by_the_swap(tmp_path: Path, cli: InProcess,
                                                                      api: FakeAPI) -> None:
    p = project(tmp_path)
    api.script = prefers_first
    run = compare(cli, p, api, "alpha")
    assert run.code == 0, run.err + run.out
    data = result(p)
    summary = data["summary"]
    assert (summary["a_wins"], summary["b_wins"], summary["ties"], summary["pairs"]) == (0, 0, 4, 4)
    assert summary["win_rate"] == 0.5 and summary["winner"] == "TIE"
    low, high = summary["ci95"]
    assert low < 0.5 < high
    assert summary["cases"] == {"A": 0, "B": 0, "TIE": 2, "unjudged": 0}
    for case in data["cases"]:
        assert case["winner"] == "TIE"
        assert case["reasoning"] == "the two orders disagree; first: Output A is better than Output B."
        for pair in case["pairs"]:
            # Each order picked the side it showed first: A, then B. The pair is a tie.
            assert [(o["shown"], o["winner"]) for o in pair["orders"]] == [(["A", "B"], "A"), (["B", "A"], "B")]
            assert pair["winner"] == "TIE"
            assert pair["orders"][0]["reasoning"] == "Output A is better than Output B."
            assert pair["orders"][1]["reasoning"] == "Output B is better than Output A."
    assert "no clear winner" in run.out and "with_skill's win rate 0.50" in run.out


def test_the_better_output_wins_in_both_orders(tmp_path: Path, cli: InProcess, api: FakeAPI) -> None:
    p = project(tmp_path)
    api.script = prefers_loud
    run = compare(cli, p, api, "alpha", "--format", "json")
    assert run.code == 0, run.err
    data = result(p)
    assert json.loads(run.out) == data  # --format json prints the result file
    summary = data["summary"]
    assert (summary["a_wins"], summary["b_wins"], summary["ties"]) == (4, 0, 0)
    assert summary["win_rate"] == 1.0 and summary["winner"] == "A"  # 4 of 4: the whole interval is above 0.5
    assert summary["cases"] == {"A": 2, "B": 0, "TIE": 0, "unjudged": 0}
    assert [c["winner"] for c in data["cases"]] == ["A", "A"]
    assert data["cases"][0]["reasoning"] == "Output A shouts as asked."
    pair = data["cases"][0]["pairs"][0]
    assert [(o["shown"], o["winner"]) for o in pair["orders"]] == [(["A", "B"], "A"), (["B", "A"], "A")]
    assert data["a"]["label"] == "with_skill" and data["b"] == {"label": "without_skill", "title": "arm without_skill",
                                                               "arm": "without_skill", "skill": None}
    table = compare(cli, p, api, "alpha").out.splitlines()
    assert table[2].split() == ["case", "winner", "A", "B", "ties", "reason"]
    assert table[3].split()[:5] == ["one", "with_skill", "2", "0", "0"]
    assert "with_skill's win rate 1.00 (95% CI 0.51-1.00): with_skill is better" in table[5]
    # What the judge saw: the task and two outputs, never an arm, the skill or where each output came from.
    requests = [r for r in api.requests if r.path == MESSAGES]
    assert len(requests) == 8
    for request in requests:
        text = request.text()
        for secret in ("with_skill", "without_skill", "skills/alpha", "Answer in UPPERCASE", "baseline"):
            assert secret not in text
        assert request.json and request.json["tool_choice"] == {"type": "tool", "name": "record_verdict"}
    tasks = sorted({r.text().split("<task>\n", 1)[1].split("\n</task>", 1)[0] for r in requests})
    assert tasks == ["Greet the team, please", "say one"]  # clauditor's user_prompt, else the prompt


def test_identical_outputs_are_ties_without_a_judge_call(tmp_path: Path, cli: InProcess, api: FakeAPI) -> None:
    spec = SPEC.replace("baseline: true\n", "baseline: true\nvariants: [{name: same, agent: {model: m-2}}]\n")
    p = project(tmp_path, spec)
    api.script = prefers_loud
    run = compare(cli, p, api, "alpha", "with_skill", "same")
    assert run.code == 0, run.err
    assert run.agent_calls == 8 and api.count(MESSAGES) == 0
    data = result(p, "with_skill-vs-same")
    assert data["summary"]["ties"] == 4 and all(p_["identical"] for c in data["cases"] for p_ in c["pairs"])
    assert data["cases"][0]["reasoning"] == "the two outputs are identical"


# -- other versions of the skill ------------------------------------------------------------------------------


def test_against_a_folder_runs_only_that_versions_trials(tmp_path: Path, cli: InProcess, api: FakeAPI) -> None:
    p = project(tmp_path / "proj")
    api.script = prefers_loud
    assert compare(cli, p, api, "alpha").agent_calls == 8
    other = tmp_path / "elsewhere" / "alpha"
    other.mkdir(parents=True)
    (other / "SKILL.md").write_text(TITLED)
    run = compare(cli, p, api, "alpha", "--against", str(other))
    assert run.code == 0, run.err
    assert run.agent_calls == 4  # the folder's version, 2 cases × 2 trials; the current skill's are stored
    assert api.count(MESSAGES) == 8 + 8
    data = result(p, "current-vs-dir-alpha")
    assert data["b"]["skill"]["source"] == "folder" and data["b"]["skill"]["recovered"] is True
    assert data["summary"]["a_wins"] == 4 and data["calls"]["agent"] == {"ran": 4, "reused": 4}
    again = compare(cli, p, api, "alpha", "--against", str(tmp_path / "elsewhere"))  # the folder that holds it, too
    assert again.code == 0 and again.agent_calls == 0 and api.count(MESSAGES) == 16


def test_against_a_git_revision_exports_the_skill_and_reuses_its_trials_by_content(tmp_path: Path, cli: InProcess,
                                                                                   api: FakeAPI) -> None:
    p = project(tmp_path)
    git(p.root, "init", "-q")
    git(p.root, "add", "agent.py", "skills", "alpha.eval.yaml")
    git(p.root, "commit", "-qm", "loud")
    p.write("skills/alpha/SKILL.md", TITLED)  # uncommitted: the current skill titles, HEAD's shouts
    api.script = prefers_loud
    run = compare(cli, p, api, "alpha", "--against", "HEAD")
    assert run.code == 0, run.err + run.out
    assert run.agent_calls == 8 and api.count(MESSAGES) == 8  # both versions' trials; every pair in both orders
    head = git(p.root, "rev-parse", "HEAD")
    data = result(p, f"current-vs-rev-{head[:12]}")
    assert data["b"]["skill"] | {"digest": None} == {"digest": None, "source": "revision", "path": None,
                                                     "revision": "HEAD", "commit": head, "snapshot": None,
                                                     "recovered": True}
    assert data["summary"]["b_wins"] == 4  # HEAD's version shouts
    assert not list((p.root / ".skillmake/work").glob("compare-*"))  # the exported skill is gone again
    assert compare(cli, p, api, "alpha", "--against", "HEAD").agent_calls == 0 and api.count(MESSAGES) == 8
    # Commit the titled version: HEAD~1 is the loud one, exported to another folder, with the same trial keys.
    git(p.root, "commit", "-qam", "titled")
    older = compare(cli, p, api, "alpha", "--against", "HEAD~1")
    assert older.code == 0 and older.agent_calls == 0 and api.count(MESSAGES) == 8
    bad = compare(cli, p, api, "alpha", "--against", "no-such-rev")
    assert bad.code == 3 and "Traceback" not in bad.err
    assert "--against no-such-rev: no such folder, and git knows no revision 'no-such-rev'" in bad.err
    same = compare(cli, p, api, "alpha", "--against", "HEAD")
    assert same.code == 3 and "nothing to compare" in same.err


def test_previous_compares_with_the_version_of_the_last_recorded_report(tmp_path: Path, cli: InProcess,
                                                                        api: FakeAPI) -> None:
    p = project(tmp_path)
    api.script = prefers_loud
    assert p.run().agent_calls == 8  # a run records the skill's version in reports/alpha/snapshots/
    forget_stored_copy(p, LOUD)  # git has no copy either: the old files are nowhere
    unchanged = compare(cli, p, api, "alpha", "--previous")
    assert unchanged.code == 3 and "has not changed since its last recorded report" in unchanged.err
    p.write("skills/alpha/SKILL.md", TITLED)
    run = compare(cli, p, api, "alpha", "--previous")
    assert run.code == 0, run.err + run.out
    assert run.agent_calls == 4  # the skill now; the previous version's trials are in the store
    assert api.count(MESSAGES) == 8
    data = result(p, "current-vs-previous")
    assert data["summary"]["b_wins"] == 4
    # With the old files nowhere (a command agent keeps no workspace), its stored trials serve all the same...
    assert data["b"]["skill"]["recovered"] is False and data["b"]["skill"]["snapshot"].endswith(".json")
    # ...but a case they never ran cannot be run for it, and it says so before running anything.
    p.write("alpha.eval.yaml", SPEC + CASE_THREE)
    blocked = compare(cli, p, api, "alpha", "--previous")
    assert blocked.code == 3 and blocked.agent_calls == 0
    assert "2 trial(s) of the skill as of its report of" in blocked.err
    assert "could not be recovered from the store or git: SKILL.md" in blocked.err


def test_previous_recovers_the_old_files_from_git_to_run_a_new_case(tmp_path: Path, cli: InProcess,
                                                                    api: FakeAPI) -> None:
    p = project(tmp_path)
    git(p.root, "init", "-q")
    git(p.root, "add", "agent.py", "skills", "alpha.eval.yaml")
    git(p.root, "commit", "-qm", "loud")
    assert p.run().agent_calls == 8
    forget_stored_copy(p, LOUD)  # so that git is where they come from
    p.write("skills/alpha/SKILL.md", TITLED)
    p.write("alpha.eval.yaml", SPEC + CASE_THREE)
    api.script = prefers_loud
    run = compare(cli, p, api, "alpha", "--previous")
    assert run.code == 0, run.err + run.out
    assert run.agent_calls == 6 + 2  # the skill now, 3 cases × 2; the old one only for case three, from git
    assert sorted(p.calls()[-8:]).count("three with_skill 0") == 2
    data = result(p, "current-vs-previous")
    assert data["b"]["skill"]["recovered"] is True and data["summary"]["b_wins"] == 6


# -- what goes wrong --------------------------------------------------------------------------------------------


def test_usage_errors_say_what_to_pass(tmp_path: Path, cli: InProcess, api: FakeAPI) -> None:
    p = project(tmp_path, SPEC.replace("baseline: true\n", ""))
    no_baseline = compare(cli, p, api, "alpha")
    assert no_baseline.code == 3
    assert "spec alpha has no without_skill arm to compare with_skill with" in no_baseline.err
    assert "--against REV|DIR" in no_baseline.err and "--previous" in no_baseline.err
    arm = compare(cli, p, api, "alpha", "with_skil", "with_skill")
    assert arm.code == 3 and "no arm 'with_skil'; did you mean 'with_skill'?" in arm.err
    flag = compare(cli, p, api, "alpha", "--formt", "json")
    assert flag.code == 3 and "unknown option --formt for `skillmake compare`; did you mean --format?" in flag.err
    spec = compare(cli, p, api, "alpah")
    assert spec.code == 3 and "no spec named 'alpah'; did you mean 'alpha'?" in spec.err
    case = compare(cli, p, api, "alpha", "--against", "HEAD", "-k", "on")
    assert case.code == 3 and "has no case 'on'; did you mean 'one'?" in case.err
    for run in (no_baseline, arm, flag, spec, case):
        assert "Traceback" not in run.err and run.agent_calls == 0
    assert api.count() == 0
    assert "usage: skillmake compare SPEC" in cli.run(p, "compare", "--help").out


def test_no_judge_credentials_is_a_usage_error_before_any_trial(tmp_path: Path, cli: InProcess) -> None:
    p = project(tmp_path)
    run = cli.run(p, "compare", "alpha")
    assert run.code == 3 and run.agent_calls == 0
    assert "the judge needs ANTHROPIC_API_KEY" in run.err


def test_a_reply_without_a_verdict_leaves_the_pair_unjudged_and_is_asked_again(tmp_path: Path, cli: InProcess,
                                                                               api: FakeAPI) -> None:
    p = project(tmp_path)
    api.default = Reply.text("Both look fine to me.")
    run = compare(cli, p, api, "alpha", "-k", "one")
    assert run.code == 1, run.err + run.out
    data = result(p)
    assert data["summary"]["unjudged"] == 2 and data["summary"]["pairs"] == 0 and data["summary"]["win_rate"] is None
    assert "gave no usable verdict" in data["cases"][0]["pairs"][0]["orders"][0]["error"]
    assert "2 unjudged" in run.out
    assert api.count(MESSAGES) == 4
    api.default = None
    api.script = prefers_loud
    again = compare(cli, p, api, "alpha", "-k", "one")
    assert again.code == 0 and api.count(MESSAGES) == 8  # nothing was cached: every order is asked again


def test_an_invalid_spec_is_reported_with_its_errors(tmp_path: Path, cli: InProcess, api: FakeAPI) -> None:
    p = project(tmp_path, SPEC.replace("trials: 2", "trials: two"))
    run = compare(cli, p, api, "alpha")
    assert run.code == 2 and run.agent_calls == 0 and "Traceback" not in run.err
    assert run.err.startswith("alpha.eval.yaml:3:")
    assert "skillmake compare: spec alpha is invalid; fix it first (`skillmake validate alpha.eval.yaml`)" in run.err
