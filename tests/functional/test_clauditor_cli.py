"""`skillmake clauditor grade|validate|triggers`: clauditor's command lines, flags and exit codes, on skillmake's
engine. Each test counts the agent calls (the stand-in `claude` logs every prompt) and the judge calls (at the fake
API), so the mirror is proven incremental like a plain run; exit codes are clauditor's 0 / 1 / 2 / 3."""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.functional.project import Project, Run
from tests.functional.test_incremental_seeds import ALPHA, COMMAND, FAKE_CLAUDE, clean_env, criteria_or_expectations
from tests.functional.trigger_fakes import claude_log, install_fake_claude

JUDGE = "/v1/chat/completions"
ALPHA_MD = ".claude/commands/alpha.md"
# The stand-in claude, also saying which credentials it was given and whether background tasks are synchronous.
ENV_PROBE = '''
with open(root / "env.log", "a") as log:
    log.write(json.dumps({k: os.environ.get(k) for k in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN",
                                                          "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS")}) + "\\n")
'''


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        fake.script = criteria_or_expectations
        yield fake


class Clauditor:
    """A clauditor project (the `alpha` command beside alpha.eval.json: 3 runs, an assertion and a criterion) run
    through `skillmake clauditor …`, counting agent and judge calls."""

    def __init__(self, root: Path, api: FakeAPI, spec: str = ALPHA) -> None:
        claude = FAKE_CLAUDE.replace("prompt = sys.stdin.read().strip()\n",
                                     "prompt = sys.stdin.read().strip()\n" +
                                     "root = pathlib.Path(__file__).resolve().parent.parent\n" + ENV_PROBE)
        self.project = Project.empty(root, {
            # clauditor's harness `auto` lends the project's agent: claude-code with its own key (so the judge's
            # credentials can be taken away without the agent's).
            "skillmake.toml": 'agent = {kind = "claude-code", env = {ANTHROPIC_API_KEY = "sk-test-not-a-key"}}\n',
            ALPHA_MD: COMMAND.format(what="shouts one"),
            ".claude/commands/alpha.eval.json": spec,
            ".claude/commands/fixtures/alpha.txt": "alpha's input\n",
            "bin/claude": f"#!{sys.executable}\n{claude}",
        })
        (root / "bin" / "claude").chmod(0o755)
        self.api = api
        # The judge: the flags choose OpenAI (--grading-provider openai --model gpt-…); the fake API answers it.
        self.env = {**clean_env(), **api.openai_env(), "SKILLMAKE_CLAUDE": str(root / "bin" / "claude"),
                    "ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}  # no Anthropic judge

    def run(self, *args: str, env: dict[str, str] | None = None) -> tuple[Run, int]:
        judged = self.api.count(JUDGE)
        done = self.project.run("clauditor", *args, env={**self.env, **(env or {})})
        assert "Traceback" not in done.err, done.err
        return done, self.api.count(JUDGE) - judged

    def env_log(self) -> list[dict[str, str | None]]:
        log = self.project.root / "env.log"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


OPENAI_JUDGE = ("--grading-provider", "openai", "--model", "gpt-5.4-mini")


def test_grade_runs_and_judges_once_then_nothing_and_validate_reuses_the_trials(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    done, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)
    # clauditor's grade runs the skill once (variance.n_runs is read only by --variance's own runs: neither)
    assert (done.code, done.agent_calls, judged) == (0, 1, 1), done.out + done.err
    assert "with_skill pass rate 1.00" in done.out
    done, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)
    assert (done.code, done.agent_calls, judged) == (0, 0, 0), done.out + done.err
    done, judged = p.run("validate", ALPHA_MD)  # the same trials: nothing runs, the assertions are checked
    assert (done.code, done.agent_calls, judged) == (0, 0, 0), done.out + done.err
    assert done.out.count("  pass") == 1 and "alpha: 1 of 1 run(s) passed every assertion" in done.out


