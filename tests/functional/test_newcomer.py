"""What a newcomer saw disagree (issue 20 §5), each from its repro through the real `skillmake` and `doit` front
ends: a selection that matches nothing, explain against the run for trigger trials, the trigger summary with no
result, a deleted spec's folders, and the smaller ones."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from .project import DODO, Project, copy_of, populated
from .trigger_fakes import claude_log, install_fake_claude

# -- a selection that matches nothing ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["trial:nosuch/*"], ["--tag", "nosuchtag"], ["-k", "nosuch"]])
def test_a_selection_that_matches_nothing_exits_5_in_one_line(tmp_path: Path, args: list[str]) -> None:
    project = Project(tmp_path / "proj")
    run = project.run(*args)
    assert run.code == 5, run.out + run.err
    assert run.agent_calls == 0
    assert len(run.err.strip().splitlines()) == 1, run.err
    assert "Traceback" not in run.err


def test_a_glob_that_matches_nothing_under_plain_doit_exits_5(tmp_path: Path) -> None:
    project = Project(tmp_path / "proj")
    project.write("dodo.py", DODO)
    run = project.run(cmd=[sys.executable, "-m", "doit", "trial:nosuch/*"])
    assert run.code == 5, run.out + run.err
    assert "'trial:nosuch/*' matches no task" in run.err


def test_failed_after_everything_passed_is_not_an_error(tmp_path: Path,
                                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    project = copy_of(populated(tmp_path_factory), tmp_path / "proj")
    run = project.run("--failed")
    assert run.code == 0, run.err
    assert run.agent_calls == 0


# -- explain and the run agree about trigger trials --------------------------------------------------------------------

TRIGGER_SPEC = """\
skill: skills/kids
agent: {kind: command, command: [python3, agent.py]}
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: one}]
    rubric: Is it a good answer? 1-5
