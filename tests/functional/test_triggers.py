"""Trigger tests through the real `skillmake` front end and doit, with a stand-in `claude` (SKILLMAKE_CLAUDE)
that picks a skill the way a model would have to: from the names and descriptions installed in the workspace.

It activates the first installed skill (in name order) whose description shares a word of five letters or more
with the query, in Claude Code 2.1.328's stream-json shapes (a `Skill` tool_use, then its tool_result); every call
is logged, so the tests count agent calls exactly. The real CLI against the fake API is tests/e2e/test_triggers.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import orjson

from .project import Project, Run

FAKE_CLAUDE = r'''
import json, os, re, sys
from pathlib import Path
if "--version" in sys.argv:
    print("2.1.328 (Claude Code)"); sys.exit(0)
prompt = sys.stdin.read()
log = Path(LOG)
with log.open("a") as f:
    f.write(json.dumps({"prompt": prompt}) + "\n")
def words(text):
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 5}
chosen = None
skills = Path(".claude/skills")
for folder in sorted(skills.iterdir()) if skills.is_dir() else []:
    text = (folder / "SKILL.md").read_text()
    desc = json.loads(re.search(r"^description: (.*)$", text, re.M).group(1))
    if words(desc) & words(prompt):
        chosen = folder.name
        break
if "FAIL-HARD" in prompt:
    sys.stderr.write("boom\n"); sys.exit(1)
out = [{"type": "system", "subtype": "init", "skills": sorted(p.name for p in skills.iterdir()) if skills.is_dir() else []}]
if chosen:
    out.append({"type": "assistant", "message": {"id": "m1", "content": [
        {"type": "tool_use", "id": "t1", "name": "Skill", "input": {"skill": chosen}}]}})
    out.append({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "Launching skill: " + chosen}]}})
out.append({"type": "assistant", "message": {"id": "m2", "content": [{"type": "text", "text": "done"}]}})
out.append({"type": "result", "subtype": "success", "is_error": False, "result": "done", "num_turns": 2,
            "total_cost_usd": 0.002, "usage": {"input_tokens": 50, "output_tokens": 5}})
print("\n".join(json.dumps(e) for e in out))
'''

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
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    fake.write_text(f"#!{sys.executable}\nLOG = {str(tmp_path / 'claude.log')!r}\n{FAKE_CLAUDE}")
    fake.chmod(0o755)
    return project, {"SKILLMAKE_CLAUDE": str(fake)}


def _claude_calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "claude.log"
    return [json.loads(line)["prompt"] for line in log.read_text().splitlines()] if log.exists() else []


def _report(project: Project) -> dict:
    return orjson.loads((project.root / ".skillmake/reports/kids/report.json").read_bytes())


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
    assert "ran 1 trials and 1 grades and 8 trigger trials (14 model requests)" in run.out
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
    assert "every query must pass: 1 of 4 failed: what-s-the-weather-today (2/2, should not trigger)" in run.err + run.out
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
    assert [t for t in _report(project)["thresholds"] if t["metric"] == "min_trigger_recall"][0]["passed"]
    run, calls = _run(project, tmp_path, env)
    assert calls == 2  # only the two failed runs are tried again


def test_tag_trigger_selects_only_trigger_trials(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    run, calls = _run(project, tmp_path, env, "--tag", "trigger")
    assert (calls, run.trials) == (8, 0)
    run, calls = _run(project, tmp_path, env, "-k", "not trigger")
    assert (calls, run.trials) == (0, 1)