def test_validate_runs_the_skill_and_its_assertions_with_no_model(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    # No judge is reachable (no OpenAI or Anthropic endpoint): validate needs none, as clauditor's Layer 1.
    done, judged = p.run("validate", ALPHA_MD, env={"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""})
    assert (done.code, done.agent_calls, judged) == (0, 1, 0), done.out + done.err
    done, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)  # grade shares validate's trials: only the judge runs
    assert (done.code, done.agent_calls, judged) == (0, 0, 1), done.out + done.err


def test_a_failed_assertion_is_exit_1_with_the_evidence(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api, spec=ALPHA.replace('"needle": "ONE"', '"needle": "TWELVE"'))
    done, _ = p.run("validate", ALPHA_MD)
    assert done.code == 1, done.out + done.err
    assert "validate:alpha/alpha/with_skill/0  fail" in done.out
    assert "✗ " in done.out and "TWELVE" in done.out
    # clauditor's grade gates on its criteria alone (GradingReport.passed): a failed assertion does not fail it
    done, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)
    assert (done.code, done.agent_calls, judged) == (0, 0, 1), done.out + done.err


def test_variance_is_one_plus_n_runs_and_only_the_new_ones_run(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    assert p.run("grade", ALPHA_MD, *OPENAI_JUDGE)[0].agent_calls == 1  # once: variance.n_runs is not read
    done, judged = p.run("grade", ALPHA_MD, "--variance", "4", *OPENAI_JUDGE)  # clauditor: 1 + 4 runs
    assert (done.code, done.agent_calls, judged) == (0, 4, 4), done.out + done.err
    assert "5 of 5 runs passed their criteria (stability 1.00), min_stability 0.80" in json.dumps(
        json.loads((p.project.root / ".skillmake/reports/alpha/report.json").read_text())["thresholds"])
    done, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)  # back to one run: stored
    assert (done.code, done.agent_calls, judged) == (0, 0, 0), done.out + done.err


def test_json_puts_the_report_alone_on_stdout(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    done, _ = p.run("grade", ALPHA_MD, "--json", *OPENAI_JUDGE)
    assert done.code == 0, done.err
    report = json.loads(done.out)
    assert (report["spec"]["name"], report["verdict"]["passed"]) == ("alpha", True)
    assert "trial:alpha/alpha/with_skill/0" in done.err  # the run's lines went to stderr
    done, _ = p.run("validate", ALPHA_MD, "--json")
    data = json.loads(done.out)
    assert data["passed"] is True and [r["outcome"] for r in data["runs"]] == ["pass"]


def test_a_judge_that_cannot_be_reached_is_exit_3(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    api.enqueue(Reply.error(400, "the judge's request was refused"), endpoint=JUDGE)
    done, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)
    assert (done.code, done.agent_calls, judged) == (3, 1, 1), done.out + done.err  # clauditor's API error
    done, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)  # a judge_error is never stored: judged again
    assert (done.code, done.agent_calls, judged) == (0, 0, 1), done.out + done.err


@pytest.mark.parametrize(("args", "says"), [
    (("grade", ALPHA_MD, "--trasport", "api"), "unknown option --trasport; did you mean --transport?"),
    (("grade", ALPHA_MD, "--transport", "http"), "invalid choice: 'http'"),
    (("grade", ALPHA_MD, "--variance", "0"), "must be a whole number above 0"),
    (("grade", "nope.md"), "nope.md: no such skill file"),
    (("grade", ALPHA_MD, "--iteration", "5"), "keeps no iteration slots"),
    (("grade", ALPHA_MD, "--only-criterion", "loud"), "a subset saves nothing"),
    (("grade", ALPHA_MD, "--min-baseline-delta", "0.1"), "--min-baseline-delta requires --baseline"),
    (("grde", ALPHA_MD), "did you mean 'grade'?"),
    (("suggest", ALPHA_MD), "skillmake optimize-description"),
    (("triggers", ALPHA_MD), "has no trigger_tests"),
])
def test_input_errors_are_exit_2_with_the_fix_and_run_nothing(tmp_path: Path, api: FakeAPI, args: tuple[str, ...],
                                                               says: str) -> None:
    p = Clauditor(tmp_path / "p", api)
    done, judged = p.run(*args)
    assert (done.code, done.agent_calls, judged) == (2, 0, 0), done.out + done.err
    assert says in done.err


def test_an_invalid_spec_is_exit_2_located_in_its_own_lines(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api, spec=ALPHA.replace('"type": "contains"', '"type": "contians"'))
    done, _ = p.run("grade", ALPHA_MD)
    assert (done.code, done.agent_calls) == (2, 0), done.out + done.err
    assert ".claude/commands/alpha.eval.json:6:" in done.err and "/assertions/0/type" in done.err


def test_missing_judge_credentials_are_exit_2_before_any_run(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    done, _ = p.run("grade", ALPHA_MD, "--transport", "api")
    assert (done.code, done.agent_calls) == (2, 0), done.out + done.err
    assert "ANTHROPIC_API_KEY" in done.err


def test_flags_beat_the_environment_which_beats_the_spec(tmp_path: Path, api: FakeAPI) -> None:
    judge = '"grading_provider": "openai",\n  "grading_model": "gpt-5.4-mini",\n  '
    spec = ALPHA.replace('"variance"', judge + '"variance"')
    p = Clauditor(tmp_path / "p", api, spec=spec)
    done, judged = p.run("grade", ALPHA_MD)  # the spec's field: the OpenAI judge at the fake API
    assert (done.code, done.agent_calls, judged) == (0, 1, 1), done.out + done.err
    # CLAUDITOR_GRADING_PROVIDER beats the field: an Anthropic judge, which has no key here (exit 2, nothing runs).
    done, judged = p.run("grade", ALPHA_MD, "--transport", "api", env={"CLAUDITOR_GRADING_PROVIDER": "anthropic"})
    assert (done.code, done.agent_calls, judged) == (2, 0, 0), done.out + done.err
    assert "ANTHROPIC_API_KEY" in done.err
    # The flag beats the variable: the OpenAI judge again, whose grades are stored.
    done, judged = p.run("grade", ALPHA_MD, "--grading-provider", "openai",
                         env={"CLAUDITOR_GRADING_PROVIDER": "anthropic"})
    assert (done.code, done.agent_calls, judged) == (0, 0, 0), done.out + done.err


def test_no_api_key_gives_claude_the_subscription_token_only(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    done, _ = p.run("validate", ALPHA_MD, "--no-api-key")
    assert done.code == 1 and done.agent_calls == 0, done.out + done.err  # no token: the trials cannot log in
    assert "CLAUDE_CODE_OAUTH_TOKEN" in done.out + done.err
    done, _ = p.run("validate", ALPHA_MD, "--no-api-key", env={"CLAUDE_CODE_OAUTH_TOKEN": "oat-test"})
    assert (done.code, done.agent_calls) == (0, 1), done.out + done.err
    seen = {json.dumps(e) for e in p.env_log()}
    assert seen == {json.dumps({"ANTHROPIC_API_KEY": None, "CLAUDE_CODE_OAUTH_TOKEN": "oat-test",
                                "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": None})}


def test_transport_cli_implies_no_api_key_and_says_so(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    done, _ = p.run("grade", ALPHA_MD, "--transport", "cli", "--dry-run", env={"ANTHROPIC_API_KEY": "sk-mine"})
    assert done.code == 0, done.out + done.err
    assert "--transport cli implies --no-api-key" in done.err


def test_sync_tasks_reaches_claude_and_is_a_new_agent_setting(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    assert p.run("validate", ALPHA_MD)[0].agent_calls == 1
    done, _ = p.run("validate", ALPHA_MD, "--sync-tasks")  # the agent's settings are in the trial key
    assert (done.code, done.agent_calls) == (0, 1), done.out + done.err
    assert [e["CLAUDE_CODE_DISABLE_BACKGROUND_TASKS"] for e in p.env_log()] == [None, "1"]
    assert p.run("validate", ALPHA_MD)[0].agent_calls == 0  # without the flag: the first trials again


def test_dry_run_says_what_would_run_and_runs_nothing(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    done, judged = p.run("grade", ALPHA_MD, "--variance", "1", *OPENAI_JUDGE, "--dry-run")
    assert (done.code, done.agent_calls, judged) == (0, 0, 0), done.out + done.err
    assert "would run 2 trials (2 agent calls" in done.out and "and 2 grades (2 judge calls)" in done.out


def test_captured_output_is_graded_or_checked_without_running_the_skill(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    p.project.write("good.txt", "SAY ONE!\n")
    p.project.write("bad.txt", "say one\n")
    done, judged = p.run("grade", ALPHA_MD, "--output", "good.txt", *OPENAI_JUDGE)
    assert (done.code, done.agent_calls, judged) == (0, 0, 1), done.out + done.err
    assert "WARNING: --output bypasses the runner; input_files declaration is ignored." in done.err
    done, judged = p.run("validate", ALPHA_MD, "--output", "bad.txt")
    assert (done.code, done.agent_calls, judged) == (1, 0, 0), done.out + done.err
    assert "validate:alpha/alpha/captured  fail" in done.out


def test_min_baseline_delta_fails_a_skill_worse_than_no_skill(tmp_path: Path, api: FakeAPI) -> None:
    # The assertion wants the prompt as typed: the skill (which shouts) fails it, the bare agent passes it.
    worse = ALPHA.replace('"type": "contains", "needle": "ONE"', '"type": "contains", "needle": "say one"')
    worse = worse.replace('"variance"', '"grade_thresholds": {"min_pass_rate": 0.0},\n  "variance"')
    # A criterion the stand-in judge always passes (its text shouts): only the assertion tells the arms apart.
    worse = worse.replace('"Is the answer shouted?"', '"Does the answer say ONE or not (YES!)?"')
    p = Clauditor(tmp_path / "p", api, spec=worse)
    done, _ = p.run("grade", ALPHA_MD, "--baseline", *OPENAI_JUDGE)
    assert done.code == 0 and done.agent_calls == 2, done.out + done.err
    done, judged = p.run("grade", ALPHA_MD, "--baseline", "--min-baseline-delta", "0.5", *OPENAI_JUDGE)
    assert (done.code, done.agent_calls, judged) == (1, 0, 0), done.out + done.err
    assert "1.00 below its baseline's, more than --min-baseline-delta 0.5" in done.err


def test_the_skill_is_found_by_its_skill_md_and_the_eval_flag_wins(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    p.project.write(".claude/skills/gamma/SKILL.md", "---\nname: gamma\ndescription: shouts\n---\nUPPERCASE.\n")
    p.project.write(".claude/skills/gamma/SKILL.eval.json", ALPHA.replace('"alpha"', '"gamma"')
                    .replace('"input_files": ["fixtures/alpha.txt"],\n', "").replace('"n_runs": 3', '"n_runs": 1'))
    done, _ = p.run("validate", ".claude/skills/gamma/SKILL.md")
    assert (done.code, done.agent_calls) == (0, 1), done.out + done.err
    done, _ = p.run("validate", ".claude/skills/gamma", "--eval", ".claude/commands/alpha.eval.json")
    assert (done.code, done.agent_calls) == (0, 1), done.out + done.err


def test_triggers_runs_only_the_trigger_trials_with_clauditors_exit_code(tmp_path: Path) -> None:
    seeds = Path(__file__).resolve().parents[1] / "data" / "seeds"
    project = Project.empty(tmp_path / "proj", {
        "skillmake.toml": 'agent = {kind = "claude-code", env = {ANTHROPIC_API_KEY = "sk-fake"}}\n'})
    shutil.copytree(seeds / "clauditor" / "commands" / ".claude", project.root / ".claude")
    env = {**clean_env(), "SKILLMAKE_CLAUDE": str(install_fake_claude(tmp_path))}
    skill = ".claude/commands/find-kid-activities.md"
    done = project.run("clauditor", "triggers", skill, "--json", env=env)
    # The stand-in fires on "help me write a python script" (the command's text says "Write the results"): a
    # false positive, so the skill fails its bar, as clauditor's triggers exits 1 on a wrong classification.
    assert done.code == 1, done.out + done.err
    section = json.loads(done.out)
    assert section["false_positives"] == ["help-me-write-a-python-script"]
    assert len(claude_log(tmp_path)) == 12  # 4 queries × 3 runs, and none of the spec's cases
    again = project.run("clauditor", "triggers", skill, env=env)
    assert again.code == 1 and len(claude_log(tmp_path)) == 12, again.out + again.err


def test_commands_clauditor_has_and_skillmake_does_elsewhere_say_where(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    for command in ("init", "lint", "run", "capture", "extract", "compare", "audit", "trend", "suggest",
                    "propose-eval", "badge", "setup", "doctor"):
        done, _ = p.run(command, ALPHA_MD)
        assert done.code == 2 and f"`clauditor {command}` has no mirror here" in done.err, done.err
        assert "hint: " in done.err
    help_text = p.run("--help")[0]
    assert help_text.code == 0 and "exit codes (clauditor's)" in help_text.out



def test_verbose_shows_each_judges_verdict_and_reasoning_under_its_grade(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    done, judged = p.run("grade", ALPHA_MD, "-v", *OPENAI_JUDGE)
    assert (done.code, judged) == (0, 1), done.out + done.err
    lines = done.out.splitlines()
    at = next(i for i, line in enumerate(lines) if "grade:alpha/alpha/with_skill/0  pass" in line)
    assert lines[at + 1] == "    ✓ Is the answer shouted? — as written — shouted or not"  # evidence — reasoning
    quiet, _ = p.run("grade", ALPHA_MD, *OPENAI_JUDGE, env={"SKILLMAKE_RESAMPLE": "1"})
    assert "✓ Is the answer shouted?" not in quiet.out  # only under -v


def test_grade_leaves_trigger_tests_to_the_triggers_command(tmp_path: Path, api: FakeAPI) -> None:
    triggers = '"trigger_tests": {"should_trigger": ["shout one"], "should_not_trigger": ["whisper"]},\n  "variance"'
    p = Clauditor(tmp_path / "p", api, spec=ALPHA.replace('"variance"', triggers))
    done, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)
    # The cases pass; the trigger trials have not run (they are `triggers`' job): clauditor's grade exits 0.
    assert (done.code, done.agent_calls, judged) == (0, 1, 1), done.out + done.err
    # issue 19 §2: the header agrees with the exit code (it said FAILED: "6 trigger trial(s) have not run")
    assert "alpha (alpha, 1 trial(s) per case): ok" in done.out, done.out
    report = json.loads((p.project.root / ".skillmake/reports/alpha/report.json").read_text())
    assert report["verdict"]["passed"] is True
    assert [q["trials"][0]["outcome"] for q in report["triggers"]["queries"]] == [None, None]  # still says not run


def test_another_invalid_spec_in_the_project_is_not_this_skills_input_error(tmp_path: Path, api: FakeAPI) -> None:
    p = Clauditor(tmp_path / "p", api)
    p.project.write("broken.eval.yaml", "skill: nope\ncases: 3\n")
    done, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)
    assert (done.code, done.agent_calls, judged) == (0, 1, 1), done.out + done.err  # clauditor grades one spec
    assert "broken.eval.yaml:2:8 /cases" in done.err  # still said
    assert p.run("validate", ALPHA_MD)[0].code == 0
    dry, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE, "--dry-run")  # issue 19 §2: was exit 2
    assert (dry.code, dry.agent_calls, judged) == (0, 0, 0), dry.out + dry.err
    plain = p.project.run("--spec", "alpha", env=p.env)
    assert plain.code == 2  # skillmake's own run says the project has an invalid spec (pytest's collection error)


def _criteria_passing(passing: set[str]) -> Callable[[Recorded], Reply]:
    """A judge that passes the criteria whose ids are in `passing` (score 1) and fails the others (score 0)."""
    def judge(request: Recorded) -> Reply:
        ids = re.findall(r"^- id: (\S+)$", request.text(), flags=re.MULTILINE)
        return Reply.text(json.dumps({"criteria": [{"id": c, "passed": c in passing, "score": float(c in passing),
                                                    "evidence": "e", "reasoning": "r"} for c in ids]}))
    return judge


FOUR = ('"grading_criteria": [' + ", ".join(f'{{"id": "c{i}", "criterion": "Criterion {i}?"}}' for i in range(1, 5))
        + "],\n  ")


@pytest.mark.parametrize(("thresholds", "passing", "code", "says"), [
    # issue 19 §2: 3 of 4 criteria with min_pass_rate 0.7 passes clauditor's gate (a share of criteria, not trials)
    ('"grade_thresholds": {"min_pass_rate": 0.7},\n  ', {"c1", "c2", "c3"}, 0, "3 of 4 passed (0.75)"),
    ('"grade_thresholds": {"min_pass_rate": 0.8},\n  ', {"c1", "c2", "c3"}, 1, "min_pass_rate 0.80"),
    ("", {"c1", "c2"}, 1, "2 of 4 passed (0.50), min_pass_rate 0.70"),  # clauditor's defaults apply when unset
    ('"grade_thresholds": {"min_pass_rate": 0.5, "min_mean_score": 0.9},\n  ', {"c1", "c2", "c3"}, 1,
     "mean score 0.75, min_mean_score 0.90"),
])
def test_grade_gates_on_the_share_of_criteria_as_clauditor(tmp_path: Path, api: FakeAPI, thresholds: str,
                                                           passing: set[str], code: int, says: str) -> None:
    spec = ALPHA.replace('  "grading_criteria": [{"id": "shouted", "criterion": "Is the answer shouted?"}],\n',
                         "  " + FOUR + thresholds)
    p = Clauditor(tmp_path / "p", api, spec=spec)
    before, api.script = api.script, _criteria_passing(passing)
    try:
        done, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)
    finally:
        api.script = before
    assert (done.code, done.agent_calls, judged) == (code, 1, 1), done.out + done.err
    report = json.loads((p.project.root / ".skillmake/reports/alpha/report.json").read_text())
    assert says in json.dumps(report["thresholds"])
    assert report["verdict"]["passed"] is (code == 0)  # the header, the report and the exit code agree
    assert ("alpha (alpha, 1 trial(s) per case): ok" in done.out) is (code == 0)


def test_grade_without_grading_criteria_exits_1_and_runs_nothing(tmp_path: Path, api: FakeAPI) -> None:
    spec = ALPHA.replace('  "grading_criteria": [{"id": "shouted", "criterion": "Is the answer shouted?"}],\n', "")
    p = Clauditor(tmp_path / "p", api, spec=spec)
    done, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)
    assert (done.code, done.agent_calls, judged) == (1, 0, 0), done.out + done.err
    assert "no grading_criteria" in done.err
    assert p.run("validate", ALPHA_MD)[0].code == 0  # its assertions are validate's


def test_grade_and_validate_run_once_whatever_n_runs_and_the_projects_trials(tmp_path: Path, api: FakeAPI) -> None:
    """clauditor runs the skill once (issue 19 §2): neither variance.n_runs (3 in ALPHA) nor the project's
    `trials` make `skillmake clauditor grade|validate` run it more; --variance N adds N runs."""
    p = Clauditor(tmp_path / "p", api)
    p.project.write("skillmake.toml", p.project.read("skillmake.toml") + "trials = 3\n")
    done, judged = p.run("validate", ALPHA_MD)
    assert (done.code, done.agent_calls, judged) == (0, 1, 0), done.out + done.err
    assert "alpha: 1 of 1 run(s) passed every assertion" in done.out
    done, judged = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)
    assert (done.code, done.agent_calls, judged) == (0, 0, 1), done.out + done.err
    done, judged = p.run("grade", ALPHA_MD, "--variance", "1", *OPENAI_JUDGE)
    assert (done.code, done.agent_calls, judged) == (0, 1, 1), done.out + done.err


def test_grade_writes_clauditors_iteration_folder_each_time(tmp_path: Path, api: FakeAPI) -> None:
    """issue 19 §2: a CI step that reads .clauditor/iteration-N/<skill>/ finds clauditor's files after each grade
    (checked against the real clauditor's in tests/differential/test_clauditor_grade_e2e.py)."""
    p = Clauditor(tmp_path / "p", api)
    done, _ = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)
    assert done.code == 0 and "Workspace: .clauditor/iteration-1/alpha" in done.err, done.err
    first = p.project.root / ".clauditor" / "iteration-1" / "alpha"
    grading = json.loads((first / "grading.json").read_text())
    assert (grading["schema_version"], grading["skill_name"]) == (5, "alpha")
    assert [(r["id"], r["passed"]) for r in grading["results"]] == [("shouted", True)]
    assert grading["thresholds"] == {"min_pass_rate": 0.7, "min_mean_score": 0.5}
    runs = json.loads((first / "assertions.json").read_text())["runs"]
    assert [[(r["id"], r["name"], r["passed"]) for r in run["results"]] for run in runs] == [
        [("loud", "contains:ONE", True)]]
    assert "ONE" in (first / "run-0" / "output.txt").read_text()
    done, _ = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)  # nothing runs again; clauditor's next slot is still written
    assert done.code == 0 and (p.project.root / ".clauditor" / "iteration-2" / "alpha" / "grading.json").is_file()
    assert sorted(x.name for x in (p.project.root / ".clauditor").iterdir()) == ["iteration-1", "iteration-2"]
    api.enqueue(Reply.error(400, "the judge's request was refused"), endpoint=JUDGE)
    p.project.replace(".claude/commands/alpha.eval.json", "Is the answer shouted?", "Is it loud?")
    done, _ = p.run("grade", ALPHA_MD, *OPENAI_JUDGE)  # an ungraded run leaves no half-written iteration
    assert done.code == 3 and not (p.project.root / ".clauditor" / "iteration-3").exists(), done.err


def test_eval_takes_a_spec_anywhere_and_a_stray_spec_does_not_fail_the_project(tmp_path: Path, api: FakeAPI) -> None:
    """issue 19 §2: clauditor's --eval reads a spec from any path; a spec with no skill beside it is clauditor's
    --eval input, not a broken spec of the project."""
    p = Clauditor(tmp_path / "p", api)
    stray = ALPHA.replace('"input_files": ["fixtures/alpha.txt"],\n', "").replace('"shouted"', '"loud_enough"')
    p.project.write("evals/extra.eval.json", stray)
    checked = p.project.run("validate", env=p.env)
    assert checked.code == 0, checked.out + checked.err
    assert "evals/extra.eval.json (clauditor: no skill beside it" in checked.out + checked.err
    done, judged = p.run("grade", ALPHA_MD, "--eval", "evals/extra.eval.json", *OPENAI_JUDGE)
    assert (done.code, done.agent_calls, judged) == (0, 1, 1), done.out + done.err
    assert p.run("validate", ALPHA_MD)[0].code == 0  # the skill's own spec is still the one beside it
    alone = p.project.run("validate", "evals/extra.eval.json", env=p.env)  # named on its own: why it cannot run
    assert alone.code == 2 and "no skill for this clauditor spec" in alone.err, alone.out + alone.err


def test_what_clauditor_accepts_but_is_surely_a_mistake_validates_with_a_warning(tmp_path: Path, api: FakeAPI) -> None:
    """clauditor's loader ignores an unknown key and takes any threshold: so does skillmake, saying so on stderr."""
    spec = ALPHA.replace('"variance"', '"grading_criterias": [],\n  "grade_thresholds": {"min_pass_rate": 1.5},\n  '
                                      '"variance"')
    p = Clauditor(tmp_path / "p", api, spec=spec)
    done = p.project.run("validate", env=p.env)
    assert done.code == 0, done.out + done.err
    assert ("warning: .claude/commands/alpha.eval.json: 'grading_criterias' is not a clauditor key: ignored, as "
            "clauditor ignores it; did you mean 'grading_criteria'?") in done.err
    assert ("/grade_thresholds/min_pass_rate is 1.5, outside 0..1: under clauditor no run can pass it; skillmake "
            "reads it as 1") in done.err


def test_a_later_triggers_keeps_the_grades_of_the_cases_in_the_report(tmp_path: Path, api: FakeAPI) -> None:
    """issue 19 §2: `triggers` after `grade --variance 2` must not turn report.json into "N of N trials have no
    grade" (the judge here is the spec's; with the judge chosen by grade's flags alone, see docs/formats.md)."""
    judge = '"grading_provider": "openai",\n  "grading_model": "gpt-5.4-mini",\n  '
    triggers = '"trigger_tests": {"should_trigger": ["shout one"], "should_not_trigger": ["whisper"]},\n  "variance"'
    p = Clauditor(tmp_path / "p", api, spec=ALPHA.replace('"variance"', judge + triggers))
    assert p.run("grade", ALPHA_MD, "--variance", "2")[0].code == 0
    p.run("triggers", ALPHA_MD)
    report = json.loads((p.project.root / ".skillmake/reports/alpha/report.json").read_text())
    assert not [r for r in report["verdict"]["reasons"] if "have no grade" in r], report["verdict"]
    assert report["counts"]["graded"] == report["counts"]["expected"] == 1
