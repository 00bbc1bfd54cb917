"""clauditor's edges: a bare `eval.json` beside SKILL.md, its pre-#67 `value` key, its enum words, clauditor keys
written in a skillmake spec, and CLAUDITOR_* variables with values clauditor refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillmake.core.errors import SpecErrors
from skillmake.core.paths import not_skill
from skillmake.spec.adapters.clauditor import ADAPTER, EnvValueError, harness, judge_provider
from skillmake.spec.adapters.detect import seed_file, seed_spec_name
from skillmake.spec.loader import load_spec
from skillmake.spec.schema import spec_errors
from skillmake.spec.source import read_source

NO_CLAUDE = {"PATH": "/nonexistent"}


def _errors(tmp_path: Path, data: dict[str, Any], name: str = "greet.eval.json") -> list[tuple[str, str, str]]:
    spec = tmp_path / name
    # clauditor requires an id on every assertion: given here, so each test sees only the error it is about
    data = {**data, "assertions": [{"id": f"a{i}", **a} for i, a in enumerate(data.get("assertions", []))]}
    spec.write_text(json.dumps(data, indent=2))
    return [(e.loc.pointer if e.loc else "", e.message, e.hint or "")
            for e in spec_errors(read_source(str(spec)), "clauditor.schema.json")]


def _skill(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text("---\nname: x\ndescription: d\n---\nbody\n")
    return folder


# --- eval.json beside SKILL.md --------------------------------------------------------------------------------


def test_eval_json_is_a_seed_file_only_beside_a_skill_md(tmp_path: Path) -> None:
    lone = tmp_path / "data" / "eval.json"
    lone.parent.mkdir()
    assert not seed_file(str(lone))
    assert seed_file(str(_skill(tmp_path / "greet") / "eval.json"))


def test_eval_json_is_named_after_its_skill_folder(tmp_path: Path) -> None:
    path = str(_skill(tmp_path / "find-kid-activities") / "eval.json")
    assert seed_spec_name("clauditor", path) == "find-kid-activities"
    assert seed_spec_name("skill-creator", path) is None


def test_eval_json_loads_with_the_skill_folder_as_its_skill_spec_and_case_name(tmp_path: Path) -> None:
    folder = _skill(tmp_path / "skills" / "greet")
    (folder / "eval.json").write_text(json.dumps({"test_args": "--x", "assertions": [{"id": "u", "type": "has_urls"}]}))
    spec = load_spec(str(folder / "eval.json"), root=str(tmp_path),
                     default_agent={"kind": "command", "command": ["true"]})
    assert (spec.name, spec.skill.name, spec.format) == ("greet", "greet", "clauditor")
    assert [c.id for c in spec.cases] == ["greet"]  # not "eval.json": clauditor names it after the skill


def test_a_dirname_eval_json_in_the_skill_folder_is_named_after_it(tmp_path: Path) -> None:
    folder = _skill(tmp_path / "skills" / "greet")
    (folder / "greet.eval.json").write_text(json.dumps({"assertions": [{"id": "u", "type": "has_urls"}]}))
    spec = load_spec(str(folder / "greet.eval.json"), root=str(tmp_path),
                     default_agent={"kind": "command", "command": ["true"]})
    assert (spec.name, spec.skill.name, [c.id for c in spec.cases]) == ("greet", "greet", ["greet"])


def test_eval_json_at_the_top_of_a_skill_is_not_part_of_the_skill(tmp_path: Path) -> None:
    folder = _skill(tmp_path / "greet")
    (folder / "eval.json").write_text("{}")
    assert not_skill(str(folder), "eval.json", top=str(folder))


# --- clauditor's pre-#67 `value` --------------------------------------------------------------------------------


@pytest.mark.parametrize(("assertion", "write"), [
    ({"type": "contains", "value": "Venues"}, "`needle`"),
    ({"type": "not_contains", "value": "Error"}, "`needle`"),
    ({"type": "regex", "value": "^#"}, "`pattern`"),
    ({"type": "min_count", "value": "^- "}, "`pattern` and `count`"),
    ({"type": "min_length", "value": "500"}, "`length`"),
    ({"type": "max_length", "value": "5000"}, "`length`"),
    ({"type": "has_urls", "value": "3"}, "`count`"),
    ({"type": "has_format", "value": "phone_us"}, "`format`"),
])
def test_legacy_value_is_one_error_with_clauditors_migration_hint(tmp_path: Path, assertion: dict[str, Any],
                                                                 write: str) -> None:
    [(pointer, message, hint)] = _errors(tmp_path, {"assertions": [assertion]})
    assert (pointer, message) == ("/assertions/0/value", "'value' is a retired key")
    assert hint.startswith(f"clauditor's pre-#67 `value`: write {write}")


def test_a_missing_key_is_still_reported_without_value(tmp_path: Path) -> None:
    [(pointer, message, _)] = _errors(tmp_path, {"assertions": [{"type": "contains"}]})
    assert (pointer, message) == ("/assertions/0", "missing required key 'needle'")


def test_value_beside_its_replacement_is_still_refused(tmp_path: Path) -> None:
    [(pointer, _, hint)] = _errors(tmp_path, {"assertions": [{"type": "contains", "needle": "a", "value": "a"}]})
    assert pointer == "/assertions/0/value" and "write `needle`" in hint


# --- enum wording -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "message"), [
    ({"assertions": [{"id": "u", "type": "has_urls"}], "harness": "claude"}, "'claude' is not a harness"),
    ({"assertions": [{"id": "u", "type": "has_urls"}], "transport": "http"}, "'http' is not a transport"),
    ({"assertions": [{"id": "u", "type": "has_urls"}], "grading_provider": "claude"},
     "'claude' is not a grading provider"),
    ({"assertions": [{"type": "regexp", "pattern": "x"}]}, "'regexp' is not an assertion type"),
])
def test_enum_errors_name_what_the_value_should_be(tmp_path: Path, data: dict[str, Any], message: str) -> None:
    [(_, said, hint)] = _errors(tmp_path, data)
    assert said == message
    assert "None" not in hint  # a JSON user writes null


# --- a clauditor key in a skillmake spec -----------------------------------------------------------------------


NATIVE = """\
skill: s
agent: {kind: command, command: [echo]}
%s
cases:
  - id: a
    prompt: hi
    checks: [{type: contains, needle: x}]
