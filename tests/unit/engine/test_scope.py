from __future__ import annotations

import pytest

from skillmake.engine.scope import needs_full_graph


@pytest.mark.parametrize("argv", [[], ["-n", "8"], ["-n", "8", "-P", "thread"], ["trial"], ["run", "report"],
                                  ["validate"], ["--db-file", "x.db"], ["-v", "2", "grade"], ["--process=4"]])
def test_plain_runs_get_only_the_stale_part(argv: list[str]) -> None:
    assert not needs_full_graph(argv)


@pytest.mark.parametrize("argv", [["list"], ["list", "--all"], ["info", "trial:a/b/c/0"], ["trial:a/b/c/0"],
                                  ["-a"], ["--always-execute"], ["forget", "trial"], ["clean"], ["dumpdb"],
                                  ["run", "report:alpha"], ["-n", "2", "grade:x/y/z/1"]])
def test_commands_and_named_tasks_get_the_whole_graph(argv: list[str]) -> None:
    assert needs_full_graph(argv)


def test_environment_forces_the_whole_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLMAKE_FULL_GRAPH", "1")
    assert needs_full_graph([])
