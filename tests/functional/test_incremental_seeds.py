"""The incrementality catalogue of test_incremental.py, for seed projects: a clauditor project (commands beside their
`<name>.eval.json`, and a SKILL.md folder with its `SKILL.eval.json`) and a skill-creator project (`<skill>/SKILL.md`
with `<skill>/evals/evals.json`). Each edit causes exactly the agent and judge calls it causes for a native spec,
counted at the agent's log and at the fake API. An edit that does not behave so yet keeps its correct expectation
under `xfail(strict=True)`: it fails the suite the day it starts to hold, so the marker cannot outlive the fix.

clauditor has no baseline: a clauditor project has no without_skill arm, so that entry of the catalogue is the
skill-creator project's."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.functional.project import AGENT, Project

JUDGE = "/v1/chat/completions"

# clauditor specs name no agent and no project agent reaches them yet (see the xfail below): they run on the
# harness clauditor would choose, `auto` → claude-code when `claude` is found. This stand-in `claude` logs each
# prompt to calls.log at the project root and answers with the prompt and the staged .txt files, shouted when
# the installed skill says UPPERCASE; a nonce makes every trial's output (so every grade key) distinct.
FAKE_CLAUDE = '''\
import json, os, pathlib, sys, uuid
if "--version" in sys.argv:
    print("2.1.328 (Claude Code)"); sys.exit(0)
prompt = sys.stdin.read().strip()
root = pathlib.Path(__file__).resolve().parent.parent
with open(root / "calls.log", "a") as log:
    log.write(prompt.replace("\\n", " ") + "\\n")
body = "".join(p.read_text() if p.is_file() else (p / "SKILL.md").read_text()
               for p in sorted(pathlib.Path(".claude").glob("*/*")))
for name in sorted(os.listdir(".")):
    if name.endswith(".txt"):
        prompt += " " + pathlib.Path(name).read_text().strip()
text = (prompt.upper() + "!" if "UPPERCASE" in body else prompt) + " " + uuid.uuid4().hex
for event in ({"type": "system", "subtype": "init", "tools": ["Skill"], "model": "claude-sonnet-4-6"},
              {"type": "assistant", "message": {"id": "msg_1", "content": [{"type": "text", "text": text}]}},
              {"type": "result", "subtype": "success", "is_error": False, "result": text, "num_turns": 1,
               "total_cost_usd": 0.001, "usage": {"input_tokens": 10, "output_tokens": 5}}):
    print(json.dumps(event))
'''

ALPHA = """\
{
  "skill_name": "alpha",
  "description": "shouts one",
  "test_args": "say one",
  "input_files": ["fixtures/alpha.txt"],
  "assertions": [{"id": "loud", "type": "contains", "needle": "ONE"}],
  "grading_criteria": [{"id": "shouted", "criterion": "Is the answer shouted?"}],
  "variance": {"n_runs": 3}
}
"""
BETA = """\
{
  "skill_name": "beta",
  "test_args": "say two",
  "assertions": [{"id": "loud", "type": "contains", "needle": "TWO"}],
  "variance": {"n_runs": 3}
}
"""
GAMMA = """\
{
  "skill_name": "gamma",
  "test_args": "say three",
  "assertions": [{"id": "loud", "type": "contains", "needle": "THREE"}],
  "variance": {"n_runs": 3}
}
"""
COMMAND = "---\ndescription: {what}\n---\nAnswer in UPPERCASE.\n"
# variance.n_runs is not a trial count (clauditor runs once; --variance N adds runs): the project's trials decide.
CLAUDITOR_CONFIG = "trials = 3\n"
PER_SPEC = 3
CLAUDITOR_ALL = 3 * PER_SPEC  # alpha, beta, gamma: one case each, with_skill only (clauditor has no baseline)


def criteria_or_expectations(request: Recorded) -> Reply:
    """The judge: every criterion (clauditor) or expectation (skill-creator) passes when the output shouts."""
    text = request.text()
    shouted = re.search(r"[A-Z]{3,}!", text) is not None
    criteria = re.findall(r"^- id: (\S+)$", text, flags=re.MULTILINE)
    if criteria:
        return Reply.text(json.dumps({"criteria": [{"id": c, "passed": shouted, "score": 1.0 if shouted else 0.0,
                                                    "evidence": "as written", "reasoning": "shouted or not"}
                                                   for c in criteria]}))
    ids = re.findall(r"^- (E\d+): ", text, flags=re.MULTILINE)
    return Reply.text(json.dumps({"expectations": [{"id": i, "passed": shouted, "evidence": "as written"}
                                                   for i in ids]}))


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        fake.script = criteria_or_expectations
        yield fake


def judge_env(api: FakeAPI) -> dict[str, str]:
    return {**api.openai_env(), "SKILLMAKE_JUDGE_PROVIDER": "openai", "SKILLMAKE_JUDGE_MODEL": "gpt-5.4-mini"}


def clean_env() -> dict[str, str]:
    """The variables a run settles on, blanked where the caller's shell set them (an inherited SKILLMAKE_TRIALS
    or CLAUDITOR_HARNESS would change every count)."""
    names = [v for v in os.environ if v.startswith(("SKILLMAKE_", "CLAUDITOR_"))]
    return dict.fromkeys(names, "")


class Counted:
    """A project run with the agent calls, grades and judge calls it caused."""

    def __init__(self, project: Project, api: FakeAPI, env: dict[str, str]) -> None:
        self.project, self.api, self.env = project, api, env

    def run(self, *args: str) -> tuple[int, int, int]:
        judged = self.api.count(JUDGE)
        done = self.project.run(*args, env=self.env)
        assert done.code in (0, 1), done.out + done.err
        assert "Traceback" not in done.err, done.err
        return done.agent_calls, done.grades, self.api.count(JUDGE) - judged

    def calls(self, n: int) -> list[str]:
        return self.project.calls()[-n:] if n else []


# -- clauditor ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clauditor(tmp_path_factory: pytest.TempPathFactory, api: FakeAPI) -> Counted:
    root = tmp_path_factory.mktemp("clauditor")
    claude = root / "bin" / "claude"
    files = {
        "skillmake.toml": CLAUDITOR_CONFIG,
        ".claude/commands/alpha.md": COMMAND.format(what="shouts one"),
        ".claude/commands/alpha.eval.json": ALPHA,
        ".claude/commands/fixtures/alpha.txt": "alpha's input\n",
        ".claude/commands/beta.md": COMMAND.format(what="shouts two"),
        ".claude/commands/beta.eval.json": BETA,
        ".claude/skills/gamma/SKILL.md": "---\nname: gamma\ndescription: shouts three\n---\nAnswer in UPPERCASE.\n",
        ".claude/skills/gamma/SKILL.eval.json": GAMMA,
        "bin/claude": f"#!{sys.executable}\n{FAKE_CLAUDE}",
    }
    project = Project.empty(root, files)
    claude.chmod(0o755)
    env = {**clean_env(), **judge_env(api), "SKILLMAKE_CLAUDE": str(claude), "ANTHROPIC_API_KEY": "sk-test-not-a-key"}
    counted = Counted(project, api, env)
    assert counted.run() == (CLAUDITOR_ALL, CLAUDITOR_ALL, PER_SPEC)  # alpha's grades ask the criteria judge
    assert sorted(set(project.calls())) == ["/alpha say one", "/beta say two", "/gamma say three"]
    return counted


def test_clauditor_no_change_and_touch_without_change_run_nothing(clauditor: Counted) -> None:
    assert clauditor.run() == (0, 0, 0)
    for rel in (".claude/commands/alpha.md", ".claude/commands/alpha.eval.json", ".claude/commands/fixtures/alpha.txt",
                ".claude/skills/gamma/SKILL.md", ".claude/skills/gamma/SKILL.eval.json"):
        os.utime(clauditor.project.root / rel, (1, 1))
    assert clauditor.run() == (0, 0, 0)


def test_clauditor_test_args_edit_reruns_that_spec_only(clauditor: Counted) -> None:
    p = clauditor.project
    p.replace(".claude/commands/beta.eval.json", '"say two"', '"say two please"')
    assert clauditor.run() == (PER_SPEC, PER_SPEC, 0)  # beta's 3 trials and their grades; beta has no criteria
    assert set(clauditor.calls(PER_SPEC)) == {"/beta say two please"}
    p.replace(".claude/commands/beta.eval.json", '"say two please"', '"say two"')
    assert clauditor.run() == (0, 0, 0)


def test_clauditor_assertion_edit_regrades_without_rerunning(clauditor: Counted) -> None:
    clauditor.project.replace(".claude/commands/alpha.eval.json", '"needle": "ONE"', '"needle": "ONE!"')
    assert clauditor.run() == (0, PER_SPEC, PER_SPEC)  # a grade is every check and judge of the case


def test_clauditor_grading_criteria_edit_regrades_without_rerunning(clauditor: Counted) -> None:
    clauditor.project.replace(".claude/commands/alpha.eval.json", "Is the answer shouted?", "Is it shouted?")
    assert clauditor.run() == (0, PER_SPEC, PER_SPEC)


def test_clauditor_assertion_edit_inside_the_skill_folder_regrades_without_rerunning(clauditor: Counted) -> None:
    # SKILL.eval.json sits in the skill folder, but a spec is not part of the skill: no with_skill trial re-runs.
    clauditor.project.replace(".claude/skills/gamma/SKILL.eval.json", '"needle": "THREE"', '"needle": "THREE!"')
    assert clauditor.run() == (0, PER_SPEC, 0)


def test_clauditor_n_runs_is_not_a_trial_count_and_editing_it_runs_nothing(clauditor: Counted) -> None:
    # clauditor's grade and validate never read variance.n_runs (`--variance N` sets its extra runs): the project's
    # trials decide here, so an edit of n_runs changes no trial and no grade.
    p = clauditor.project
    p.replace(".claude/commands/alpha.eval.json", '"n_runs": 3', '"n_runs": 5')
    try:
        assert clauditor.run() == (0, 0, 0)
    finally:
        p.replace(".claude/commands/alpha.eval.json", '"n_runs": 5', '"n_runs": 3')
    assert clauditor.run() == (0, 0, 0)


def test_clauditor_skill_edit_reruns_only_that_skill_and_revert_reuses(clauditor: Counted) -> None:
    p = clauditor.project
    original = p.read(".claude/commands/alpha.md")
    p.write(".claude/commands/alpha.md", original + "Be brief.\n")
    assert clauditor.run() == (PER_SPEC, PER_SPEC, PER_SPEC)  # new outputs (the agent's nonce): new grades
    assert set(clauditor.calls(PER_SPEC)) == {"/alpha say one"}
    p.write(".claude/commands/alpha.md", original)
    assert clauditor.run() == (0, 0, 0)


def test_clauditor_whitespace_and_key_order_in_the_json_change_nothing(clauditor: Counted) -> None:
    p = clauditor.project
    data = json.loads(p.read(".claude/commands/alpha.eval.json"))
    reordered = json.dumps(dict(reversed(list(data.items()))), indent=7) + "\n\n"
    assert reordered != p.read(".claude/commands/alpha.eval.json")
    p.write(".claude/commands/alpha.eval.json", reordered)
    compact = json.dumps(json.loads(p.read(".claude/skills/gamma/SKILL.eval.json")), separators=(",", ":"))
    p.write(".claude/skills/gamma/SKILL.eval.json", compact)
    assert clauditor.run() == (0, 0, 0)


def test_clauditor_fixture_edit_reruns_only_the_spec_that_stages_it(clauditor: Counted) -> None:
    clauditor.project.write(".claude/commands/fixtures/alpha.txt", "alpha's new input\n")
    assert clauditor.run() == (PER_SPEC, PER_SPEC, PER_SPEC)
    assert set(clauditor.calls(PER_SPEC)) == {"/alpha say one"}


def test_clauditor_runs_on_the_projects_command_agent(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "p", {
        "agent.py": AGENT,
        "skillmake.toml": 'agent = {kind = "command", command = ["python3", "agent.py"]}\n',
        ".claude/commands/beta.md": COMMAND.format(what="shouts two"),
        ".claude/commands/beta.eval.json": BETA.replace('"n_runs": 3', '"n_runs": 1'),
    })
    done = project.run(env={**clean_env(), "PATH": os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin"})
    assert done.code in (0, 1), done.out + done.err
    assert project.calls() == ["beta with_skill 0"]  # the command agent's log: case, arm, k


# -- skill-creator -----------------------------------------------------------------------------------------------

EVALS = """\
{
  "skill_name": "alpha",
  "evals": [
    {"id": 0, "prompt": "say zero", "expected_output": "zero, shouted",
     "expectations": ["The output shouts zero"]},
    {"id": 1, "prompt": "say one", "expected_output": "one, shouted", "files": ["evals/files/shared.txt"],
     "expectations": ["The output shouts one"]},
    {"id": 2, "prompt": "say two", "expected_output": "two, shouted", "files": ["evals/files/only2.txt"],
     "assertions": [{"name": "shouts", "description": "The output shouts two", "type": "contains_text"}]}
  ]
}
"""
BETA_EVALS = """\
{"skill_name": "beta", "evals": [{"id": 7, "prompt": "say seven", "expectations": ["The output shouts seven"]}]}
"""
# Absolute: a command's program path is relative to the spec's folder, and evals.json sits in <skill>/evals/.
SC_CONFIG = 'trials = 3\nagent = {{kind = "command", command = ["python3", "{root}/agent.py"]}}\n'
SC_CASES, TRIALS, ARMS = 4, 3, 2  # alpha's evals 0, 1, 2 and beta's 7; with and without the skill
SC_ALL = SC_CASES * TRIALS * ARMS  # 24: each trial graded once, each grade one expectations judge call
CELL = TRIALS * ARMS  # one eval's trials: 6


@pytest.fixture(scope="module")
def creator(tmp_path_factory: pytest.TempPathFactory, api: FakeAPI) -> Counted:
    root = tmp_path_factory.mktemp("skill-creator")
    project = Project.empty(root, {
        "agent.py": AGENT,
        "skillmake.toml": SC_CONFIG.format(root=root),
        "alpha/SKILL.md": "---\nname: alpha\ndescription: shouts\n---\nAnswer in UPPERCASE.\n",
        "alpha/reference.md": "extra notes\n",
        "alpha/evals/evals.json": EVALS,
        "alpha/evals/files/shared.txt": "shared input\n",
        "alpha/evals/files/only2.txt": "two's input\n",
        "beta/SKILL.md": "---\nname: beta\ndescription: shouts too\n---\nUse UPPERCASE.\n",
        "beta/evals/evals.json": BETA_EVALS,
    })
    counted = Counted(project, api, {**clean_env(), **judge_env(api)})
    assert counted.run() == (SC_ALL, SC_ALL, SC_ALL)
    return counted


def evals_of(calls: list[str]) -> set[str]:
    return {line.split()[0] for line in calls}


def test_skill_creator_no_change_and_touch_without_change_run_nothing(creator: Counted) -> None:
    assert creator.run() == (0, 0, 0)
    for rel in ("alpha/SKILL.md", "alpha/evals/evals.json", "alpha/evals/files/shared.txt"):
        os.utime(creator.project.root / rel, (1, 1))
    assert creator.run() == (0, 0, 0)


def test_skill_creator_prompt_edit_reruns_that_eval_only(creator: Counted) -> None:
    creator.project.replace("alpha/evals/evals.json", '"say zero"', '"say zero please"')
    assert creator.run() == (CELL, CELL, CELL)  # eval 0: 3 trials × 2 arms, each graded
    assert evals_of(creator.calls(CELL)) == {"eval-0"}


def test_skill_creator_expectation_edit_regrades_without_rerunning(creator: Counted) -> None:
    creator.project.replace("alpha/evals/evals.json", "The output shouts one", "The output shouts ONE")
    assert creator.run() == (0, CELL, CELL)  # eval 1's grades, both arms


def test_skill_creator_assertion_description_edit_regrades_without_rerunning(creator: Counted) -> None:
    creator.project.replace("alpha/evals/evals.json", "The output shouts two", "The output shouts TWO")
    assert creator.run() == (0, CELL, CELL)


def test_skill_creator_editing_evals_json_alone_never_reruns_a_trial(creator: Counted) -> None:
    # The evals are not part of the skill: what a trial is not given (descriptions, names, what success looks
    # like to the grader, a file no eval stages) re-runs nothing.
    p = creator.project
    p.replace("alpha/evals/evals.json", '"name": "shouts"', '"name": "shouts-two"')
    p.replace("alpha/evals/evals.json", '"type": "contains_text"', '"type": "custom"')
    p.write("alpha/evals/files/unused.txt", "staged by no eval\n")
    p.write("alpha/evals/notes.md", "why these evals\n")
    agent_calls, _, _ = creator.run()
    assert agent_calls == 0


def test_skill_creator_more_trials_run_only_the_new_indices_and_fewer_run_nothing(creator: Counted) -> None:
    p = creator.project
    p.replace("skillmake.toml", "trials = 3", "trials = 5")
    try:
        assert creator.run() == (SC_CASES * ARMS * 2,) * 3  # 2 more per eval and arm: 16
        assert {line.split()[2] for line in creator.calls(SC_CASES * ARMS * 2)} == {"3", "4"}
    finally:
        p.replace("skillmake.toml", "trials = 5", "trials = 3")
    assert creator.run() == (0, 0, 0)


def test_skill_creator_skill_edit_reruns_only_its_with_skill_trials_and_revert_reuses(creator: Counted) -> None:
    p = creator.project
    original = p.read("alpha/SKILL.md")
    p.write("alpha/SKILL.md", original + "Be brief.\n")
    ran = 3 * TRIALS  # alpha's 3 evals × with_skill; without_skill and beta untouched
    assert creator.run() == (ran, 0, 0)  # the command agent's output did not change: its grades are reused
    assert {line.split()[1] for line in creator.calls(ran)} == {"with_skill"}
    assert evals_of(creator.calls(ran)) == {"eval-0", "eval-1", "eval-2"}
    p.write("alpha/SKILL.md", original)
    assert creator.run() == (0, 0, 0)


def test_skill_creator_edit_of_any_skill_file_outside_evals_counts(creator: Counted) -> None:
    p = creator.project
    p.write("alpha/reference.md", "changed notes\n")
    assert creator.run()[0] == 3 * TRIALS
    p.write("alpha/reference.md", "extra notes\n")
    assert creator.run() == (0, 0, 0)


def test_skill_creator_fixture_edit_reruns_only_the_evals_that_stage_it(creator: Counted) -> None:
    creator.project.write("alpha/evals/files/only2.txt", "two's new input\n")
    assert creator.run() == (CELL, CELL, CELL)  # the output carries the file's text: new grades too
    assert evals_of(creator.calls(CELL)) == {"eval-2"}


def test_skill_creator_whitespace_and_key_order_in_the_json_change_nothing(creator: Counted) -> None:
    p = creator.project
    data = json.loads(p.read("alpha/evals/evals.json"))
    data["evals"] = [dict(reversed(list(e.items()))) for e in data["evals"]]
    p.write("alpha/evals/evals.json", json.dumps(dict(reversed(list(data.items()))), indent=3) + "\n\n")
    p.write("beta/evals/evals.json", json.dumps(json.loads(p.read("beta/evals/evals.json")), indent=8))
    assert creator.run() == (0, 0, 0)
