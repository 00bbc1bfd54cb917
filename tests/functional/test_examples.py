"""The bundled examples as a new user meets them: every check kind runs, the summary agrees with
report.json, and breaking a skill on purpose turns the run red saying which check failed and why."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import orjson


def skillmake(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillmake", *args], cwd=root, capture_output=True, text=True,
                          timeout=300)


def test_examples_summary_matches_report_and_a_broken_skill_turns_red(repo: Path, tmp_path: Path) -> None:
    root = tmp_path / "examples"
    shutil.copytree(repo / "examples", root, ignore=shutil.ignore_patterns(".skillmake"))
    run = skillmake(root)
    assert run.returncode == 0, run.stdout + run.stderr

    report = orjson.loads((root / ".skillmake/reports/catalog/report.json").read_bytes())
    kinds = {c["type"] for case in _checks(root / "catalog.eval.yaml") for c in case}
    assert len(kinds) == 25  # every check type but urls_reachable (examples run offline)
    for row in report["rows"]:
        line = re.search(rf"^\s+{re.escape(row['case'])}\s+{row['arm']}\s+(\d+)/(\d+)\s+([\d.]+)", run.stdout,
                         re.MULTILINE)
        assert line, f"no summary row for {row['case']}/{row['arm']}"
        assert (int(line.group(1)), int(line.group(2))) == (row["passed"], row["n"])
        assert float(line.group(3)) == round(row["pass_at_k"], 2)
    for name in ("report.json", "benchmark.json", "history.jsonl", "junit.xml", "report.html"):
        assert (root / ".skillmake/reports/catalog" / name).is_file()
    trial0 = root / ".skillmake/runs/catalog/venues/with_skill/trial-0"
    assert {"grading.json", "timing.json", "trial.json", "grade.json"} <= {p.name for p in trial0.iterdir()}

    skill = root / "skills/catalog/SKILL.md"
    skill.write_text(skill.read_text().replace("catalog.json", "catalog.yaml"))  # the skill now asks for YAML
    red = skillmake(root)
    assert red.returncode == 1
    # The verdict's reasons are printed once, in the spec's summary; the thresholds line points at it.
    assert "catalog: required case 'venues' failed under with_skill (0/2 trials passed)" in red.stdout
    assert "catalog: FAILED — 4 reasons in its summary above" in red.stderr
    assert ("✗ venues/with_skill trial 0: file 'catalog.csv' contains 'Blue Door Cafe' — "
            "file 'catalog.csv' was not captured") in red.stderr
    assert "Traceback" not in red.stderr


def _checks(path: Path) -> list[list[dict[str, str]]]:
    import yaml

    return [case.get("checks", []) for case in yaml.safe_load(path.read_text())["cases"]]
