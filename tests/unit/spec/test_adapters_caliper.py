"""caliper's `.eval.yaml`: its own schema, the translation into the native model, and errors located in the seed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from skillmake.core.errors import SpecErrors
from skillmake.run.keys import KeyMaker, grade_part
from skillmake.spec import overrides
from skillmake.spec.adapters import adapter, supported
from skillmake.spec.adapters.caliper import ADAPTER, assert_check, task_id
from skillmake.spec.adapters.detect import foreign_format
from skillmake.spec.config import Config
from skillmake.spec.loader import load_spec
from skillmake.spec.model import Spec
from skillmake.spec.source import read_source

REPO = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((REPO / "schemas" / "caliper.schema.json").read_text())
EXAMPLES = REPO / "tests" / "data" / "schemas" / "caliper"
GOOD = sorted((EXAMPLES / "good").iterdir())
BAD = sorted((EXAMPLES / "bad").iterdir())
SEEDS = REPO / "tests" / "data" / "seeds" / "caliper"
TWINS = [("quick-start", "my-skill"), ("codex-agent", "my-codex-skill"), ("spec-format", "skill")]


def test_the_schema_is_valid_draft_07_and_registered() -> None:
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(SCHEMA)
    assert supported("caliper") and adapter("caliper") is ADAPTER and ADAPTER.schema == "caliper.schema.json"


@pytest.mark.parametrize("path", GOOD, ids=[p.name for p in GOOD])
def test_good_examples_validate(path: Path) -> None:
    assert [e.message for e in Draft7Validator(SCHEMA).iter_errors(read_source(str(path)).data)] == []


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_bad_examples_fail(path: Path) -> None:
    assert list(Draft7Validator(SCHEMA).iter_errors(read_source(str(path)).data))


@pytest.mark.parametrize("path", [*GOOD, *sorted(SEEDS.glob("*/*.eval.yaml"))], ids=lambda p: p.name)
def test_caliper_files_are_told_apart_by_content(path: Path) -> None:
    data = read_source(str(path)).data
    expected = None if path.name.endswith("-native.eval.yaml") else "caliper"
    assert foreign_format(frozenset(data), str(path), data) == expected


def test_task_ids_are_caliper_s_automatic_ones() -> None:
    assert [task_id(i) for i in (0, 1, 9, 99)] == ["task-001", "task-002", "task-010", "task-100"]


@pytest.mark.parametrize(("text", "check"), [
    ("./assertions/check_report.py", {"type": "python", "script": "./assertions/check_report.py"}),
    ("  check.py \n", {"type": "python", "script": "check.py"}),
    ("assert True\n", {"type": "python", "code": "assert True\n"}),
    ("import x.py\nassert True", {"type": "python", "code": "import x.py\nassert True"}),
])
def test_assert_is_a_script_path_only_when_one_line_ending_in_py(text: str, check: dict[str, str]) -> None:
    assert assert_check(text) == check


def _translate(tmp_path: Path, text: str) -> dict[str, object]:
    path = tmp_path / "s.eval.yaml"
    path.write_text(text)
    return ADAPTER.translate(read_source(str(path)), path=str(path), root=str(tmp_path)).data


def test_every_field_is_translated(tmp_path: Path) -> None:
    data = _translate(tmp_path, (EXAMPLES / "good" / "every-field.eval.yaml").read_text())
    assert data == {
        "skill": "./SKILL.md",
        "agent": {"kind": "claude-code", "model": "claude-sonnet-4-6"},
        "judge": {"provider": "openai", "model": "gpt-4o-mini"},
        "sandbox": {"extra_path": ["./bin"], "forbidden_files": [".*\\.eval\\.yaml$", "./.caliper/.*"]},
        "cases": [
            {"id": "task-001", "description": "Writes an output file", "prompt": "Write hello world to /tmp/out.txt",
             "setup": "touch ready", "cleanup": "rm -f /tmp/out.txt",
             "expectations": ["A file is written at /tmp/out.txt."],
             "checks": [{"type": "python", "code": "assert True\n"}]},
            {"id": "task-002", "description": "Task with external assertion script", "prompt": "Generate a report",
             "checks": [{"type": "python", "script": "./assertions/check_report.py"}]},
        ],
    }


@pytest.mark.parametrize(("backend", "kind", "provider"), [
    ("claude-code", "claude-code", "claude-code"), ("claude", "claude-code", "claude-code"),
    ("codex", "codex", "codex"), ("claude-api", "anthropic", "anthropic"), ("anthropic", "anthropic", "anthropic"),
    ("openai-api", "openai", "openai"), ("openai", "openai", "openai"),
])
def test_backend_names_and_aliases(tmp_path: Path, backend: str, kind: str, provider: str) -> None:
    data = _translate(tmp_path, f"skill: {{path: x.md, backend: {backend}}}\njudge: {{backend: {backend}}}\n"
                                "tasks: [{name: a, prompt: p, assert: assert True}]\n")
    assert data["agent"] == {"kind": kind} and data["judge"] == {"provider": provider}


def test_backends_default_to_claude_code_as_in_caliper(tmp_path: Path) -> None:
    data = _translate(tmp_path, "skill: {path: x.md}\ntasks: [{name: a, prompt: p, expect: e}]\n")
    assert data["agent"] == {"kind": "claude-code"} and data["judge"] == {"provider": "claude-code"}
    # caliper's --k 3/--timeout 120 are run defaults (overrides.py), below the project config: a spec's own
    # `trials:` would beat it.
    assert "trials" not in data and "timeout" not in data


def test_calipers_run_defaults_are_its_adapters_alone() -> None:
    assert dict(ADAPTER.run_defaults) == {"trials": 3, "timeout": 120.0}
    assert overrides.format_defaults("caliper") == ADAPTER.run_defaults
    assert overrides.format_defaults(None) == {}
    for fmt in ("clauditor", "skill-creator", "eva"):
        assert overrides.format_defaults(fmt) == {}, fmt  # their files write their own (variance.n_runs, …)
    assert overrides.format_default("caliper") == "caliper's default"


@pytest.mark.parametrize(("seed", "twin"), TWINS)
def test_a_seed_and_its_native_twin_share_every_key(seed: str, twin: str) -> None:
    folder = SEEDS / seed
    a = load_spec(str(folder / f"{twin}.eval.yaml"), root=str(folder))
    b = load_spec(str(folder / f"{twin}-native.eval.yaml"), root=str(folder))
    keys = KeyMaker(str(folder))
    # The seed's trials and timeout are caliper's defaults; the twin writes them (a spec's own value).
    config = Config(root=str(folder))
    ran = [{n: (s.value, s.source) for n, s in overrides.spec_settings(x, config, declared=x.declared,
                                                                         environ={}).items()
            if n in ("trials", "timeout")} for x in (a, b)]
    assert ran == [{"trials": (3, "caliper's default"), "timeout": (120.0, "caliper's default")},
                   {"trials": (3, "spec"), "timeout": (120.0, "spec")}]
    assert [c.id for c in a.cases] == [c.id for c in b.cases]
    assert (a.skill, a.agent, a.arms, a.judge, a.forbidden_files, a.extra_path) == (
        b.skill, b.agent, b.arms, b.judge, b.forbidden_files, b.extra_path)
    for ca, cb in zip(a.cases, b.cases, strict=True):
        assert grade_part(a, ca).digest == grade_part(b, cb).digest
        for arm_a, arm_b in zip(a.arms, b.arms, strict=True):
            for k in range(3):
                assert keys.trial_key(a, ca, arm_a, k).key == keys.trial_key(b, cb, arm_b, k).key


def _errors(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    path = tmp_path / "s.eval.yaml"
    path.write_text(text)
    with pytest.raises(SpecErrors) as raised:
        load_spec(str(path), root=str(tmp_path))
    return [str(e) for e in raised.value.errors]


def test_a_task_needs_expect_or_assert_located_at_the_task(tmp_path: Path) -> None:
    errors = _errors(tmp_path, "skill: {path: ./SKILL.md}\ntasks:\n  - name: a\n    prompt: p\n")
    assert len(errors) == 1 and errors[0].startswith("s.eval.yaml:3:5 /tasks/0: needs one of 'expect', 'assert'")


def test_native_rule_errors_land_on_the_seed_field(tmp_path: Path) -> None:
    text = ("skill: {path: ./SKILL.md}\nsandbox:\n  forbidden_files: ['(unclosed']\ntasks:\n"
            "  - name: a\n    prompt: p\n    assert: ./checks/missing.py\n")
    errors = _errors(tmp_path, text)
    assert [e.split(": ", 1)[0] for e in errors] == ["s.eval.yaml:3:21 /sandbox/forbidden_files/0",
                                                     "s.eval.yaml:7:13 /tasks/0/assert"]


def test_a_python_syntax_error_in_assert_is_at_its_line_in_the_seed(tmp_path: Path) -> None:
    text = "skill: {path: ./SKILL.md}\ntasks:\n  - name: a\n    prompt: p\n    assert: |\n      assert (\n"
    errors = _errors(tmp_path, text)
    assert errors[0].startswith("s.eval.yaml:6:14 /tasks/0/assert: Python syntax error in code")


def test_a_missing_skill_file_is_at_skill_path(tmp_path: Path) -> None:
    errors = _errors(tmp_path, "skill:\n  path: ./nope/SKILL.md\ntasks: [{name: a, prompt: p, expect: e}]\n")
    assert errors[0].startswith("s.eval.yaml:2:9 /skill/path: skill './nope/SKILL.md' does not exist")


def test_no_skill_path_is_the_bare_agent_keyed_as_its_baseline(tmp_path: Path) -> None:
    path = tmp_path / "s.eval.yaml"
    path.write_text("skill:\n  backend: codex\ntasks: [{name: a, prompt: p, expect: e}]\n")
    spec = load_spec(str(path), root=str(tmp_path))
    assert (spec.skill.kind, spec.skill.present, spec.skill.name) == ("none", False, "none")
    keys = KeyMaker(str(tmp_path))
    with_arm = spec.arms[0]
    without = dataclasses.replace(with_arm, name="without_skill", skill=False)
    # "with" no skill runs exactly as without it: one key, so caliper's --baseline costs no extra trial.
    assert keys.trial_key(spec, spec.cases[0], with_arm, 0).key == keys.trial_key(spec, spec.cases[0], without, 0).key
    assert keys.trial_key(spec, spec.cases[0], with_arm, 0).skill is None


def test_notes_name_what_has_no_native_twin(tmp_path: Path) -> None:
    path = SEEDS / "quick-start" / "my-skill.eval.yaml"
    notes = ADAPTER.translate(read_source(str(path)), path=str(path), root=str(path.parent)).notes
    assert any("pass@k" in n and "pass_at_k_caliper" in n for n in notes)
    assert any("--k 3" in n and "--timeout 120" in n and "--workers 4" in n for n in notes)


def _load(tmp_path: Path, text: str) -> Spec:
    (tmp_path / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    path = tmp_path / "s.eval.yaml"
    path.write_text(text)
    return load_spec(str(path), root=str(tmp_path))


def _warnings(spec: Spec) -> list[str]:
    return [n for n in spec.notes if n.startswith("warning: ")]


def test_keys_caliper_ignores_are_accepted_with_a_warning_and_a_did_you_mean(tmp_path: Path) -> None:
    spec = _load(tmp_path, "skill: {path: ./SKILL.md, timeout: 3}\nsandbox: {forbiden_files: [x]}\n"
                           "tasks:\n  - {id: t1, name: a, prompt: p, expect: e, retries: 2}\n")
    assert [c.id for c in spec.cases] == ["task-001"] and spec.forbidden_files == ()
    assert _warnings(spec) == [
        "warning: skill.timeout is not a caliper key; caliper ignores it and so does skillmake",
        "warning: sandbox.forbiden_files is not a caliper key; caliper ignores it and so does skillmake; did you "
        "mean 'forbidden_files'?",
        "warning: tasks[0].retries is not a caliper key; caliper ignores it and so does skillmake",
        "warning: tasks[0].id is replaced by caliper's automatic id task-001, here too"]


def test_a_duplicate_yaml_key_keeps_the_last_value_as_pyyaml_does(tmp_path: Path) -> None:
    spec = _load(tmp_path, "skill: {path: ./SKILL.md}\ntasks:\n  - name: a\n    prompt: first\n    prompt: second\n"
                           "    expect: e\n")
    assert spec.cases[0].prompt == "second"
    assert _warnings(spec) == ["warning: duplicate key 'prompt' at line 5 (first at line 4); caliper keeps the last "
                               "value, and so does skillmake"]


def test_a_native_spec_still_refuses_a_duplicate_key(tmp_path: Path) -> None:
    with pytest.raises(SpecErrors, match="duplicate key 'prompt'"):
        _load(tmp_path, "skill: SKILL.md\nagent: {kind: command, command: [cat]}\ncases:\n  - id: a\n"
                        "    prompt: p\n    prompt: q\n    checks: [{type: contains, needle: x}]\n")


def test_empty_tasks_is_a_valid_spec_with_nothing_to_run(tmp_path: Path) -> None:
    spec = _load(tmp_path, "skill: {path: ./SKILL.md}\ntasks: []\n")
    assert spec.cases == () and any("tasks: []" in w for w in _warnings(spec))


def test_null_and_empty_strings_mean_none_as_caliper_tests_them(tmp_path: Path) -> None:
    spec = _load(tmp_path, "skill: {path: '', model: ''}\njudge: {model: null}\ntasks:\n"
                           "  - {name: a, prompt: p, expect: '', assert: assert True, setup: null, cleanup: ''}\n")
    case = spec.cases[0]
    assert spec.skill.kind == "none" and spec.arms[0].agent.model is None and spec.judge.model is None
    assert (case.expectations, case.setup, case.cleanup, len(case.checks)) == ((), None, None, 1)


def test_a_missing_tasks_key_is_reported_under_calipers_name(tmp_path: Path) -> None:
    with pytest.raises(SpecErrors, match="missing required key 'tasks'"):
        _load(tmp_path, "skill: {path: ./SKILL.md, backend: codex}\n")
