"""Where a spec's paths may point (skillmake.core.paths and the loader's use of it): skills under the project root or an
allowed root, links kept inside the skill folder at validation, hashing and install time, safe names, numbers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillmake.core.errors import SkillmakeError, SpecErrors
from skillmake.core.paths import ALLOWED_ROOTS_VAR, allowed_roots, unsafe_name, workspace_path_problem
from skillmake.run.agents.cli_common import install_skill_folder
from skillmake.spec.loader import load_spec
from skillmake.spec.model import Skill
from skillmake.spec.schema import SPEC, load_schema, reference_validator, validator
from skillmake.spec.skillfiles import manifest
from skillmake.spec.source import read_source

SPEC_TEXT = """\
skill: {skill}
agent: {{kind: command, command: [python3, agent.py]}}
cases:
  - id: one
    prompt: say hello
    checks: [{{type: contains, needle: HELLO}}]
"""


def skill_at(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    return folder


def errors_of(path: Path, root: Path) -> list[str]:
    with pytest.raises(SpecErrors) as info:
        load_spec(str(path), root=str(root))
    return [f"{e.loc.pointer if e.loc else ''}: {e.message}" for e in info.value.errors]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


def test_a_skill_outside_the_root_is_refused_until_its_folder_is_allowed(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skill_at(tmp_path / "shared/s")
    spec = project / "a.eval.yaml"
    spec.write_text(SPEC_TEXT.format(skill="../shared/s"))
    monkeypatch.delenv(ALLOWED_ROOTS_VAR, raising=False)
    assert errors_of(spec, project) == [
        "/skill: skill '../shared/s' is outside the project root (it resolves to ../shared/s)"]
    monkeypatch.setenv(ALLOWED_ROOTS_VAR, os.pathsep.join(["relative/dir", str(tmp_path / "elsewhere")]))
    with pytest.raises(SpecErrors, match="not absolute: relative/dir"):
        load_spec(str(spec), root=str(project))
    monkeypatch.setenv(ALLOWED_ROOTS_VAR, os.pathsep.join(["", str(tmp_path / "shared")]))
    assert load_spec(str(spec), root=str(project)).skill.path == str(tmp_path / "shared/s")


def test_absolute_home_and_linked_skills_outside_the_root_are_refused(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ALLOWED_ROOTS_VAR, raising=False)
    outside = skill_at(tmp_path / "home/s")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (project / "skills").mkdir()
    (project / "skills/linked").symlink_to(outside)
    for written in (str(outside), "~/s", "~/..", "skills/linked"):
        spec = project / "a.eval.yaml"
        spec.write_text(SPEC_TEXT.format(skill=written))
        [error] = errors_of(spec, project)
        assert error.startswith(f"/skill: skill '{written}' is outside the project root"), error
    inside = skill_at(project / "skills/real")
    (project / "a.eval.yaml").write_text(SPEC_TEXT.format(skill=str(inside)))  # absolute but inside: fine
    assert load_spec(str(project / "a.eval.yaml"), root=str(project)).skill.name == "real"


def test_links_in_a_skill_folder_stay_inside_it(project: Path, tmp_path: Path) -> None:
    skill = skill_at(project / "skills/s")
    (tmp_path / "secret.txt").write_text("secret\n")
    (skill / "alias.md").symlink_to("SKILL.md")  # a file inside: allowed
    (project / "a.eval.yaml").write_text(SPEC_TEXT.format(skill="skills/s"))
    assert load_spec(str(project / "a.eval.yaml"), root=str(project)).skill.kind == "folder"
    (skill / "sub").mkdir()
    (skill / "sub/leak.txt").symlink_to(tmp_path / "secret.txt")
    (skill / "more").symlink_to("sub")  # a folder, even inside: its files would be copied but not hashed
    (skill / "gone.md").symlink_to("nowhere.md")
    assert sorted(errors_of(project / "a.eval.yaml", project)) == [
        "/skill: skill file 'gone.md' is a broken link (to nowhere.md)",
        "/skill: skill file 'more' is a link to a folder",
        f"/skill: skill file 'sub/leak.txt' links outside the skill folder (to {tmp_path / 'secret.txt'})",
    ]


def test_hashing_and_installing_never_follow_a_link_out_of_the_skill(tmp_path: Path) -> None:
    skill = skill_at(tmp_path / "s")
    (skill / "alias.md").symlink_to("SKILL.md")
    s = Skill(name="s", path=str(skill), kind="folder")
    files = manifest(s)["files"]
    assert files["alias.md"] == files["SKILL.md"]  # hashed as its content
    install_skill_folder(str(skill), tmp_path / "ws/.claude/skills/s")
    installed = tmp_path / "ws/.claude/skills/s/alias.md"
    assert not installed.is_symlink() and installed.read_text() == (skill / "SKILL.md").read_text()
    (tmp_path / "secret.txt").write_text("secret\n")
    (skill / "leak.md").symlink_to(tmp_path / "secret.txt")  # made after validation
    with pytest.raises(SkillmakeError, match=r"'leak\.md' links outside the skill folder"):
        manifest(s)
    with pytest.raises(SkillmakeError, match=r"'leak\.md' links outside the skill folder"):
        install_skill_folder(str(skill), tmp_path / "ws2/.claude/skills/s")
    assert not (tmp_path / "ws2/.claude/skills/s/leak.md").exists()


def test_allowed_roots_reads_one_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOWED_ROOTS_VAR, os.pathsep.join([str(tmp_path / "a"), "rel", "", "~/b"]))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    roots, ignored = allowed_roots(str(tmp_path / "proj"))
    assert roots == [str(tmp_path / "proj"), str(tmp_path / "a"), str(tmp_path / "home/b")]
    assert ignored == ["rel"]


@pytest.mark.parametrize(("path", "problem"), [
    ("out/result.json", None), ("*.md", None), ("a..b.txt", None), ("./x", None),
    ("../x", "has a '..' component"), ("out/../../x", "has a '..' component"), ("..", "has a '..' component"),
    ("/tmp/x", "is absolute"), ("~/x", "starts with '~' (a home folder, outside the workspace)"),
])
def test_workspace_paths(path: str, problem: str | None) -> None:
    assert workspace_path_problem(path) == problem


@pytest.mark.parametrize(("name", "problem"), [
    ("alpha", None), ("a.b-c_1", None), ("..", "is not a safe file name"), ("", "is empty"),
    (".hidden", "is not a safe file name"), ("a/b", "is not a safe file name"), ("one\n", "is not a safe file name"),
    ("a" * 129, "is longer than 128 characters"), ("a" * 128, None),
])
def test_safe_names(name: str, problem: str | None) -> None:
    assert unsafe_name(name) == problem


@pytest.mark.parametrize("file_name", ["...eval.yaml", ".eval.yaml", "bad name.eval.yaml"])
def test_a_spec_named_by_an_unsafe_file_name_is_refused_unless_it_sets_name(project: Path, file_name: str) -> None:
    skill_at(project / "skills/s")
    spec = project / file_name
    spec.write_text(SPEC_TEXT.format(skill="skills/s"))
    [error] = errors_of(spec, project)
    assert error.startswith(": the spec name "), error
    spec.write_text("name: renamed\n" + SPEC_TEXT.format(skill="skills/s"))
    assert load_spec(str(spec), root=str(project)).name == "renamed"


def test_strict_integers_agree_between_the_fast_and_the_reference_validator() -> None:
    data = read_source("x.eval.yaml", "skill: s\nagent: {kind: command, command: x}\ntrials: 2.0\n"
                                      "cases: [{id: a, prompt: p, checks: [{type: min_length, length: 3.0}]}]\n").data
    fast = sorted(str(list(e.absolute_path)) for e in validator(SPEC, strict_integers=True).iter_errors(data))
    slow = sorted(str(list(e.absolute_path))
                  for e in reference_validator(load_schema(SPEC), strict_integers=True).iter_errors(data))
    assert fast == slow == ["['cases', 0, 'checks', 0, 'length']", "['trials']"]
    assert list(validator(SPEC).iter_errors(data)) == []  # JSON Schema's own rule: 2.0 is an integer


# --- the escape list: every way a spec could name a path outside the project, each refused at its field ------

ESCAPE_SPEC = """\
skill: {skill}
agent: {{kind: claude-code}}
output_files: [{output}]
cases:
  - id: one
    prompt: say hello
    input_files: [{input}]
    checks:
      - {{type: python, script: {script}}}
      - {{type: json_schema, schema_file: {schema}}}
