"""skillmake's command line: its own options out, doit's checked and passed on, typos caught with a suggestion."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

import pytest

from skillmake.commands import argv
from skillmake.commands.argv import Invocation, Opt
from skillmake.core.errors import EXIT_FAILED, EXIT_INTERNAL, EXIT_INVALID, EXIT_NO_SPECS, EXIT_USAGE, UsageError
from skillmake.engine.config import doit_config
from skillmake.engine.main import doit_options, exit_code


@functools.cache
def _doit() -> Mapping[str, tuple[Opt, ...]]:
    return {name: argv.doit_table(options) for name, options in doit_options().items()}


def parse(*words: str) -> Invocation:
    return argv.parse(list(words), doit_commands=_doit)


def test_own_run_options_are_read_and_not_passed_to_doit() -> None:
    inv = parse("-k", "alpha and not two", "--tag", "slow", "--tag=smoke", "--failed", "--resample",
                "--trials", "5", "--timeout=2.5", "--model", "m1", "--judge-model", "j1", "--judge-provider", "openai")
    assert inv.command == "run"
    assert (inv.k, inv.tags, inv.failed, inv.resample) == ("alpha and not two", ("slow", "smoke"), True, True)
    assert dict(inv.overrides) == {"trials": "5", "timeout": "2.5", "model": "m1", "judge_model": "j1",
                                   "judge_provider": "openai"}
    assert inv.doit_args == ()


def test_jobs_become_doit_threads() -> None:
    inv = parse("-j", "4")
    assert inv.jobs == 4 and inv.overrides["jobs"] == "4"
    assert inv.doit_args == ("-n", "4", "-P", "thread")
    assert parse("--jobs=3", "-P", "process").doit_args == ("-P", "process", "-n", "3")
    assert parse("-j2", "-n", "6").doit_args == ("-n", "6")  # doit's own -n wins


def test_bare_v_is_ours_and_v_with_a_level_is_doits() -> None:
    ours = parse("-v")
    assert ours.verbose == 1 and ours.doit_args == ()
    theirs = parse("-v", "2", "trial")
    assert theirs.doit_args == ("-v", "2", "trial") and theirs.verbose == 1  # doit's level 2 is verbose too
    assert parse("-v0").doit_args == ("-v", "0") and parse("-v0").quiet
    assert parse("-qv").quiet and parse("-qv").verbose == 1


def test_doit_run_options_pass_through_and_move_before_task_names() -> None:
    inv = parse("trial:alpha/one/with_skill/0", "-a", "-s", "-c", "-n", "2", "--db-file", "x.db", "-o", "out.txt")
    assert inv.doit_args == ("-a", "-s", "-c", "-n", "2", "--db-file=x.db", "-o", "out.txt",
                             "trial:alpha/one/with_skill/0")
    assert inv.targets == ("trial:alpha/one/with_skill/0",)
    assert parse("run", "-as", "report").doit_args == ("run", "-a", "-s", "report")
    assert parse("--", "-weird-task").doit_args == ("-weird-task",)
    assert parse("--always", "--resam").doit_args == ("-a",) and parse("--resam").resample  # unique prefixes


@pytest.mark.parametrize(("words", "message"), [
    (["--json"], "unknown option --json; for JSON: `skillmake explain --format json`"),
    (["--quite"], "unknown option --quite; did you mean --quiet?"),
    (["--watch"], "did you mean `skillmake watch` (a command, not an option)?"),
    (["trial", "-x"], "unknown option -x"),
    (["-k"], "option -k needs a value (EXPR)"),
    (["--trials", "0"], "--trials needs a whole number above 0, not '0'"),
    (["--timeout", "soon"], "--timeout needs a number of seconds above 0, not 'soon'"),
    (["--failed=yes"], "option --failed takes no value"),
    (["list", "--jsn"], "unknown option --jsn for `skillmake list`"),
    (["list", "--alll"], "did you mean --all?"),
    (["explain", "--json"], "unknown option --json for `skillmake explain`; did you mean --format json?"),
    (["explain", "--format", "xml"], "--format must be text or json, not 'xml'"),
])
def test_usage_errors_name_the_option(words: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=None) as caught:
        parse(*words)
    assert message in caught.value.message
    assert caught.value.hint is not None and caught.value.hint.startswith("usage: skillmake")


def test_root_color_and_help_are_read_for_every_command() -> None:
    for words in (["--root", "/p", "list", "--all"], ["list", "--all", "--root=/p"], ["--root", "/p", "validate"],
                  ["explain", "--root", "/p"], ["--root", "/p"]):
        assert parse(*words).root == "/p", words
    listed = parse("--no-color", "list", "--all", "--root", "/p")
    assert listed.doit_args == ("list", "--all") and listed.color is False
    assert parse("--color").color is True and parse().color is None
    assert parse("validate", "-h", "a.eval.yaml").args == ("a.eval.yaml",)
    assert parse("validate", "-h").help
    assert parse("run", "--help").help and parse("--version").version


def test_own_commands_keep_their_arguments_and_doit_commands_their_options() -> None:
    assert parse("validate", "--format", "json", "a.eval.yaml").args == ("--format", "json", "a.eval.yaml")
    assert parse("list", "-q", "--all").doit_args == ("list", "-q", "--all")  # doit list's own -q
    inv = parse("explain", "trial:a/*", "--trials", "3", "--format", "json", "-k", "one")
    assert (inv.command, inv.targets, inv.format, inv.k) == ("explain", ("trial:a/*",), "json", "one")
    assert inv.overrides == {"trials": "3"}


def test_doit_exit_codes_map_onto_the_one_table() -> None:
    assert exit_code(2, {}, runs=True) == EXIT_INTERNAL
    assert exit_code(1, {"invalid": True}, runs=True) == EXIT_INVALID
    assert exit_code(1, {}, runs=True) == EXIT_FAILED
    assert exit_code(0, {"no_specs": True}, runs=True) == EXIT_NO_SPECS
    assert exit_code(0, {"no_specs": True}, runs=False) == 0
    assert exit_code(3, {}, runs=True) == EXIT_USAGE


def test_project_jobs_are_doits_default_in_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKILLMAKE_JOBS", raising=False)
    monkeypatch.delenv("SKILLMAKE_ROOT", raising=False)
    (tmp_path / "a.eval.yaml").write_text("{}\n")  # a project with a spec: doit_config refuses one without
    assert "num_process" not in doit_config(str(tmp_path))
    (tmp_path / "skillmake.toml").write_text("jobs = 3\n")
    config = doit_config(str(tmp_path))
    assert (config["num_process"], config["par_type"]) == (3, "thread")
    assert config["dep_file"] == str(tmp_path / ".skillmake" / "doit.db")
