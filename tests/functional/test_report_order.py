"""A plain run reports each spec once its cells are done, not all specs after the last trial (tasks.report_order):
what a finished cell leaves for its report is then held for two or three specs at a time, not for the whole run."""

from __future__ import annotations

from pathlib import Path

import orjson

from .project import Project

SKILL = "---\nname: {name}\ndescription: answers\n---\nGo.\n"
# The agent says whether spec a's report.json exists when it runs (the workspace is outside the project: the path
# is absolute).
SPEC = """\
skill: skills/{name}
agent: {{kind: command, command: [sh, -c, 'if [ -e {report} ]; then echo after; else echo before; fi']}}
trials: 2
cases:
  - {{id: one, prompt: go, checks: [{{type: contains, needle: e}}]}}
  - {{id: two, prompt: go, checks: [{{type: contains, needle: e}}]}}
"""


def outputs(root: Path, spec: str) -> list[str]:
    """What each of the spec's trials printed, from its cells' views."""
    return sorted((path.read_text().strip()) for path in (root / ".skillmake" / "runs" / spec).glob("*/*/*/output.txt"))


def test_a_spec_is_reported_before_the_next_specs_trials_run(tmp_path: Path) -> None:
    report = tmp_path / ".skillmake" / "reports" / "a" / "report.json"
    files = {}
    for name in ("a", "b"):
        files[f"skills/{name}/SKILL.md"] = SKILL.format(name=name)
        files[f"{name}.eval.yaml"] = SPEC.format(name=name, report=report)
    project = Project.empty(tmp_path, files)
    run = project.run("-j", "1")
    assert run.code == 0, run.out + run.err
    assert orjson.loads(report.read_bytes())["verdict"]["passed"]
    # -j 1: a's report ran right after a's last cell, before any of b's trials (they were all reported at the end).
    assert outputs(tmp_path, "a") == ["before"] * 4
    assert outputs(tmp_path, "b") == ["after"] * 4