trigger_tests:
  should_trigger: [say hello]
  distractors: [{distractor}]
"""
SAFE = {"skill": "skills/s", "output": "out.txt", "input": "fixtures/x.txt", "script": "checks/c.py",
        "schema": "schema.json", "distractor": "skills/other"}
POINTERS = {"skill": "/skill", "output": "/output_files/0", "input": "/cases/0/input_files/0",
            "script": "/cases/0/checks/0/script", "schema": "/cases/0/checks/1/schema_file",
            "distractor": "/trigger_tests/distractors/0"}
# (field, how it is written; {out} is the outside folder, absolute): 38 attempts.
ESCAPES = [
    *[("skill", w) for w in ("../outside/skill", "{out}/skill", "~/skill", "~/..", "links/skill",
                             "skills/../../outside/skill")],
    *[("input", w) for w in ("../outside/x.txt", "{out}/x.txt", "~/x.txt", "links/x.txt",
                             "fixtures/../../outside/x.txt", "links/dir/x.txt")],
    *[("script", w) for w in ("../outside/c.py", "{out}/c.py", "links/c.py", "checks/../../outside/c.py",
                              "links/dir/c.py")],
    *[("schema", w) for w in ("../outside/schema.json", "{out}/schema.json", "links/schema.json",
                              "links/dir/schema.json")],
    *[("output", w) for w in ("../y.txt", "/tmp/y.txt", "~/y.txt", "out/../../y.txt", "..", "./../y.txt")],
    *[("distractor", w) for w in ("../outside/skill", "{out}/skill", "~/skill", "links/skill",
                                  "../outside/skill/SKILL.md", "links/skill/SKILL.md", "skills/linked-md",
                                  "skills/../../outside/skill", "{out}/command.md", "links/command.md",
                                  "~/command.md")],
]


@pytest.fixture
def escape_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(ALLOWED_ROOTS_VAR, raising=False)
    out = tmp_path / "outside"
    monkeypatch.setenv("HOME", str(out))
    root = tmp_path / "proj"
    for base in (root, out):
        (base / "skills").mkdir(parents=True)
        skill_at(base / "skill") if base == out else skill_at(base / "skills/s")
        (base / "x.txt").write_text("x\n")
        (base / "c.py").write_text("assert True\n")
        (base / "schema.json").write_text('{"type": "object"}\n')
        (base / "command.md").write_text("---\ndescription: tidies\n---\nTidy.\n")
    skill_at(root / "skills/other")
    (root / "fixtures").mkdir()
    (root / "fixtures/x.txt").write_text("x\n")
    (root / "checks").mkdir()
    (root / "checks/c.py").write_text("assert True\n")
    (root / "schema.json").write_text('{"type": "object"}\n')
    (root / "links").mkdir()
    for name in ("skill", "x.txt", "c.py", "schema.json", "command.md"):
        (root / "links" / name).symlink_to(out / name)
    (root / "links/dir").symlink_to(out)
    (root / "skills/linked-md").mkdir()
    (root / "skills/linked-md/SKILL.md").symlink_to(out / "skill/SKILL.md")
    return root


def _spec_with(root: Path, field: str, written: str) -> Path:
    values = {**SAFE, field: written.format(out=root.parent / "outside")}
    spec = root / "a.eval.yaml"
    spec.write_text(ESCAPE_SPEC.format(**{k: f'"{v}"' for k, v in values.items()}))
    return spec


def test_the_safe_spec_of_the_escape_list_is_valid(escape_project: Path) -> None:
    load_spec(str(_spec_with(escape_project, "skill", "skills/s")), root=str(escape_project))


@pytest.mark.parametrize(("field", "written"), ESCAPES, ids=[f"{f}:{w}" for f, w in ESCAPES])
def test_every_escape_is_refused_at_its_field(escape_project: Path, field: str, written: str) -> None:
    spec = _spec_with(escape_project, field, written)
    with pytest.raises(SpecErrors) as info:
        load_spec(str(spec), root=str(escape_project))
    pointers = [e.loc.pointer for e in info.value.errors if e.loc]
    assert pointers == [POINTERS[field]], [e.render() for e in info.value.errors]
    assert "Traceback" not in info.value.render()


# Values a spec substitutes into text (eva's template inputs): data, not settings; nothing counts or waits by them.
UNBOUNDED_DATA = {"spec.schema.json": {"/definitions/case/properties/inputs/additionalProperties"},
                  "eva.schema.json": {"/definitions/case/properties/inputs/additionalProperties"}}


@pytest.mark.parametrize("name", ["spec.schema.json", "config.schema.json", "eva.schema.json",
                                  "skill-creator.schema.json"])
def test_every_number_a_user_writes_has_a_maximum(name: str) -> None:
    """docs/paths.md, Numbers: 10^20 trials hung planning, a 1e300 s timeout overflowed every deadline."""
    unbounded = []

    def walk(node: object, pointer: str) -> None:
        if isinstance(node, dict):
            kinds = node.get("type")  # a property may itself be named "type": only a string (or list) is a type
            kinds = [k for k in (kinds if isinstance(kinds, list) else [kinds]) if isinstance(k, str)]
            if ({"integer", "number"} & set(kinds) and "maximum" not in node and "exclusiveMaximum" not in node
                    and "enum" not in node and "const" not in node):
                unbounded.append(pointer)
            for key, value in node.items():
                walk(value, f"{pointer}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{pointer}/{i}")

    walk(load_schema(name), "")
    assert set(unbounded) == UNBOUNDED_DATA.get(name, set())
