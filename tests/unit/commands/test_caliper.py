"""caliper's `caliper run` flags on `skillmake`: --k, --workers, --judge, --baseline and --output, with caliper's
meaning, read next to skillmake's own options."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping

import pytest

from skillmake.commands import argv, cli, runner
from skillmake.commands.argv import Invocation, Opt
from skillmake.core.errors import UsageError
from skillmake.engine.main import doit_options
from skillmake.spec import overrides


@functools.cache
def _doit() -> Mapping[str, tuple[Opt, ...]]:
    return {name: argv.doit_table(options) for name, options in doit_options().items()}


def parse(*words: str) -> Invocation:
    return argv.parse(list(words), doit_commands=_doit)


def test_k_is_trials_and_workers_is_jobs() -> None:
    inv = parse("--k", "3", "--workers", "4")
    assert dict(inv.overrides) == {"trials": "3", "jobs": "4"}
    assert inv.jobs == 4 and inv.doit_args == ("-n", "4", "-P", "thread")
    assert dict(parse("--k=5").overrides) == {"trials": "5"}
    assert parse("-k", "alpha", "--k", "2").k == "alpha"  # -k is still pytest's selection; --k caliper's count


def test_k_and_workers_errors_name_the_flag_typed() -> None:
    with pytest.raises(UsageError, match=r"^--k needs a whole number above 0, not '0'"):
        parse("--k", "0")
    with pytest.raises(UsageError, match=r"^--workers needs a whole number above 0, not 'many'"):
        parse("--workers", "many")


def test_judge_autorater_is_the_default_and_another_word_is_a_judge_model() -> None:
    assert dict(parse("--judge", "autorater").overrides) == {}
    assert dict(parse("--judge", "claude-haiku-4-5").overrides) == {"judge_model": "claude-haiku-4-5"}
    # --judge-model says it more precisely: it wins
    assert parse("--judge", "a", "--judge-model", "b").overrides["judge_model"] == "b"
    assert dict(parse("explain", "--judge", "m2").overrides) == {"judge_model": "m2"}


def test_calipers_script_mode_is_skillmakes_way_and_autorater_sdk_is_the_anthropic_sdk() -> None:
    assert dict(parse("--judge", "script").overrides) == {}  # asserts as checks, expect with the judge: as always
    assert dict(parse("--judge", "autorater-sdk").overrides) == {"judge_provider": "anthropic"}
    # --judge-provider says it more precisely: it wins
    assert parse("--judge", "autorater-sdk", "--judge-provider", "openai").overrides["judge_provider"] == "openai"
    with pytest.raises(UsageError) as info:
        parse("--judge", " ")
    assert "autorater, script, autorater-sdk or a judge model" in info.value.message


def test_baseline_and_output_are_read() -> None:
    inv = parse("--baseline", "--output", "out/results.json", "trial:x")
    assert inv.baseline and inv.output == "out/results.json"
    assert inv.doit_args == ("trial:x",)  # neither reaches doit
    assert parse("explain", "--baseline").baseline
    plain = parse()
    assert not plain.baseline and plain.output is None


def test_output_is_calipers_and_doits_output_file_stays_o() -> None:
    inv = parse("-o", "doit.txt", "--output=r.json")
    assert inv.output == "r.json" and inv.doit_args == ("-o", "doit.txt")


def test_a_mistyped_caliper_flag_gets_one_line_with_a_suggestion() -> None:
    for typed, meant in (("--basline", "--baseline"), ("--wrokers=2", "--workers"), ("--ouptut", "--output")):
        with pytest.raises(UsageError) as info:
            parse(typed)
        assert info.value.message == f"unknown option {typed.split('=')[0]}; did you mean {meant}?"


def test_help_lists_calipers_flags_in_their_own_group() -> None:
    text = cli.usage()
    group = text.split("caliper's flags", 1)[1]
    for flag in ("--k N", "--workers N", "--judge MODE|M", "--baseline", "--output FILE"):
        assert flag in group


def test_baseline_reaches_the_run_settings_through_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(overrides, "BASELINE_VAR", "SKILLMAKE_BASELINE", raising=False)
    monkeypatch.delenv("SKILLMAKE_BASELINE", raising=False)
    runner.set_env(overrides.BASELINE_VAR, "1")  # what set_run_options does for --baseline
    assert os.environ["SKILLMAKE_BASELINE"] == "1"
    runner.set_env(overrides.BASELINE_VAR, None)  # a later run in the same process (watch) without the flag
    assert "SKILLMAKE_BASELINE" not in os.environ
    monkeypatch.setenv("SKILLMAKE_BASELINE", "1")  # the user's own export is theirs
    runner.set_env(overrides.BASELINE_VAR, None)
    assert os.environ["SKILLMAKE_BASELINE"] == "1"

