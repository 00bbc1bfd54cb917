"""Start-up stays light: `skillmake --version` and `--help` import neither the engine nor jsonschema, an SDK or
YAML, and importing the engine's modules imports neither jsonschema nor an SDK (those load where they are used)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("jsonschema", "referencing", "anthropic", "openai", "httpx", "yaml")


def imported(*args: str, cwd: Path | None = None) -> set[str]:
    """The modules a fresh interpreter imports running `args` (from `-X importtime`, which lists each once)."""
    run = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True, text=True, timeout=120,
                         cwd=cwd)
    assert run.returncode == 0, run.stderr[-2000:]
    names = set()
    for line in run.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "skillmake" in names or "-c" in args, run.stderr[-2000:]
    return names


def roots(names: set[str]) -> set[str]:
    return {name.split(".")[0] for name in names}


def test_version_imports_neither_doit_nor_the_engine() -> None:
    names = imported("-m", "skillmake", "--version")
    assert not roots(names) & {*HEAVY, "doit"}, sorted(roots(names) & {*HEAVY, "doit"})
    assert not {n for n in names if n.startswith("skillmake.engine")}


@pytest.mark.parametrize("args", [("--help",), ("help",), ("run", "--help")])
def test_help_imports_doit_but_not_the_engine(args: tuple[str, ...]) -> None:
    names = imported("-m", "skillmake", *args)
    assert not roots(names) & set(HEAVY), sorted(roots(names) & set(HEAVY))
    engine = {"skillmake.engine.tasks", "skillmake.engine.reporter", "skillmake.results.checkout",
              "skillmake.run.judges", "skillmake.spec.loader", "skillmake.run.project"}
    assert not names & engine, sorted(names & engine)


def test_the_engine_imports_no_jsonschema_and_no_sdk() -> None:
    names = imported("-c", "import skillmake.engine.tasks, skillmake.engine.reporter, skillmake.results.checkout, "
                           "skillmake.run.judges.expectations, skillmake.run.judges.resolve, skillmake.run.grade")
    heavy = roots(names) & {"jsonschema", "referencing", "anthropic", "openai", "httpx"}
    assert not heavy, sorted(heavy)


def test_the_judges_names_still_load_on_use() -> None:
    from skillmake.run import judges

    assert judges.judge_case.__module__ == "skillmake.run.judges.run"
    assert judges.JudgeOutcome.__module__ == "skillmake.run.judges.base"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        judges.nothing  # noqa: B018


def test_a_plain_run_of_a_command_agent_imports_no_ssl(tmp_path: Path) -> None:
    """urllib.request (for the urls_reachable check) brings ssl and http.client: ~10 MiB of RSS in a run that checks
    no URL (bench/memory.py). It loads where a URL is checked."""
    (tmp_path / "skills" / "a").mkdir(parents=True)
    (tmp_path / "skills" / "a" / "SKILL.md").write_text("---\nname: a\ndescription: answers\n---\nGo.\n")
    (tmp_path / "a.eval.yaml").write_text("skill: skills/a\nagent: {kind: command, command: [sh, -c, 'echo done']}\n"
                                          "trials: 1\ncases:\n  - {id: one, prompt: go, checks: [{type: contains, "
                                          "needle: done}]}\n")
    names = imported("-m", "skillmake", "-q", cwd=tmp_path)
    assert (tmp_path / ".skillmake" / "reports" / "a" / "report.json").exists()
    network = names & {"ssl", "http.client", "urllib.request"}
    assert not network, sorted(network)
    # Nor what other agents, other tools' specs and other check types need (commands/runner.py, run/checks).
    unused = names & {"skillmake.run.agents.claude_code", "skillmake.run.agents.claude_stream",
                      "skillmake.spec.adapters.clauditor", "skillmake.run.checks.data",
                      "skillmake.run.checks.patterns", "skillmake.run.checks.python", "skillmake.run.checks.urls"}
    assert not unused, sorted(unused)
    assert "skillmake.run.checks.text" in names  # the contains check's module, loaded where it runs
