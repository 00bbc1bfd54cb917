"""API keys never reach anything written: a python check runs in the agents' clean environment, and every record
and result file is redacted where it is written, whatever path a text took (the real `skillmake` CLI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .project import AGENT, Project

KEY = "sk-ant-api03-THIS-IS-THE-SECRET-KEY-0123456789"
TOKEN = "ghp_THISISTHEGITHUBTOKEN0123456789"
SKILL = "---\nname: a\ndescription: answers\n---\nAnswer in UPPERCASE.\n"
SPEC = """\
skill: skills/a
agent: {kind: command, command: [python3, agent.py]}
cases:
  - id: one
    prompt: say one
    checks:
      - {type: contains, needle: ONE}
      - {type: python, code: "import os; assert False, str(os.environ.get('ANTHROPIC_API_KEY'))"}
      - {type: python, code: "import os; assert False, repr(sorted(k for k in os.environ if 'TOKEN' in k))"}
      - {type: python, script: checks/leak.py}
"""
# What a check does when it has a secret anyway (one it read from a file): the write points still redact it.
LEAK = f"assert False, 'found ' + {KEY!r} + ' and ' + {TOKEN!r}\n"


@pytest.fixture(autouse=True)
def _no_inherited_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("SKILLMAKE_ROOT", "SKILLMAKE_STORE", "SKILLMAKE_TRIALS", "SKILLMAKE_TIMEOUT", "SKILLMAKE_JOBS",
                "SKILLMAKE_COMMAND_LINE_SETTINGS"):
        monkeypatch.delenv(var, raising=False)


def every_file(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


def test_a_key_in_the_environment_reaches_no_record_report_view_or_terminal(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "proj", {"agent.py": AGENT, "skills/a/SKILL.md": SKILL, "a.eval.yaml": SPEC,
                                          "checks/leak.py": LEAK, "skillmake.toml": ""})
    run = p.run("-v", env={"ANTHROPIC_API_KEY": KEY, "GITHUB_TOKEN": TOKEN}, check_views=False)
    assert run.code == 1, run.err[-2000:]  # the checks fail, as written
    state = p.root / ".skillmake"
    files = every_file(state)
    written = [name for name in files if name.endswith(("report.json", "junit.xml", "report.html", "grading.json"))]
    assert len(written) >= 4, sorted(files)
    grades = [name for name in files if name.startswith("actions/") and b'"kind": "grade"' in files[name]]
    assert grades
    # The project's own check script is snapshotted into the store as written (it is the user's file): the one
    # object allowed to hold the text. Nothing the run wrote from it may.
    leaked = [name for name, data in files.items() if (KEY.encode() in data or TOKEN.encode() in data
              or b"THIS-IS-THE-SECRET" in data or b"THISISTHEGITHUBTOKEN" in data) and data != LEAK.encode()]
    assert leaked == []
    assert KEY not in run.out + run.err and TOKEN not in run.out + run.err
    report = (state / "reports/a/report.json").read_text()
    assert "'None'" in report or "None" in report  # the first check saw no key at all: the clean environment
    assert "[]" in report  # nor any variable named like a token
    assert "found [REDACTED] and [REDACTED]" in report  # the file-read secret, redacted where it was written


def test_the_check_code_sees_the_agents_environment(tmp_path: Path) -> None:
    spec = SPEC.split("    checks:\n")[0] + (
        "    checks:\n"
        "      - {type: python, code: \"import os; assert False, ' '.join(sorted(os.environ))\"}\n")
    p = Project.empty(tmp_path / "proj", {"agent.py": AGENT, "skills/a/SKILL.md": SKILL, "a.eval.yaml": spec,
                                          "skillmake.toml": ""})
    run = p.run(env={"ANTHROPIC_API_KEY": KEY, "SOME_SETTING": "x"}, check_views=False)
    assert run.code == 1
    report = (p.root / ".skillmake/reports/a/report.json").read_text()
    names = next(line for line in report.splitlines() if "SKILLMAKE_OUTPUT_FILE" in line)
    assert "HOME" in names and "PATH" in names
    assert "ANTHROPIC_API_KEY" not in names and "SOME_SETTING" not in names
    assert os.environ.get("HOME", "") not in names.split()