"""


@pytest.mark.parametrize(("line", "native"), [
    ("variance: {n_runs: 3}", "`trials: N`"),
    ("test_args: --quick", "`args:` in the case"),
    ("grading_model: m", "`judge: {model: …}`"),
    ("harness: codex", "`agent: {kind: …}`"),
    ("skill_name: s", "`name:`"),
])
def test_a_clauditor_key_in_a_native_spec_says_what_skillmake_writes(tmp_path: Path, line: str,
                                                                      native: str) -> None:
    _skill(tmp_path / "s")
    path = tmp_path / "n.eval.yaml"
    path.write_text(NATIVE % line)
    [error] = spec_errors(read_source(str(path)))
    key = line.split(":")[0]
    assert error.message == f"unknown key {key!r}"
    assert error.hint is not None and "did you mean" not in error.hint
    assert error.hint.startswith(f"{key!r} is a clauditor key") and native in error.hint


def test_a_misspelt_native_key_still_gets_did_you_mean(tmp_path: Path) -> None:
    path = tmp_path / "n.eval.yaml"
    path.write_text(NATIVE % "variant: []")
    [error] = spec_errors(read_source(str(path)))
    assert error.hint == "did you mean 'variants'?"


# --- CLAUDITOR_* variables --------------------------------------------------------------------------------------


def _translate(tmp_path: Path, data: dict[str, Any], environ: dict[str, str]) -> Any:
    (tmp_path / "greet.md").write_text("Greet $ARGUMENTS.\n")
    spec = tmp_path / "greet.eval.json"
    spec.write_text(json.dumps(data, indent=2))
    return ADAPTER.translate(read_source(str(spec)), path=str(spec), root=str(tmp_path), environ=environ)


@pytest.mark.parametrize(("var", "allowed"), [
    ("CLAUDITOR_HARNESS", "claude-code, codex or auto"),
    ("CLAUDITOR_TRANSPORT", "api, cli or auto"),
    ("CLAUDITOR_GRADING_PROVIDER", "anthropic, openai or auto"),
])
def test_an_invalid_variable_is_one_error_at_the_top_naming_it_and_its_values(tmp_path: Path, var: str,
                                                                             allowed: str) -> None:
    with pytest.raises(SpecErrors) as caught:
        _translate(tmp_path, {"assertions": [{"id": "u", "type": "has_urls"}]}, {var: "bogus", **NO_CLAUDE})
    [error] = caught.value.errors
    assert error.loc is not None and (error.loc.line, error.loc.col, error.loc.pointer) == (1, 1, "")
    assert error.message.startswith(f"${var} is 'bogus', not a ") and error.message.endswith(f"accepts {allowed})")
    assert error.hint is not None and var in error.hint and "\n" not in error.message


def test_an_invalid_variable_is_located_at_the_key_it_overrides(tmp_path: Path) -> None:
    with pytest.raises(SpecErrors) as caught:
        _translate(tmp_path, {"assertions": [{"id": "u", "type": "has_urls"}], "harness": "codex"},
                   {"CLAUDITOR_HARNESS": "claude", **NO_CLAUDE})
    [error] = caught.value.errors
    assert error.loc is not None and (error.loc.line, error.loc.pointer) == (8, "/harness")


def test_every_invalid_variable_is_reported_at_once(tmp_path: Path) -> None:
    env = {"CLAUDITOR_HARNESS": "x", "CLAUDITOR_TRANSPORT": "y", "CLAUDITOR_GRADING_PROVIDER": "z", **NO_CLAUDE}
    with pytest.raises(SpecErrors) as caught:
        _translate(tmp_path, {"assertions": [{"id": "u", "type": "has_urls"}]}, env)
    assert len(caught.value.errors) == 3


def test_an_empty_variable_is_unset(tmp_path: Path) -> None:
    data = _translate(tmp_path, {"assertions": [{"id": "u", "type": "has_urls"}], "harness": "claude-code"},
                      {"CLAUDITOR_HARNESS": " ", "CLAUDITOR_TRANSPORT": "", **NO_CLAUDE}).data
    assert data["agent"]["kind"] == "claude-code"


def test_the_resolvers_refuse_what_clauditor_refuses() -> None:
    with pytest.raises(EnvValueError, match=r"\$CLAUDITOR_HARNESS is 'bogus'"):
        harness({"harness": "codex"}, {"CLAUDITOR_HARNESS": "bogus", **NO_CLAUDE})
    with pytest.raises(EnvValueError, match=r"\$CLAUDITOR_TRANSPORT"):
        judge_provider({}, {"CLAUDITOR_TRANSPORT": "http", **NO_CLAUDE})
    with pytest.raises(EnvValueError, match=r"\$CLAUDITOR_GRADING_PROVIDER"):
        judge_provider({}, {"CLAUDITOR_GRADING_PROVIDER": "claude", **NO_CLAUDE})
