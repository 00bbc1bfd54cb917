"""What a report decides without any key holding it: thresholds, required cases, labels. Editing one re-renders the
report and may turn the verdict and the exit code, with zero agent and judge calls; then the run is a no-op."""

from __future__ import annotations

from pathlib import Path

import orjson

from .project import Project


def _gates(project: Project) -> list[tuple[str, float, bool]]:
    report = orjson.loads((project.root / ".skillmake/reports/alpha/report.json").read_bytes())
    return [(t["metric"], t["threshold"], t["passed"]) for t in report["thresholds"]]


def test_a_threshold_edit_re_renders_the_report_and_turns_the_exit_code(tmp_path: Path) -> None:
    project = Project(tmp_path)
    # Case three can never pass: with_skill passes 4 of 6 trials (0.67).
    project.replace("alpha.eval.yaml", 'pattern: "THREE"', 'pattern: "NEVER"')
    project.replace("alpha.eval.yaml", "baseline: true\n", "baseline: true\nthresholds: {min_pass_rate: 0.5}\n")
    assert project.run().code == 0
    project.replace("alpha.eval.yaml", "min_pass_rate: 0.5", "min_pass_rate: 0.9")
    raised = project.run()
    assert (raised.code, raised.agent_calls, raised.trials, raised.grades) == (1, 0, 0, 0)
    assert _gates(project) == [("min_pass_rate", 0.9, False)]
    assert "with_skill pass rate 0.67 < min_pass_rate 0.90" in raised.out + raised.err
    again = project.run()
    assert (again.code, again.agent_calls) == (1, 0)
    project.replace("alpha.eval.yaml", "min_pass_rate: 0.9", "min_pass_rate: 0.6")
    lowered = project.run()
    assert (lowered.code, lowered.agent_calls) == (0, 0)
    assert _gates(project) == [("min_pass_rate", 0.6, True)]
    assert "nothing stale" in project.run().out  # and then nothing is left to do


def test_a_labelled_spec_is_a_no_op_the_second_time(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.replace("alpha.eval.yaml", "  - id: one\n", "  - id: one\n    eval_id: 7\n")
    assert project.run().code == 0
    assert "nothing stale" in project.run().out
