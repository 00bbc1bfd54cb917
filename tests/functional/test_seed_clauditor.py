"""clauditor's own example specs, copied verbatim, run under skillmake: the harness is chosen as clauditor
chooses it (`auto`: claude found → claude-code), the skill is the one beside the spec, and a hand-written native
twin shares every trial with the seed (running it after the seed costs no agent call)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.functional.project import Project

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "tests" / "data" / "seeds" / "clauditor"

# A stand-in `claude`: logs each call to calls.log at the project root (Project.calls counts them) and answers
# in stream-json with the installed skill's first body line and the prompt it was given.
FAKE_CLAUDE = '''\
import json, pathlib, sys
if "--version" in sys.argv:
    print("2.1.328 (Claude Code)"); sys.exit(0)
prompt = sys.stdin.read()
root = pathlib.Path(__file__).resolve().parent.parent
with open(root / "calls.log", "a") as log:
    log.write(prompt.replace("\\n", " ") + "\\n")
skills = sorted(pathlib.Path(".claude").glob("*/*"))
body = "".join(p.read_text() if p.is_file() else (p / "SKILL.md").read_text() for p in skills)
text = "1. Cupertino Library https://sccl.org\\n" + prompt + ("" if body else " Error: no skill")
for event in ({"type": "system", "subtype": "init", "tools": ["Skill"], "model": "claude-sonnet-4-6"},
              {"type": "assistant", "message": {"id": "msg_1", "content": [{"type": "text", "text": text}]}},
              {"type": "result", "subtype": "success", "is_error": False, "result": text, "num_turns": 1,
               "total_cost_usd": 0.001, "usage": {"input_tokens": 10, "output_tokens": 5}}):
    print(json.dumps(event))
'''

TWIN = '''\
# The native translation of .claude/skills/find-kid-activities/SKILL.eval.json, written by hand.
skill: .claude/skills/find-kid-activities
agent: {kind: claude-code}
system_prompt: "You are a careful local-events researcher. Prefer primary sources (venue websites, official park \\
  pages) over aggregators. When confidence is low, say so explicitly."
cases:
  - id: find-kid-activities
    args: '"Cupertino, CA" --ages 4-6 --count 5'
    checks:
      - {id: no_error, type: not_contains, needle: Error}
'''


def _project(tmp_path: Path, seed: str) -> tuple[Project, dict[str, str]]:
    root = tmp_path / "p"
    shutil.copytree(SEEDS / seed, root)
    claude = root / "bin" / "claude"
    claude.parent.mkdir()
    claude.write_text(f"#!{sys.executable}\n{FAKE_CLAUDE}")
    claude.chmod(0o755)
    env = {"SKILLMAKE_CLAUDE": str(claude), "ANTHROPIC_API_KEY": "sk-test-not-a-key"}
    return Project.empty(root), env


def _rows(project: Project, spec: str) -> list[dict[str, object]]:
    report = orjson.loads((project.root / ".skillmake" / "reports" / spec / "report.json").read_bytes())
    return list(report["rows"])


def test_the_skill_folder_example_runs_on_the_harness_clauditor_would_choose(tmp_path: Path) -> None:
    project, env = _project(tmp_path, "skill-folder")
    first = project.run(env=env)
    assert first.code == 0, first.out + first.err
    assert first.agent_calls == 1
    # clauditor runs `/<skill> <test_args>`: the same prompt reaches the CLI
    assert project.calls() == ['/find-kid-activities "Cupertino, CA" --ages 4-6 --count 5']
    again = project.run(env=env)
    assert (again.code, again.agent_calls) == (0, 0)


def test_a_seed_spec_and_its_native_twin_share_trials_and_verdicts(tmp_path: Path) -> None:
    project, env = _project(tmp_path, "skill-folder")
    seed = project.run(env=env)
    assert (seed.code, seed.agent_calls) == (0, 1), seed.out + seed.err
    project.write("twin.eval.yaml", TWIN)
    twin = project.run(env=env)
    assert (twin.code, twin.agent_calls) == (0, 0), twin.out + twin.err
    seed_rows, twin_rows = _rows(project, "find-kid-activities"), _rows(project, "twin")
    strip = ("spec",)
    assert [{k: v for k, v in r.items() if k not in strip} for r in seed_rows] == \
        [{k: v for k, v in r.items() if k not in strip} for r in twin_rows]
    assert seed_rows[0]["trial_keys"] == twin_rows[0]["trial_keys"]


def test_validate_accepts_the_reference_examples(tmp_path: Path) -> None:
    project, env = _project(tmp_path, "commands")
    done = project.run("validate", env=env)
    assert done.code == 0, done.out + done.err
    assert done.agent_calls == 0


INVALID = SEEDS / "invalid"
BROKEN = sorted(p for p in INVALID.iterdir() if p.name.endswith(".eval.json"))


def test_the_malformed_corpus_is_large_and_complete() -> None:
    assert len(BROKEN) >= 10
    assert all(p.with_name(p.name.replace(".eval.json", ".expected")).is_file() for p in BROKEN)


@pytest.mark.parametrize("spec", BROKEN, ids=[p.name for p in BROKEN])
def test_a_malformed_clauditor_spec_is_located_in_its_own_lines(spec: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "skillmake", "validate", "--root", ".", spec.name], cwd=INVALID,
                          env=env, capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == spec.with_name(spec.name.replace(".eval.json", ".expected")).read_text(encoding="utf-8")


# A stand-in `claude` that replays a transcript the real CLI wrote: one turn that ends asking the user a question.
QUESTION = REPO / "tests" / "data" / "streams" / "claude_question.jsonl"
ASKING_CLAUDE = f'''\
import pathlib, sys
if "--version" in sys.argv:
    print("2.1.328 (Claude Code)"); sys.exit(0)
sys.stdin.read()
root = pathlib.Path(__file__).resolve().parent.parent
with open(root / "calls.log", "a") as log:
    log.write("asked\\n")
sys.stdout.write(pathlib.Path({str(QUESTION)!r}).read_text())
'''


def test_a_run_that_stops_to_ask_a_question_is_an_interactive_hang(tmp_path: Path) -> None:
    project, env = _project(tmp_path, "skill-folder")
    (project.root / "bin" / "claude").write_text(f"#!{sys.executable}\n{ASKING_CLAUDE}")
    first = project.run(env=env)
    assert first.code == 1, first.out + first.err
    assert "interactive-hang" in first.out + first.err
    row = _rows(project, "find-kid-activities")[0]
    assert row["outcomes"]["error"] == 1
    assert row["failures"][0]["evidence"].startswith("interactive-hang:")
    # an error is never a cached result: the next run asks the skill again
    again = project.run(env=env)
    assert (again.code, again.agent_calls) == (1, 1)
    # clauditor's escape hatch: the question is graded as the skill's answer
    spec = project.root / ".claude" / "skills" / "find-kid-activities" / "SKILL.eval.json"
    spec.write_text(spec.read_text().replace('"skill_name"', '"allow_hang_heuristic": false,\n  "skill_name"', 1))
    hatch = project.run(env=env)
    assert hatch.code == 0, hatch.out + hatch.err
    assert hatch.agent_calls == 1 and _rows(project, "find-kid-activities")[0]["outcomes"]["pass"] == 1
