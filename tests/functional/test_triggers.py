"""Trigger tests through the real `skillmake` front end and doit, with a stand-in `claude` (trigger_fakes.py) that
picks a skill the way a model would have to: from the names and descriptions installed in the workspace. Every
call is logged, so the tests count agent calls exactly. The real CLI against the fake API:
tests/e2e/test_triggers_claude_cli.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from .project import Project, Run
from .trigger_fakes import claude_log, install_fake_claude

SPEC = """\
skill: skills/kids
agent: {kind: command, command: [python3, agent.py]}
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: one}]
trigger_tests:
  agent: {kind: claude-code, env: {ANTHROPIC_API_KEY: sk-fake}}
  runs: 2
  distractors:
    - {name: weather, description: Weather forecasts for any place}
  should_trigger:
    - find kid activities in Cupertino
    - activities for children this weekend
  should_not_trigger:
    - what's the weather today
    - write me a python script
"""

AGENT = "import sys; print(sys.stdin.read())\n"
SKILL = "---\nname: kids\ndescription: Find activities for kids near a place\n---\nBody v1.\n"


def _project(tmp_path: Path) -> tuple[Project, dict[str, str]]:
    project = Project.empty(tmp_path / "proj", {"agent.py": AGENT, "skills/kids/SKILL.md": SKILL,
                                                "kids.eval.yaml": SPEC})
    return project, {"SKILLMAKE_CLAUDE": str(install_fake_claude(tmp_path))}


def _claude_calls(tmp_path: Path) -> list[str]:
    return claude_log(tmp_path)


def _report(project: Project, spec: str = "kids") -> dict:
    return orjson.loads((project.root / f".skillmake/reports/{spec}/report.json").read_bytes())


def _run(project: Project, tmp_path: Path, env: dict[str, str], *args: str) -> tuple[Run, int]:
    before = len(_claude_calls(tmp_path))
    run = project.run(*args, env=env)
    return run, len(_claude_calls(tmp_path)) - before


def test_rates_precision_recall_and_views(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    run, calls = _run(project, tmp_path, env)
    assert run.code == 0, run.out + run.err
    assert calls == 8  # 4 queries × 2 runs
    section = _report(project)["triggers"]
    assert [(q["id"], q["triggers"], q["runs"], q["pass"]) for q in section["queries"]] == [
        ("find-kid-activities-in-cupertino", 2, 2, True), ("activities-for-children-this-weekend", 2, 2, True),
        ("what-s-the-weather-today", 0, 2, True), ("write-me-a-python-script", 0, 2, True)]
    summary = section["summary"]
    assert (summary["tp"], summary["fp"], summary["tn"], summary["fn"]) == (4, 0, 4, 0)
    assert (summary["precision"], summary["recall"], summary["f1"], summary["accuracy"]) == (1.0, 1.0, 1.0, 1.0)
    assert section["false_positives"] == []
    # 6 runs called a skill (two model turns each: the tool call, then the answer), 2 answered at once.
    assert "ran 1 trial and 1 grade and 8 trigger trials (14 model requests)" in run.out
    # Each trigger cell has its view, a checkout labelled with the cell's identity.
    view = orjson.loads((project.root / ".skillmake/triggers/kids/what-s-the-weather-today/trial-1/trial.json")
                        .read_bytes())
    assert view["labels"] == {"spec": "kids", "skill": "kids", "case": "what-s-the-weather-today",
                              "arm": "trigger", "k": 1}
    assert view["activation"]["skills"] == ["weather"]  # the distractor fired, not the skill
    again, calls = _run(project, tmp_path, env)
    assert (again.code, calls, again.trials) == (0, 0, 0)
    assert "8 trigger trials up to date" in again.out


def test_a_body_edit_runs_no_trigger_trial_and_a_description_edit_runs_them_all(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    assert _run(project, tmp_path, env)[0].code == 0
    project.replace("skills/kids/SKILL.md", "Body v1.", "Body v2, much longer and different.")
    run, calls = _run(project, tmp_path, env)
    assert (run.code, calls) == (0, 0)
    assert run.trials == 1  # the case's with_skill trial re-ran; no trigger trial did
    # A description that now overlaps the weather query: every trigger trial runs, and one query fails.
    project.replace("skills/kids/SKILL.md", "near a place", "whatever the weather")
    explained = project.run("explain", env=env)
    assert "trigger:kids/what-s-the-weather-today/0  the skill's description changed" in explained.out
    run, calls = _run(project, tmp_path, env)
    assert calls == 8
    assert run.code == 1
    section = _report(project)["triggers"]
    assert section["false_positives"] == ["what-s-the-weather-today"]
    assert (section["summary"]["precision"], section["summary"]["fp"]) == (0.666667, 2)
    assert ("every query must pass: 1 of 4 failed: what-s-the-weather-today (2/2, should not trigger)"
            in run.err + run.out)
    # Reverting the description reuses every earlier trigger record: zero calls.
    project.replace("skills/kids/SKILL.md", "whatever the weather", "near a place")
    run, calls = _run(project, tmp_path, env)
    assert (run.code, calls) == (0, 0)


def test_gates_replace_the_every_query_rule_and_errors_are_retried(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    project.replace("kids.eval.yaml", "    - write me a python script\n",
                    "    - write me a python script\n    - FAIL-HARD please\n")
    project.replace("kids.eval.yaml", "cases:", "thresholds: {min_trigger_recall: 0.9}\ncases:")
    run, calls = _run(project, tmp_path, env)
    assert calls == 10
    assert run.code == 1  # errors make the spec red even when every gate passes
    section = _report(project)["triggers"]
    assert [e["query"] for e in section["errors"]] == ["fail-hard-please"] * 2
    assert next(t for t in _report(project)["thresholds"] if t["metric"] == "min_trigger_recall")["passed"]
    run, calls = _run(project, tmp_path, env)
    assert calls == 2  # only the two failed runs are tried again


def test_tag_trigger_selects_only_trigger_trials(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    run, calls = _run(project, tmp_path, env, "--tag", "trigger")
    assert (calls, run.trials) == (8, 0)
    run, calls = _run(project, tmp_path, env, "-k", "not trigger")
    assert (calls, run.trials) == (0, 1)


SEEDS = Path(__file__).resolve().parents[1] / "data" / "seeds"
PROJECT_AGENT = 'agent = {kind = "claude-code", env = {ANTHROPIC_API_KEY = "sk-fake"}}\n'


def _seed_project(tmp_path: Path, files: dict[str, str]) -> tuple[Project, dict[str, str]]:
    project = Project.empty(tmp_path / "proj", {"skillmake.toml": PROJECT_AGENT, **files})
    return project, {"SKILLMAKE_CLAUDE": str(install_fake_claude(tmp_path))}


def test_clauditors_trigger_tests_run_on_the_projects_agent(tmp_path: Path) -> None:
    import shutil

    project, env = _seed_project(tmp_path, {})
    shutil.copytree(SEEDS / "clauditor" / "commands" / ".claude", project.root / ".claude")
    project.run("--tag", "trigger", env=env)
    section = _report(project, "find-kid-activities")["triggers"]
    # The command file has no frontmatter: its first line is the description Claude Code (and the stand-in) show.
    assert (section["agent"], section["runs"], section["threshold"]) == ("claude-code", 3, 0.5)
    assert [(q["id"], q["triggers"], q["runs"]) for q in section["queries"]] == [
        ("find-kid-activities-in-cupertino", 3, 3), ("what-are-some-things-to-do", 0, 3),
        ("what-s-the-weather-today", 0, 3), ("help-me-write-a-python-script", 3, 3)]  # "Write the results…"
    assert section["false_positives"] == ["help-me-write-a-python-script"]
    assert len(claude_log(tmp_path)) == 12


def test_skill_creators_trigger_eval_set_runs_and_evas_triggering_says_why_it_cannot(tmp_path: Path) -> None:
    import shutil

    project, env = _seed_project(tmp_path, {})
    shutil.copytree(SEEDS / "skill-creator" / "example-skill", project.root / "example-skill")
    (project.root / "example-skill" / "evals" / "trigger-eval-set.json").write_text(json.dumps([
        {"query": "answer in uppercase please", "should_trigger": True},
        {"query": "write me a fibonacci function", "should_trigger": False}]))
    shutil.copytree(SEEDS / "eva" / "rejects-empty", project.root / "eva-prompt")
    eval_yml = project.root / "eva-prompt" / "eval.yml"
    eval_yml.write_text(eval_yml.read_text() + "triggering:\n  should_trigger: [reject empty constraints]\n")
    run = project.run("--tag", "trigger", env=env)
    section = _report(project, "example-skill")["triggers"]
    assert [(q["id"], q["should_trigger"], q["triggers"], q["runs"]) for q in section["queries"]] == [
        ("answer-in-uppercase-please", True, 3, 3), ("write-me-a-fibonacci-function", False, 0, 3)]
    assert len(claude_log(tmp_path)) == 6
    rendered = project.run("report", env=env)  # eva's eval had nothing selected: render its report
    eva = _report(project, "eva-prompt")["triggers"]
    assert eva["skipped"].startswith("the skill is a prompt file, which no agent installs or activates")
    assert "not run — the skill is a prompt file" in rendered.out
    # The cases' trials were not selected (--tag trigger): not run, not failed (pytest's -k); the triggers passed.
    assert run.code == 0, run.out + run.err
    assert "not run (not selected)" in run.out


def test_more_runs_draw_only_the_new_samples_and_a_threshold_only_recounts(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    assert _run(project, tmp_path, env)[1] == 8
    project.replace("kids.eval.yaml", "runs: 2", "runs: 3")
    run, calls = _run(project, tmp_path, env)
    assert (run.code, calls) == (0, 4)  # one more run of each of the 4 queries
    project.replace("kids.eval.yaml", "runs: 3", "runs: 3\n  threshold: 0.9")
    run, calls = _run(project, tmp_path, env)
    assert (run.code, calls) == (0, 0)
    assert _report(project)["triggers"]["threshold"] == 0.9
    project.replace("kids.eval.yaml", "runs: 3", "runs: 1")
    run, calls = _run(project, tmp_path, env)
    assert calls == 0 and all(q["runs"] == 1 for q in _report(project)["triggers"]["queries"])
