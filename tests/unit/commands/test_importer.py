"""`skillmake import`: every verbatim seed example becomes a native spec that validates and has exactly the seed's
trial and grade keys (importing never costs a re-run), with nothing of the seed dropped silently."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillmake.commands import importer
from skillmake.core.canonical import canonical_json
from skillmake.run import grade as grading
from skillmake.run.keys import KeyMaker, grade_part
from skillmake.spec import overrides, yamltext
from skillmake.spec.config import load_config
from skillmake.spec.loader import load_spec
from skillmake.spec.model import Spec
from skillmake.spec.source import read_source, read_yaml

SEEDS = Path(__file__).resolve().parents[2] / "data" / "seeds"
# Every verbatim example of the four seed documents: (format, its folder under tests/data/seeds/<format>/, the file)
EXAMPLES = [
    ("clauditor", "commands", ".claude/commands/find-kid-activities.eval.json"),
    ("clauditor", "skill-folder", ".claude/skills/find-kid-activities/SKILL.eval.json"),
    ("skill-creator", "example-skill", "evals/evals.json"),
    ("skill-creator", "reference-skill", "evals/evals.json"),
    ("caliper", "codex-agent", "my-codex-skill.eval.yaml"),
    ("caliper", "quick-start", "my-skill.eval.yaml"),
    ("caliper", "spec-format", "skill.eval.yaml"),
    ("eva", "diff-surgeon", "eval.yml"),
    ("eva", "rejects-empty", "eval.yml"),
]
IDS = [f"{fmt}/{folder}" for fmt, folder, _ in EXAMPLES]
# The project's agent: skill-creator and eva files never name one.
CONFIG = 'agent = {kind = "command", command = ["python3", "agent.py"]}\n'


def seed_project(tmp_path: Path, fmt: str, folder: str, file: str) -> tuple[Path, Path]:
    """A project holding one seed example at <root>/<folder>/ (skill-creator: the skill folder itself)."""
    root = tmp_path / "proj"
    shutil.copytree(SEEDS / fmt / folder, root / folder)
    (root / "skillmake.toml").write_text(CONFIG)
    (root / "agent.py").write_text("print('hi')\n")
    return root, root / folder / file


def do_import(root: Path, seed: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.chdir(root)
    monkeypatch.delenv("SKILLMAKE_ROOT", raising=False)
    return importer.main([str(seed.relative_to(root)), *args])


def out_of(seed: Path, fmt: str) -> list[str]:
    """caliper's files already end in .eval.yaml: the default would replace the seed, so write beside it."""
    return ["-o", str(seed.with_name("imported.eval.yaml"))] if fmt == "caliper" else []


def written(seed: Path, fmt: str) -> Path:
    if fmt == "caliper":
        return seed.with_name("imported.eval.yaml")
    return Path(importer.default_out(str(seed), fmt, ""))


def key_table(spec: Spec, root: Path) -> dict[str, Any]:
    """Every trial key (by case position, arm, k) and every grade key's inputs other than the trial's outputs, for
    as many trials as a run of `spec` resolves (its format's defaults included)."""
    maker = KeyMaker(str(root))
    trials = overrides.spec_settings(spec, load_config(str(root)), declared=spec.declared)["trials"].value
    out: dict[str, Any] = {}
    for i, case in enumerate(spec.cases):
        out[f"{i}/grade"] = (grade_part(spec, case).digest, grading.judge_part(spec, case).digest)
        for arm in spec.arms:
            for k in range(max(trials, 2)):
                out[f"{i}/{arm.name}/{k}"] = maker.trial_key(spec, case, arm, k).key
    return out


def loaded(path: Path, root: Path) -> Spec:
    return load_spec(str(path), root=str(root), default_agent=load_config(str(root)).agent)


