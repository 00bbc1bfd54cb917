"""caliper's own example specs, copied verbatim (tests/data/seeds/caliper/), validated and run by the real
`skillmake`: the same verdicts as their hand-written native twins, and the same trials (proven by counting calls).

They name `backend: codex` for the agent and the judge, so they run on the codex agent and the codex judge with a
stand-in `codex` binary (SKILLMAKE_CODEX, as caliper's CODEX_CLI_PATH) that speaks `codex exec --json` and logs
every call: agent calls to calls.log, judge calls (`--output-schema`) to judge.log. The real codex CLI judging
against the fake API is tests/e2e/test_codex_judge.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .project import Project

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "tests" / "data" / "seeds" / "caliper"
INVALID = sorted((SEEDS / "invalid").glob("*.eval.yaml"))

FAKE_CODEX = '''\
#!{python}
"""Stands in for `codex exec --json`: answers 4 when a skill is installed in the workspace, guesses without; as the
judge (--output-schema), passes E1 when the answer judged is 4."""
import glob, json, sys
if sys.argv[1:] == ["--version"]:
    print("codex-cli 0.0.0-fake")
    sys.exit(0)
prompt = sys.stdin.read()
if "--output-schema" in sys.argv:
    passed = "The answer is 4." in prompt
    with open({judge_log!r}, "a") as log:
        log.write(("pass" if passed else "fail") + "\\n")
    verdict = {{"id": "E1", "passed": passed, "evidence": "answers 4" if passed else "no 4"}}
    text = json.dumps({{"expectations": [verdict]}})
else:
    skills = sorted(glob.glob(".agents/skills/*/SKILL.md"))
    with open({log!r}, "a") as log:
        log.write(("with " if skills else "without ") + prompt.replace("\\n", " ") + "\\n")
    text = "The answer is 4." if skills else "Probably five?"
for event in ({{"type": "thread.started", "thread_id": "t"}},
              {{"type": "item.completed", "item": {{"type": "agent_message", "text": text}}}},
              {{"type": "turn.completed", "usage": {{"input_tokens": 10, "output_tokens": 5}}}}):
    print(json.dumps(event))
'''


def seed_project(tmp_path: Path, seed: str, *, twin: bool, config: str | None = "trials = 2\n",
                 ) -> tuple[Project, dict[str, str]]:
    """A project holding the seed folder (the twin only when asked) as `skill/`, and the environment for its runs.
    caliper keeps a spec inside its skill's folder (`path: ./SKILL.md`); the project root is above it, so the
    store is not inside the skill (see the xfail below for the spec itself). `config`: the project's skillmake.toml
    (its `trials = 2` beats caliper run's default of 3; None: no config, caliper's defaults apply)."""
    root = tmp_path / "proj"
    shutil.copytree(SEEDS / seed, root / "skill",
                    ignore=None if twin else shutil.ignore_patterns("*-native.eval.yaml"))
    p = Project.empty(root, {"skillmake.toml": config} if config is not None else {})
    fake = p.write("fake_codex.py", FAKE_CODEX.format(python=sys.executable, log=str(root / "calls.log"),
                                                      judge_log=str(root / "judge.log")))
    fake.chmod(0o755)
    # A key, so the codex judge runs hermetic (its own CODEX_HOME) and preflight is satisfied; nothing is called.
    return p, {"SKILLMAKE_CODEX": str(fake), "OPENAI_API_KEY": "sk-fake-codex-judge",
               "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}


def judge_calls(p: Project) -> list[str]:
    log = p.root / "judge.log"
    return log.read_text().splitlines() if log.exists() else []


def rows(p: Project, spec: str) -> list[tuple[Any, ...]]:
    report = json.loads((p.root / ".skillmake" / "reports" / spec / "report.json").read_text())
    return [(r["case"], r["arm"], r["passed"], r["trial_keys"]) for r in report["rows"]]


def timeouts(p: Project, spec: str, case: str = "task-001") -> list[float]:
    """The timeout each trial of the cell ran under (its trial.json), by k."""
    cells = sorted((p.root / ".skillmake" / "runs" / spec / case / "with_skill").glob("trial-*"))
    return [json.loads((cell / "trial.json").read_text())["timing"]["timeout_s"] for cell in cells]


@pytest.mark.parametrize(("seed", "name"), [("quick-start", "my-skill"), ("codex-agent", "my-codex-skill")])
def test_seed_runs_and_its_native_twin_shares_its_trials_and_verdicts(tmp_path: Path, seed: str, name: str) -> None:
    # Both files from the start: caliper keeps a spec inside its skill's folder, whose tree is the skill's digest
    # (adding a file there is a skill edit). The seed runs alone first (-k), then the twin. No project config:
    # the seed runs with caliper run's defaults (--k 3, --timeout 120), which its twin writes out.
    p, env = seed_project(tmp_path, seed, twin=True, config=None)
    first = p.run("-k", "not native", env=env)
    assert first.agent_calls == 3, first.out + first.err  # one task × with_skill × caliper's 3 trials
    assert all(line.startswith("with ") for line in p.calls())
    assert timeouts(p, name) == [120.0, 120.0, 120.0]  # caliper's --timeout default, not skillmake's 300
    # judge.backend: codex judges with codex; the trials answered alike, so they share one grade (one call).
    assert judge_calls(p) == ["pass"], first.out + first.err
    twin = p.run(env=env)
    assert twin.agent_calls == 0, twin.out + twin.err  # the native twin's trials are the seed's
    assert "ran 0 trials and 0 grades; reused 6 trials and 6 grades" in twin.out  # grades are shared too
    assert rows(p, name) == rows(p, f"{name}-native") and judge_calls(p) == ["pass"]
    assert timeouts(p, f"{name}-native") == [120.0, 120.0, 120.0]
    again = p.run(env=env)
    assert (again.agent_calls, again.grades) == (0, 0)
    assert first.code == 0, first.out + first.err  # the stand-in answers 4 with the skill, which the judge passes
    assert [r[:3] for r in rows(p, name)] == [("task-001", "with_skill", 3)]
    report = json.loads((p.root / ".skillmake" / "reports" / name / "report.json").read_text())
    # Both pass@k estimators, each named: caliper's 1 - (1 - 3/3)^3 and the unbiased one.
    assert (report["rows"][0]["pass_at_k_caliper"], report["rows"][0]["pass_at_k"]) == (1.0, 1.0)


def test_k_and_timeout_on_the_command_line_beat_calipers_defaults_and_keep_its_keys(tmp_path: Path) -> None:
    p, env = seed_project(tmp_path, "quick-start", twin=False, config=None)
    one = p.run("--k", "1", "--timeout", "30", env=env)
    assert one.agent_calls == 1 and timeouts(p, "my-skill") == [30.0], one.out + one.err
    # caliper's defaults again: only trials 1 and 2 are new (the timeout is in no key; trial 0 took < 120 s).
    default = p.run(env=env)
    assert default.agent_calls == 2, default.out + default.err
    assert timeouts(p, "my-skill") == [30.0, 120.0, 120.0]
    assert p.run("--trials", "2", env=env).agent_calls == 0


def test_the_spec_format_example_validates_with_its_twin(tmp_path: Path) -> None:
    p, env = seed_project(tmp_path, "spec-format", twin=True)
    done = subprocess.run([sys.executable, "-m", "skillmake", "validate"], cwd=p.root, capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, **env))
    assert done.returncode == 0, done.stderr
    assert "2 spec(s) valid" in done.stdout + done.stderr


def test_an_edited_task_reruns_only_that_task(tmp_path: Path) -> None:
    p, env = seed_project(tmp_path, "quick-start", twin=False)  # the project's trials = 2, not caliper's 3
    spec = "skill/my-skill.eval.yaml"
    p.write(spec, p.read(spec) + (
        '  - name: Second\n    prompt: "what is 3 + 1?"\n    assert: |\n      assert True\n'))
    assert p.run(env=env).agent_calls == 4
    p.replace(spec, "what is 3 + 1?", "what is 1 + 3?")
    edited = p.run(env=env)
    assert edited.agent_calls == 2 and all("1 + 3" in line for line in p.calls()[-2:])
    judged = len(judge_calls(p))
    p.replace(spec, "The assistant answers 4.", "The assistant answers four.")
    regraded = p.run(env=env)
    # An expect edit re-judges, never re-runs; the task's two trials answered alike, so they share one grade.
    assert regraded.agent_calls == 0 and regraded.grades == 1 and len(judge_calls(p)) == judged + 1


def expected_path(spec: Path) -> Path:
    return spec.with_name(spec.name.rsplit(".eval.", 1)[0] + ".expected")


def test_the_invalid_corpus_is_large_and_complete() -> None:
    assert len(INVALID) >= 10
    assert [p.name for p in INVALID if not expected_path(p).is_file()] == []


@pytest.mark.parametrize("spec", INVALID, ids=[p.name for p in INVALID])
def test_invalid_caliper_spec_reports_exact_errors(spec: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "skillmake", "validate", "--root", ".", spec.name],
                          cwd=spec.parent, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert "Traceback" not in done.stderr
    assert done.returncode == 2, done.stderr
    assert done.stderr == expected_path(spec).read_text(encoding="utf-8")


def test_a_spec_without_skill_path_runs_the_bare_agent_and_its_baseline_costs_nothing(tmp_path: Path) -> None:
    """caliper runs the bare agent when skill.path is left out; so does skillmake, and --baseline (the same run
    without a skill) shares its trials."""
    root = tmp_path / "proj"
    spec = ("skill:\n  backend: codex\n  model: gpt-5.4\n"
            "tasks:\n  - {name: sum, prompt: what is 2 + 2, assert: \"assert '4' in output or 'five' in output\"}\n")
    p = Project.empty(root, {"skillmake.toml": "trials = 2\n", "bare.eval.yaml": spec})
    fake = p.write("fake_codex.py", FAKE_CODEX.format(python=sys.executable, log=str(root / "calls.log"),
                                                      judge_log=str(root / "judge.log")))
    fake.chmod(0o755)
    env = {"SKILLMAKE_CODEX": str(fake), "OPENAI_API_KEY": "sk-fake", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    first = p.run(env=env)
    assert first.code == 0, first.out + first.err
    assert p.calls() == ["without what is 2 + 2"] * 2  # no skill installed in either trial
    report = json.loads((root / ".skillmake/reports/bare/report.json").read_text())
    assert report["spec"]["skill"] == "none"
    baseline = p.run("--baseline", env=env)
    assert baseline.code == 0, baseline.out + baseline.err
    assert len(p.calls()) == 2  # the without_skill arm's trials are the same runs: reused
    assert p.run("validate", env=env).code == 0
