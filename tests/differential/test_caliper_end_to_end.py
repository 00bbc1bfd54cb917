"""The whole run, side by side: the real caliper 0.1.0 CLI (`caliper run`, in its venv) and skillmake run the same
caliper specs against the same loopback fake API (the claude-api backend for agent and judge: both sides speak the
Anthropic Messages API), and give the same pass counts per task and arm. The fake decides deterministically: the
agent answers in capitals when the skill's body is in its request, the judge passes a reply that says SAY. Exit
codes are compared too: caliper's `run` and `skillmake caliper run` both exit 0 whatever the verdict."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.differential.seedtools import ask, require_seedtools
from tests.fakeapi import FakeAPI, Recorded, Reply

DATA = Path(__file__).resolve().parents[1] / "data" / "differential" / "caliper" / "e2e"
REPO = Path(__file__).resolve().parents[2]
SKILL_BODY = "Answer in UPPERCASE."
# (spec folder, caliper's flags): caliper's default judge, and --judge script (the only mode that runs assert:).
RUNS = [("judged", ["--baseline"]), ("asserts", ["--judge", "script"]), ("both", ["--judge", "script", "--baseline"])]


def fake_model(request: Recorded) -> Reply:
    body = request.json or {}
    text = request.text()
    if request.has_tools:  # skillmake's judge: one verdict per listed expectation, through its verdict tool
        ids = re.findall(r"^- (E\d+): ", text, flags=re.MULTILINE) or ["E1"]
        said = "SAY HELLO" in text.split("</expectations>")[-1] if "</expectations>" in text else "SAY HELLO" in text
        return Reply.tool_use("record_verdict", {"expectations": [
            {"id": i, "passed": said, "evidence": "says SAY HELLO" if said else "no SAY HELLO"} for i in ids]})
    if "evaluation judge" in str(body.get("system", "")):  # caliper's judges (autorater, script)
        said = "SAY HELLO" in text.split("<transcript>")[-1]
        return Reply.text(json.dumps({"mode": "verdict", "passed": said, "reasoning": "said it" if said else "no"}))
    prompt = text.split("[End skill context]")[-1]  # caliper puts the skill into the prompt, skillmake the system
    answer = prompt.strip().splitlines()[-1]
    return Reply.text(answer.upper() if SKILL_BODY in text else answer.lower())


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        fake.script = fake_model
        yield fake


def copy_spec(name: str, dest: Path, out: Path) -> Path:
    shutil.copytree(DATA / name, dest)
    spec = dest / f"{name}.eval.yaml"
    spec.write_text(spec.read_text().replace("OUT", str(out)))
    return spec


def counts_in(result: Path) -> dict[tuple[str, str], int]:
    """Successes per (task, arm) in a results file of caliper's shape."""
    data = json.loads(result.read_text())
    counts = {(t["task_id"], "with_skill"): t["successes"] for t in data["task_results"]}
    for t in (data.get("baseline") or {}).get("per_task", []):
        counts[(t["task_id"], "without_skill")] = t["successes"]
    return counts


def caliper_counts(spec: Path, flags: list[str], env: dict[str, str]) -> tuple[int, dict[tuple[str, str], int]]:
    python = require_seedtools("caliper")
    result = spec.parent / "caliper-out.json"
    driver = Path(__file__).resolve().parent / "caliper_driver.py"
    done = subprocess.run([str(python), str(driver), "run", spec.name, "--k", "3", *flags, "--output", str(result)],
                          cwd=spec.parent, env=env, capture_output=True, text=True, timeout=300)
    assert result.exists(), done.stdout + done.stderr
    return done.returncode, counts_in(result)


def skillmake_counts(spec: Path, flags: list[str], env: dict[str, str]) -> tuple[int, dict[tuple[str, str], int]]:
    """caliper's command line, run by skillmake (`skillmake caliper run`): its --output file has caliper's shape
    (read by caliper's own model), and says what report.json says."""
    result = spec.parent / "skillmake-out.json"
    done = subprocess.run([sys.executable, "-m", "skillmake", "caliper", "run", spec.name, "--k", "3", *flags,
                           "--output", str(result)],
                          cwd=spec.parent, env=env, capture_output=True, text=True, timeout=300)
    name = spec.name.removesuffix(".eval.yaml")
    report = spec.parent / ".skillmake" / "reports" / name / "report.json"
    assert report.exists() and result.exists(), done.stdout + done.stderr
    assert ask("caliper_driver.py", {"op": "results", "path": str(result)}) == {"valid": True, "error": ""}
    rows = json.loads(report.read_text())["rows"]
    assert counts_in(result) == {(r["case"], r["arm"]): r["passed"] for r in rows}
    return done.returncode, counts_in(result)


@pytest.mark.parametrize(("name", "flags"), RUNS, ids=[r[0] for r in RUNS])
def test_caliper_and_skillmake_give_the_same_pass_counts(api: FakeAPI, tmp_path: Path, name: str,
                                                         flags: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLMAKE_", "PYTHON"))}
    env.update(api.anthropic_env(), PYTHONPATH=str(REPO))
    out = [Path("/tmp") / f"caliper-e2e-{uuid.uuid4().hex}.txt" for _ in range(2)]
    theirs_code, theirs = caliper_counts(copy_spec(name, tmp_path / "caliper", out[0]), flags, env)
    ours_code, ours = skillmake_counts(copy_spec(name, tmp_path / "skillmake", out[1]), flags, env)
    print(f"{name}: caliper {sorted(theirs.items())}, skillmake {sorted(ours.items())}")
    assert ours == theirs
    assert theirs_code == ours_code == 0  # caliper exits 0 whatever the verdict, and so does its command line here
    assert not out[0].exists() and not out[1].exists()  # both ran the cleanup
    assert api.errors == []
