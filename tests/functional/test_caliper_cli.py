"""`skillmake caliper run|validate SPEC [FLAGS]`: caliper's command lines with caliper's exit codes (run: 0 whatever
the verdict, 1 no such file or an invalid spec, 2 no trial could run or a bad command line; validate: 0 or 1), its
results file (the --output path and `.caliper/results/<spec>/`), and skillmake's incrementality; a plain run keeps
exit 1."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .project import Project

SKILL = "---\nname: s\ndescription: says hello\n---\nSay hello.\n"
AGENT = """\
from pathlib import Path
with open(Path(__file__).resolve().parent / "calls.log", "a") as log:
    log.write("call\\n")
print("hello")
"""
SPEC = """\
skill: {path: ./SKILL.md}
tasks:
  - name: says hello
    prompt: hi
    assert: "assert 'hello' in output"
  - name: expects more
    prompt: hi
    assert: "assert 'goodbye' in output"
"""
CONFIG = 'trials = 2\nagent = {kind = "command", command = ["python3", "agent.py"]}\n'


def project(tmp_path: Path, config: str = CONFIG) -> Project:
    return Project.empty(tmp_path / "p", {"skillmake.toml": config, "agent.py": AGENT, "skill/SKILL.md": SKILL,
                                          "skill/t.eval.yaml": SPEC})


def caliper(p: Project, *args: str) -> object:
    return p.run(cmd=[sys.executable, "-m", "skillmake", "caliper", *args], check_views=False)


def test_run_exits_0_with_a_failing_task_and_writes_calipers_results(tmp_path: Path) -> None:
    p = project(tmp_path)
    plain = p.run()
    assert plain.code == 1  # skillmake's own exit code: a trial failed
    done = caliper(p, "run", "skill/t.eval.yaml", "--k", "2", "--output", "out/r.json")
    assert done.code == 0, done.out + done.err  # type: ignore[attr-defined]
    assert done.agent_calls == 0  # type: ignore[attr-defined]  # the plain run's trials serve it
    data = json.loads((p.root / "out" / "r.json").read_text())
    assert [(t["task_id"], t["successes"]) for t in data["task_results"]] == [("task-001", 2), ("task-002", 0)]
    assert data["aggregate"]["avg_pass_at_k"] == 0.5 and data["baseline"] is None and data["delta"] is None
    assert [a["assert_passed"] for a in data["task_results"][1]["attempts"]] == [False, False]
    saved = list((p.root / "skill" / ".caliper" / "results" / "t").glob("*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text()) == data


def test_validate_and_run_exit_1_for_an_invalid_spec_or_no_file(tmp_path: Path) -> None:
    p = project(tmp_path)
    assert caliper(p, "validate", "skill/t.eval.yaml").code == 0  # type: ignore[attr-defined]
    p.write("skill/t.eval.yaml", SPEC.replace("prompt: hi\n    assert: \"assert 'hello'", "assert: \"assert 'hello'"))
    bad = caliper(p, "validate", "skill/t.eval.yaml")
    assert bad.code == 1 and "missing required key 'prompt'" in bad.out  # type: ignore[attr-defined]
    assert caliper(p, "run", "skill/t.eval.yaml").code == 1  # type: ignore[attr-defined]
    assert caliper(p, "run", "skill/nope.eval.yaml").code == 1  # type: ignore[attr-defined]


def test_run_exits_2_when_no_trial_could_run(tmp_path: Path) -> None:
    p = project(tmp_path, 'trials = 1\nagent = {kind = "command", command = ["python3", "down.py"]}\n')
    p.write("down.py", "import sys\nsys.exit('the backend is not logged in')\n")
    done = caliper(p, "run", "skill/t.eval.yaml")
    assert done.code == 2, done.out + done.err  # type: ignore[attr-defined]


def test_a_bad_command_line_exits_2_as_calipers_does(tmp_path: Path) -> None:
    p = project(tmp_path)
    done = caliper(p, "run", "skill/t.eval.yaml", "--k", "three")
    assert done.code == 2 and "--k" in done.err and done.agent_calls == 0  # type: ignore[attr-defined]
