"""clauditor's command-line flags: their precedence over CLAUDITOR_* and the spec's fields (the adapter), how the
front end reads them (`skillmake --harness …`, `skillmake clauditor …`), and clauditor's exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillmake.commands import argv as cmdline
from skillmake.commands.clauditor import clauditor_exit
from skillmake.core.errors import UsageError
from skillmake.spec.adapters.clauditor import ADAPTER, FLAGS_VAR, chosen, harness, judge_provider
from skillmake.spec.source import read_source

NO_CLAUDE = {"PATH": "/nonexistent"}


def _flags(**given: Any) -> dict[str, str]:
    return {FLAGS_VAR: json.dumps(given), **NO_CLAUDE}


@pytest.mark.parametrize(("spec", "environ", "kind", "why"), [
    ({"harness": "codex"}, NO_CLAUDE, "codex", "harness"),
    ({"harness": "codex"}, {"CLAUDITOR_HARNESS": "claude-code", **NO_CLAUDE}, "claude-code", "$CLAUDITOR_HARNESS"),
    ({"harness": "codex"}, {**_flags(harness="claude-code"), "CLAUDITOR_HARNESS": "codex"}, "claude-code",
     "--harness"),
    ({}, _flags(harness="auto"), "codex", "--harness auto: claude not found"),
])
def test_the_harness_flag_beats_the_variable_which_beats_the_field(spec: dict[str, Any], environ: dict[str, str],
                                                                   kind: str, why: str) -> None:
    assert harness(spec, environ) == (kind, why)


@pytest.mark.parametrize(("spec", "environ", "provider"), [
    ({"grading_provider": "openai"}, {**_flags(grading_provider="anthropic"), "CLAUDITOR_GRADING_PROVIDER": "openai"},
     "anthropic"),
    ({}, _flags(grading_provider="openai"), "openai"),
    ({"transport": "api"}, {**_flags(transport="cli"), "CLAUDITOR_TRANSPORT": "api"}, "claude-code"),
    ({"transport": "cli"}, _flags(transport="api"), "anthropic"),
])
def test_judge_flags_beat_the_variables_and_the_fields(spec: dict[str, Any], environ: dict[str, str],
                                                       provider: str) -> None:
    assert judge_provider(spec, environ)[0] == provider


def test_a_malformed_flags_variable_is_no_flag() -> None:
    assert chosen({FLAGS_VAR: "{not json", "CLAUDITOR_HARNESS": "codex"}, "CLAUDITOR_HARNESS") == (
        "codex", "$CLAUDITOR_HARNESS")
    assert chosen({FLAGS_VAR: json.dumps({"harness": "gemini"})}, "CLAUDITOR_HARNESS") == ("", "")


def test_sync_tasks_flag_turns_the_field_on_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "greet.md").write_text("Greet.\n")
    spec = tmp_path / "greet.eval.json"
    spec.write_text(json.dumps({"sync_tasks": False, "assertions": [{"type": "has_urls"}]}))
    plain = ADAPTER.translate(read_source(str(spec)), path=str(spec), root=str(tmp_path), environ=NO_CLAUDE)
    flagged = ADAPTER.translate(read_source(str(spec)), path=str(spec), root=str(tmp_path),
                                environ=_flags(sync_tasks=True))
    assert (plain.data["agent"]["sync_tasks"], flagged.data["agent"]["sync_tasks"]) == (False, True)
    assert "sync_tasks → true (--sync-tasks)" in flagged.notes


def _parse(*args: str) -> cmdline.Invocation:
    return cmdline.parse(list(args), doit_commands=lambda: {"run": ()})


def test_a_run_takes_clauditors_flags_and_spec_selection() -> None:
    inv = _parse("--harness", "codex", "--transport=cli", "--grading-provider", "openai", "--sync-tasks",
                 "--no-api-key", "--spec", "alpha", "--spec", "beta")
    assert dict(inv.clauditor) == {"harness": "codex", "transport": "cli", "grading_provider": "openai",
                                   "sync_tasks": True}
    assert (inv.no_api_key, inv.specs) == (True, ("alpha", "beta"))
    assert _parse().clauditor == {} and not _parse().no_api_key


@pytest.mark.parametrize(("args", "says"), [
    (("--harness", "gemini"), "--harness must be claude-code, codex or auto, not 'gemini'"),
    (("--transport", "http"), "--transport must be api, cli or auto, not 'http'"),
    (("--grading-provider", "google"), "--grading-provider must be anthropic, openai or auto, not 'google'"),
    (("--harnss", "codex"), "did you mean --harness?"),
])
def test_a_bad_clauditor_flag_is_a_usage_error(args: tuple[str, ...], says: str) -> None:
    with pytest.raises(UsageError) as caught:
        _parse(*args)
    assert says in caught.value.message


@pytest.mark.parametrize(("code", "judge_errors", "expected"), [
    (0, 0, 0), (1, 0, 1), (1, 2, 3), (2, 0, 2), (3, 0, 2), (5, 0, 2), (4, 0, 4), (130, 0, 130),
])
def test_skillmakes_exit_codes_as_clauditors(code: int, judge_errors: int, expected: int) -> None:
    report = {"rows": [{"outcomes": {"judge_error": judge_errors}}]}
    assert clauditor_exit(code, report) == expected
