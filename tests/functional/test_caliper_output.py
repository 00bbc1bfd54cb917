"""caliper's `--output FILE` on `skillmake`: the run's results — the report of every spec it covered — in one
JSON file, written whatever the verdict, and also after a run that had nothing stale."""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft7Validator

from .project import Project

REPO = Path(__file__).resolve().parents[2]


def output(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text())
    schema = json.loads((REPO / "schemas" / "run-output.schema.json").read_text())
    assert list(Draft7Validator(schema).iter_errors(data)) == []
    return dict(data)


def test_output_holds_every_covered_specs_report(tmp_path: Path) -> None:
    project = Project(tmp_path / "proj")
    run = project.run("--k", "1", "--output", "out/results.json")
    assert run.code == 0, run.err
    data = output(project.root / "out" / "results.json")
    reports = data["reports"]
    assert isinstance(reports, list)
    assert sorted(r["spec"]["name"] for r in reports) == ["alpha", "beta"] and data["passed"] is True
    on_disk = json.loads((project.root / ".skillmake" / "reports" / "alpha" / "report.json").read_text())
    assert next(r for r in reports if r["spec"]["name"] == "alpha") == on_disk
    assert data["missing"] == []

    again = project.run("--k", "1", "-k", "alpha", "--output", str(tmp_path / "second.json"))
    assert again.agent_calls == 0  # nothing stale: the file still says what the results are
    second = output(tmp_path / "second.json")
    assert [r["spec"]["name"] for r in second["reports"]] == ["alpha"]  # type: ignore[union-attr, index]


def test_output_is_written_when_the_verdict_is_red(tmp_path: Path) -> None:
    project = Project(tmp_path / "proj")
    project.replace("alpha.eval.yaml", "needle: ONE", "needle: NEVER")
    run = project.run("--k", "1", "--output", "r.json")
    assert run.code == 1
    data = output(project.root / "r.json")
    assert data["passed"] is False