@pytest.mark.parametrize(("fmt", "folder", "file"), EXAMPLES, ids=IDS)
def test_an_imported_seed_validates_with_the_very_keys_of_the_seed(
        fmt: str, folder: str, file: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, seed = seed_project(tmp_path, fmt, folder, file)
    assert do_import(root, seed, monkeypatch, *out_of(seed, fmt)) == 0
    native = written(seed, fmt)
    assert native.read_text().startswith("# yaml-language-server: $schema=")
    theirs, ours = loaded(seed, root), loaded(native, root)
    assert [c.id for c in ours.cases] == [c.id for c in theirs.cases]
    assert [a.name for a in ours.arms] == [a.name for a in theirs.arms]
    assert ours.thresholds == theirs.thresholds
    config = load_config(str(root))
    # As a run resolves them: a seed's own runner defaults (caliper: 3 trials, 120 s) are written into the import.
    resolved = [{name: s.value for name, s in overrides.spec_settings(spec, config, declared=spec.declared).items()}
                for spec in (ours, theirs)]
    assert resolved[0] == resolved[1]
    assert key_table(ours, root) == key_table(theirs, root)


def _comments(text: str) -> str:
    return "\n".join(line.split("#", 1)[1] for line in text.splitlines() if line.lstrip().startswith("#"))


def _native_values(data: Any) -> list[Any]:
    if isinstance(data, dict):
        return [v for x in data.values() for v in _native_values(x)]
    if isinstance(data, list):
        return [v for x in data for v in _native_values(x)]
    return [data]


def _seed_leaves(data: Any, pointer: str = "") -> list[tuple[str, Any]]:
    if isinstance(data, dict):
        return [leaf for k, v in data.items() for leaf in _seed_leaves(v, f"{pointer}/{k}")]
    if isinstance(data, list):
        return [leaf for i, v in enumerate(data) for leaf in _seed_leaves(v, f"{pointer}/{i}")]
    return [(pointer, data)]


@pytest.mark.parametrize(("fmt", "folder", "file"), EXAMPLES, ids=IDS)
def test_every_seed_field_is_written_or_commented(fmt: str, folder: str, file: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A seed value is in the native spec (as a value, or inside a text made from it), else its field's name is
    in a comment line: nothing is dropped without a word."""
    root, seed = seed_project(tmp_path, fmt, folder, file)
    assert do_import(root, seed, monkeypatch, *out_of(seed, fmt)) == 0
    text = written(seed, fmt).read_text()
    values = _native_values(read_yaml("x.eval.yaml", text).data)
    comments = _comments(text)
    for pointer, value in _seed_leaves(read_source(str(seed)).data):
        as_text = json.dumps(value) if not isinstance(value, str) else value
        kept = any(value == v and type(value) is type(v) for v in values) or any(
            isinstance(v, str) and str(value) in v for v in values)
        field = pointer.rsplit("/", 1)[-1] if not pointer.rsplit("/", 1)[-1].isdigit() else pointer.split("/")[-2]
        assert kept or field in comments, f"{pointer} = {as_text} is neither written nor commented"


def _import_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, folder: str, file: str) -> str:
    root, seed = seed_project(tmp_path, fmt, folder, file)
    assert do_import(root, seed, monkeypatch, *out_of(seed, fmt)) == 0
    return written(seed, fmt).read_text()


def test_clauditor_says_how_its_harness_became_the_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _import_text(tmp_path, monkeypatch, *EXAMPLES[0])
    assert "agent:" not in text.split("cases:")[0].replace("# agent:", "")  # auto: the project's agent, lent
    # the adapter's note, above the key its field became
    assert re.search(r"# harness → agent kind (codex|claude-code) \(harness auto: claude (not )?found\)\n", text)
    assert "# trigger_tests run as trigger trials" in text
    assert re.search(r"# output_file and output_files: .*\n    output_file: research/results.md", text)


def test_skill_creator_keeps_its_agent_unnamed_and_says_whose_runs_it(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    text = _import_text(tmp_path, monkeypatch, *EXAMPLES[2])
    data = read_yaml("x.eval.yaml", text).data
    assert "agent" not in data  # the project's agent is lent to it as to the seed: equal keys, now and later
    assert "the project's agent runs it" in text
    assert 'type: "file_exists|row_count|contains_text|custom"' in text  # a label of the named expectation


def test_eva_says_where_the_prompt_came_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _import_text(tmp_path, monkeypatch, *EXAMPLES[7])
    # The variables, not the text rendered today: prompt.xml is rendered again whenever the spec is loaded.
    assert ('  # eva cases[0].inputs_from: "examples/happy-path"\n  - id: small-file-happy-path\n'
            '    inputs: {file: small.py, constraints: rename total to sum}\n') in text


def test_moved_elsewhere_paths_are_rewritten_and_keys_that_hold_no_path_stay(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, seed = seed_project(tmp_path, *EXAMPLES[0])
    # An absolute program: a command's relative argv is written per spec folder, and the agent key holds it.
    (root / "skillmake.toml").write_text(CONFIG.replace("agent.py", str(root / "agent.py")))
    out = root / "evals" / "kids.eval.yaml"
    assert do_import(root, seed, monkeypatch, "-o", "evals/kids.eval.yaml") == 0
    data = read_yaml(str(out), out.read_text()).data
    assert data["skill"] == "../commands/.claude/commands/find-kid-activities.md"
    assert data["cases"][0]["input_files"] == ["../commands/.claude/commands/fixtures/sample-venues.csv"]
    assert key_table(loaded(out, root), root) == key_table(loaded(seed, root), root)


def test_an_existing_file_is_not_overwritten_without_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    root, seed = seed_project(tmp_path, *EXAMPLES[7])
    native = written(seed, "eva")
    native.write_text("mine\n")
    assert do_import(root, seed, monkeypatch) == 1
    assert native.read_text() == "mine\n"
    assert "already exists; not overwriting it" in capsys.readouterr().err
    assert do_import(root, seed, monkeypatch, "--force") == 0
    assert native.read_text().startswith("# yaml-language-server:")


def test_a_caliper_file_is_converted_in_place_only_with_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    root, seed = seed_project(tmp_path, *EXAMPLES[5])
    before = key_table(loaded(seed, root), root)
    assert do_import(root, seed, monkeypatch) == 1
    assert "would replace" in capsys.readouterr().err and "tasks:" in seed.read_text()
    assert do_import(root, seed, monkeypatch, "--force") == 0
    assert "tasks:" not in seed.read_text() and "cases:" in seed.read_text()
    assert key_table(loaded(seed, root), root) == before


def test_an_invalid_seed_gives_validates_errors_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "proj"
    shutil.copytree(SEEDS / "clauditor" / "invalid", root)
    (root / "skillmake.toml").write_text(CONFIG)
    seed = root / "type_regexp.eval.json"
    assert do_import(root, seed, monkeypatch) == 2
    err = capsys.readouterr().err
    expected = (root / "type_regexp.expected").read_text()
    assert err.startswith(expected.rsplit("\n", 2)[0])  # the very lines `skillmake validate` prints
    assert not (root / "type_regexp.eval.yaml").exists()


def test_a_native_spec_is_not_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    root, seed = seed_project(tmp_path, *EXAMPLES[5])
    native = seed.with_name("my-skill-native.eval.yaml")
    assert do_import(root, native, monkeypatch) == 3
    assert "is a skillmake spec already" in capsys.readouterr().err


# ---- the YAML writer ----------------------------------------------------------------------------------------

TRICKY = ["yes", "no", "on", "null", "~", "1", "1.5", "1e3", "0x1F", "2024-01-01", "a: b", "a #b", "#c", "- x",
          "[x]", "{x}", "x,y", "'q'", '"q"', "", " lead", "trail ", "*ref", "&a", "!tag", "%x", "@x", "`x`", "<<",
          "multi\nline\n", "multi\nline", "two\n\n", " indented\nfirst\n", "tab\there", "ünï", "back\\slash",
          "ctrl\x01char", "crlf\r\nline", "https://x.org/a#b", "a:b", "?x", "|x", ">x", "=", "..."]


def test_tricky_strings_read_back_as_themselves() -> None:
    data = {"cases": [{"id": "a", "values": TRICKY, "flow": [{"k": t} for t in TRICKY]}],
            **{f"k{i}": t for i, t in enumerate(TRICKY)}, "floats": [0.5, 1e-05, 1e20, -0.0], "ints": [0, -3]}
    text = yamltext.dump(data, comments={"": ["top"], "/cases/0/values/3": ["a comment\nof two lines"]})
    assert canonical_json(read_yaml("x.yaml", text).data) == canonical_json(data)


_scalars = st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
                     st.integers(-2**63 + 1, 2**63 - 1), st.floats(allow_nan=False, allow_infinity=False),
                     st.booleans())
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), inner, max_size=4)),
    max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), _values, min_size=1, max_size=5))
def test_any_data_reads_back_as_itself(data: dict[str, Any]) -> None:
    text = yamltext.dump(data)
    assert canonical_json(read_yaml("x.yaml", text).data) == canonical_json(data)


def test_key_order_follows_the_examples() -> None:
    text = yamltext.dump({"cases": [{"checks": [], "id": "a"}], "agent": {"model": "m", "kind": "command"},
                          "skill": "s"}, order=importer._order)
    assert [line.split(":")[0].strip(" -") for line in text.splitlines()] == \
        ["skill", "agent", "kind", "model", "cases", "id", "checks"]


def test_a_clauditor_auto_harness_with_settings_of_its_own_writes_the_project_agent_with_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, seed = seed_project(tmp_path, *EXAMPLES[0])
    data = json.loads(seed.read_text())
    seed.write_text(json.dumps({**data, "sync_tasks": True}))
    assert do_import(root, seed, monkeypatch) == 0
    native = written(seed, "clauditor")
    agent = read_yaml(str(native), native.read_text()).data["agent"]
    assert agent["kind"] == "command" and agent["sync_tasks"] is True
    assert key_table(loaded(native, root), root) == key_table(loaded(seed, root), root)