trigger_tests:
  agent: {kind: claude-code, env: {ANTHROPIC_API_KEY: sk-fake}}
  runs: 2
  should_trigger: [find kid activities in Cupertino]
  should_not_trigger: [what's the weather today, write me a python script]
"""
SKILL = "---\nname: kids\ndescription: Find activities for kids near a place\n---\nBody v1.\n"


def _trigger_project(tmp_path: Path, spec: str = TRIGGER_SPEC) -> tuple[Project, dict[str, str]]:
    project = Project.empty(tmp_path / "proj", {"agent.py": "import sys; print(sys.stdin.read())\n",
                                                "skills/kids/SKILL.md": SKILL, "kids.eval.yaml": spec})
    return project, {"SKILLMAKE_CLAUDE": str(install_fake_claude(tmp_path))}


@pytest.mark.parametrize("selection", [["--tag", "trigger"], ["trigger:kids/*"]])
def test_explain_counts_the_trigger_trials_the_run_runs_and_needs_no_judge_for_them(
        tmp_path: Path, selection: list[str]) -> None:
    project, env = _trigger_project(tmp_path)  # the rubric's judge has no key (the autouse fixture clears them)
    explained = project.run("explain", "--format", "json", *selection, env=env)
    assert explained.code == 0, explained.err
    payload = orjson.loads(explained.out)
    assert payload["would_run"]["trigger_trials"] == 6
    assert (payload["would_run"]["trials"], payload["would_run"]["grades"]) == (0, 0)
    assert payload["blocked"] == []
    run = project.run(*selection, env=env)
    assert run.code != 3 and "judge" not in run.err, run.out + run.err  # it did not stop for the judge
    assert len(claude_log(tmp_path)) == 6  # exactly what explain said


def test_explain_and_the_run_both_stop_for_a_judge_the_run_would_call(tmp_path: Path) -> None:
    project, env = _trigger_project(tmp_path)
    explained = project.run("explain", "--format", "json", env=env)
    assert orjson.loads(explained.out)["blocked"], explained.out
    run = project.run(env=env)
    assert run.code == 3 and run.agent_calls == 0 and claude_log(tmp_path) == []


# -- every trigger run erred: no result, and the credentials hint once, whole --------------------------------------

def test_when_every_trigger_run_errs_the_summary_says_no_result_and_the_hint_once(tmp_path: Path) -> None:
    project, env = _trigger_project(tmp_path, TRIGGER_SPEC.replace(", env: {ANTHROPIC_API_KEY: sk-fake}", ""))
    run = project.run("--tag", "trigger", env=env)
    assert run.code == 1, run.out + run.err
    both = run.out + run.err
    assert "precision 1.00" not in both and "false positive" not in both, both
    assert "3 queries pass; no result (no run finished)" in run.out
    hint = "and add `pass_env: [CLAUDE_CODE_OAUTH_TOKEN]` to the spec's agent"
    assert both.count(hint) == 1, both  # whole (its last words are there) and once
    assert both.count("claude-code has no credentials") == 1, both
    html = (project.root / ".skillmake/reports/kids/report.html").read_text()
    assert "no result" in html and "false positive" not in html
    assert project.run("view", "--export", str(tmp_path / "site"), env=env).code == 0
    page = (tmp_path / "site" / "specs" / "kids" / "index.html").read_text()
    assert page.count(">no result</span>") == 3, page


# -- a deleted spec goes, with its folders --------------------------------------------------------------------------

@pytest.mark.parametrize("command", [[], ["report"]])
def test_a_deleted_specs_views_and_reports_go_and_the_viewer_lists_only_live_specs(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, command: list[str]) -> None:
    project = copy_of(populated(tmp_path_factory), tmp_path / "proj")
    state = project.root / ".skillmake"
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    (state / "runs" / "linked").symlink_to(outside, target_is_directory=True)  # never followed, never removed
    (state / "reports" / "mine").mkdir()  # not skillmake's: no stamp, no report.json
    (project.root / "beta.eval.yaml").unlink()
    exported = project.run("view", "--export", str(tmp_path / "site"))
    assert exported.code == 0, exported.err
    index = (tmp_path / "site" / "index.html").read_text()
    assert "alpha" in index and "beta" not in index  # before any run: the viewer shows only the live specs
    run = project.run(*command)
    assert run.code == 0, run.out + run.err
    assert run.agent_calls == 0
    for folder in ("runs", "reports"):
        assert sorted(p.name for p in (state / folder).iterdir() if not p.name.startswith(".")) == sorted(
            ["alpha", *(["linked"] if folder == "runs" else ["mine"])])
    assert (outside / "keep").is_dir()


# -- the viewer shows the agent's stdout beside the captured files ---------------------------------------------------

def test_the_viewer_shows_stdout_beside_the_captured_files(tmp_path: Path) -> None:
    agent = ("import os, pathlib\nprint('PRINTED-BY-THE-' + os.environ['SKILLMAKE_ARM'].upper())\n"
             "if os.environ.get('SKILLMAKE_SKILL'): pathlib.Path('out.txt').write_text('FILE-TEXT')\n")
    spec = ("skill: skills/s\nagent: {kind: command, command: [python3, agent.py]}\nbaseline: true\ncases:\n"
            "  - id: c\n    prompt: go\n    output_files: [out.txt]\n    checks: [{type: contains, needle: FILE}]\n")
    project = Project.empty(tmp_path / "proj", {"agent.py": agent, "s.eval.yaml": spec,
                                                "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n"})
    assert project.run().code == 0  # the baseline wrote no file (and fails: measured, not gated)
    assert project.run("view", "--export", str(tmp_path / "site")).code == 0
    pages = "".join(p.read_text() for p in (tmp_path / "site").rglob("*.html"))
    assert "PRINTED-BY-THE-WITHOUT_SKILL" in pages  # the baseline printed it: not "(empty output)" alone
    assert "PRINTED-BY-THE-WITH_SKILL" in pages and "FILE-TEXT" in pages


# -- watch sees every file the keys read -----------------------------------------------------------------------------

def test_watch_watches_the_agents_script_and_the_check_scripts_the_keys_read(tmp_path: Path) -> None:
    from skillmake.engine.watch import targets

    project = Project(tmp_path / "proj")
    project.write("checks/ok.py", "assert True\n")
    project.replace("alpha.eval.yaml", "checks: [{type: contains, needle: ONE}]",
                    "checks: [{type: contains, needle: ONE}, {type: python, script: checks/ok.py}]")
    watched = targets(str(project.root))
    assert str(project.root / "agent.py") in watched.files  # in every trial key as agent setting program_files
    assert str(project.root / "checks" / "ok.py") in watched.files  # in the grade key


# -- smaller ones ------------------------------------------------------------------------------------------------------

def test_a_mistyped_command_gets_one_line_with_a_did_you_mean(tmp_path: Path) -> None:
    project = Project(tmp_path / "proj")
    run = project.run("valdiate")
    assert run.code == 3 and run.agent_calls == 0
    assert run.err.splitlines()[0] == "skillmake: 'valdiate' is not a command or a task; did you mean 'validate'?"
    assert "Invalid parameter" not in run.err
    swapped = project.run("view", "--prot", "8000")
    assert swapped.code == 3
    assert "unknown option --prot; did you mean --port?" in swapped.err


@pytest.mark.parametrize(("command", "pointer", "message"), [
    ("[pythn3, agent.py]", "/agent/command/0", "the agent's program 'pythn3' is not found beside the spec or on PATH"),
    ("[./agnet.sh]", "/agent/command/0", "the agent's program './agnet.sh' is not found beside the spec"),
])
def test_validate_refuses_a_command_agent_whose_program_does_not_exist(tmp_path: Path, command: str, pointer: str,
                                                                      message: str) -> None:
    project = Project(tmp_path / "proj")
    project.replace("alpha.eval.yaml", "[python3, agent.py]", command)
    run = project.run("validate", "alpha.eval.yaml")
    assert run.code == 2, run.out + run.err
    assert "alpha.eval.yaml:2:" in run.out + run.err and f"{pointer}: {message}" in run.out + run.err
    assert project.run("validate", "beta.eval.yaml").code == 0


def test_report_says_nothing_changed_once_and_where_the_site_went(tmp_path: Path,
                                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    project = copy_of(populated(tmp_path_factory), tmp_path / "proj")
    run = project.run("report")
    assert run.code == 0, run.err
    assert run.out.splitlines() == [
        "nothing changed: 2 spec(s), 12 cell(s) up to date; all gates pass",
        "skillmake report: reports in .skillmake/reports/, the viewer's pages in .skillmake/site/index.html"]


def test_report_on_a_project_that_never_ran_says_run_first(tmp_path: Path) -> None:
    project = Project(tmp_path / "proj")
    run = project.run("report")
    assert run.code == 5, run.out + run.err  # nothing to show: not a failed verdict (1)
    assert run.err.strip() == "skillmake report: no results yet; run `skillmake` first"
    assert "FAILED" not in run.out + run.err


@pytest.mark.parametrize("via", ["skillmake", "doit"])
def test_info_on_a_stale_task_exits_0_and_a_mistyped_one_says_so(tmp_path: Path,
                                                                 tmp_path_factory: pytest.TempPathFactory,
                                                                 via: str) -> None:
    project = copy_of(populated(tmp_path_factory), tmp_path / "proj")
    project.write("dodo.py", DODO)
    project.write("pyproject.toml", '[tool.doit.plugins.command]\ninfo = "skillmake.engine.info:Info"\n')
    project.replace("skills/alpha/SKILL.md", "Answer in UPPERCASE.", "Answer in UPPERCASE, always.")
    cmd = [sys.executable, "-m", "doit"] if via == "doit" else [sys.executable, "-m", "skillmake"]
    stale = project.run(cmd=[*cmd, "info", "trial:alpha/one/with_skill/0"])
    assert stale.code == 0, stale.out + stale.err  # stale is said by its status line; 1 is a failed verdict
    assert "status     : run" in stale.out
    typo = project.run(cmd=[*cmd, "info", "trial:alpha/one/with_skil/0"])
    assert typo.code == 3 and "Traceback" not in typo.err, typo.err
    assert "did you mean 'trial:alpha/one/with_skill/0'?" in typo.err


def test_init_over_an_existing_spec_is_a_usage_error(tmp_path: Path) -> None:
    project = Project(tmp_path / "proj")
    project.write("skills/alpha.eval.yaml", "mine\n")
    run = project.run("init", "skills/alpha", check_views=False)
    assert run.code == 3, run.err
    assert project.read("skills/alpha.eval.yaml") == "mine\n"


def test_the_viewers_last_run_is_when_the_trials_ran_not_when_report_wrote(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    import re
    import time

    project = copy_of(populated(tmp_path_factory), tmp_path / "proj")
    # The report is written again now, a second or more after its trials ran (the template's own report may carry
    # their second: a 24-trial run can take less than one).
    (project.root / ".skillmake/reports/alpha/report.json").unlink()
    time.sleep(1.1)
    assert project.run("report").code == 0
    report = orjson.loads((project.root / ".skillmake/reports/alpha/report.json").read_bytes())
    s = max(r for row in report["rows"] for r in row["trial_runs"])[:15]
    ran = f"{s[:4]}-{s[4:6]}-{s[6:8]}T{s[9:11]}:{s[11:13]}:{s[13:15]}+00:00"
    assert project.run("view", "--export", str(tmp_path / "site")).code == 0
    index = (tmp_path / "site" / "index.html").read_text()
    cells = re.findall(r'title="when the newest trial behind these results ran[^"]*">([^<]*)</td>', index)
    assert ran in cells, (ran, cells)
    assert report["generated"] not in cells


def test_a_fresh_runs_shared_grades_do_not_say_reused_from_the_store(tmp_path: Path) -> None:
    spec = ("skill: skills/s\nagent: {kind: command, command: [python3, agent.py]}\ntrials: 3\ncases:\n"
            "  - id: c\n    prompt: go\n    checks: [{type: contains, needle: SAME}]\n")
    project = Project.empty(tmp_path / "proj", {"agent.py": "print('SAME')\n", "s.eval.yaml": spec,
                                                "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n"})
    run = project.run()
    assert run.code == 0, run.err
    assert "reused from the store" not in run.out, run.out  # nothing was in the store before this run
    assert run.out.count("identical to a grade made this run") == 2, run.out  # three equal outputs, one grade


def test_clean_twice_cleans_nothing_the_second_time_and_says_so(tmp_path: Path,
                                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    project = copy_of(populated(tmp_path_factory), tmp_path / "proj")
    first = project.run("clean", "trial", check_views=False)
    assert (first.code, first.out.strip()) == (0, "skillmake: cleaned 24 trial views"), first.err
    again = project.run("clean", "trial", check_views=False)
    assert (again.code, again.out.strip()) == (
        0, "skillmake: nothing to clean (the views and reports are already gone)"), again.err


def test_a_folder_above_several_projects_does_not_merge_them(tmp_path: Path) -> None:
    for name in ("p1", "p2"):
        Project(tmp_path / "top" / name).write("skillmake.toml", "")
    top = Project.empty(tmp_path / "top")
    run = top.run(check_views=False)
    assert run.code == 5 and run.agent_calls == 0, run.out + run.err
    assert "the projects below it are run on their own: p1/, p2/" in run.err
    assert not (tmp_path / "top" / ".skillmake").exists()
    # A project's own run sees only its own specs, and a spec folder of the project is still searched.
    inner = Project.empty(tmp_path / "top" / "p1")
    inner.write("nested/p3/skillmake.toml", "")
    inner.write("nested/p3/gamma.eval.yaml", "not: even valid\n")
    done = inner.run("validate")
    assert done.code == 0, done.out + done.err
    assert done.out.strip() == "2 spec(s) valid"
