"""doit's configuration for a skillmake project: its plugin lookups answered from one scan of the entry points."""

from __future__ import annotations

from importlib import metadata
from typing import Any

import pytest
from doit import plugin

from skillmake.engine.config import scan_entry_points_once


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> Any:
    """doit's own lookup put back for the test (the process may have scanned already), then scanned once."""
    monkeypatch.setattr(plugin, "entry_points_impl", lambda: metadata.entry_points)
    scan_entry_points_once()
    return plugin.entry_points_impl()


def _all_groups() -> list[str]:
    found: Any = metadata.entry_points()
    groups = dict.keys(found) if isinstance(found, dict) else {ep.group for ep in found}
    return sorted(groups)


def test_every_group_answers_what_entry_points_would(scanned: Any) -> None:
    reference: Any = metadata.entry_points()
    groups = _all_groups()
    assert groups, "the test environment has entry points (pytest's own)"
    for group in [*groups, "doit.COMMAND", "doit.REPORTER", "no.such.group"]:
        got = scanned(group=group)
        assert isinstance(got, metadata.EntryPoints)
        assert list(got) == list(reference.select(group=group)), group
    # Any other selection still works as importlib.metadata's own.
    assert list(scanned(name="pytest")) == list(reference.select(name="pytest"))


def test_a_group_lookup_does_not_test_every_installed_entry_point(scanned: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """doit looks plugins up by group ~20 times a run; each lookup used to test all ~140 distributions' entry
    points (EntryPoint.matches), ~0.15 ms a lookup."""
    tested: list[Any] = []
    matches = metadata.EntryPoint.matches

    def counting(self: metadata.EntryPoint, **params: Any) -> bool:
        tested.append(self)
        return matches(self, **params)

    monkeypatch.setattr(metadata.EntryPoint, "matches", counting)
    for group in ("doit.COMMAND", "doit.LOADER", "doit.BACKEND", "doit.REPORTER", "pytest11"):
        scanned(group=group)
    assert tested == []


def test_a_project_plugin_from_its_configuration_still_loads(scanned: Any) -> None:
    """Plugins a project configures (`[tool.doit.plugins.command]`) come from its configuration, next to those
    of installed packages."""
    commands = plugin.PluginDict()
    commands.add_plugins({"COMMAND": {"info": "skillmake.engine.info:Info"}}, "COMMAND")
    from skillmake.engine.info import Info

    assert commands.get_plugin("info") is Info
