"""Trial and grade keys: exactly the inputs design.md names, nothing else (paths, ids, timeouts are not)."""

from __future__ import annotations

import shutil
from pathlib import Path

from skillmake.run.keys import KeyMaker, grade_part
from skillmake.spec.loader import load_spec
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Spec

SPEC = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py], model: m1}
baseline: true
trials: 2
timeout: 30
cases:
  - id: a
    prompt: do it
    input_files: [fixtures/in.txt]
    checks: [{type: contains, needle: x}]
    rubric: is it good?
"""


def project(root: Path, spec: str = SPEC) -> Path:
    (root / "skills/s").mkdir(parents=True)
    (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (root / "fixtures").mkdir()
    (root / "fixtures/in.txt").write_text("input\n")
    (root / "agent.py").write_text("print('hi')\n")
    (root / "p.eval.yaml").write_text(spec)
    return root / "p.eval.yaml"


def keys(path: Path) -> dict[str, str]:
    spec = load_spec(str(path), root=str(path.parent))
    maker = KeyMaker(str(path.parent))
    return {f"{c.id}/{a.name}/{k}": maker.trial_key(spec, c, a, k).key
            for c in spec.cases for a in spec.arms for k in range(spec.trials)}


def loaded(path: Path) -> Spec:
    return load_spec(str(path), root=str(path.parent))


def test_keys_differ_by_arm_and_index_and_are_stable(tmp_path: Path) -> None:
    path = project(tmp_path)
    first = keys(path)
    assert len(set(first.values())) == 4
    assert keys(path) == first
    assert all(k.startswith("sha256:") and len(k) == 71 for k in first.values())


def test_paths_ids_timeouts_and_formatting_are_not_part_of_the_key(tmp_path: Path) -> None:
    path = project(tmp_path / "one")
    before = keys(path)
    moved = tmp_path / "elsewhere" / "two"
    shutil.copytree(tmp_path / "one", moved)
    assert keys(moved / "p.eval.yaml") == before  # another folder
    text = SPEC.replace("id: a", "id: renamed").replace("timeout: 30", "timeout: 99")
    text = text.replace("rubric: is it good?", "rubric: is it great?") + "# a comment\n"
    (moved / "p.eval.yaml").write_text(text)
    assert sorted(keys(moved / "p.eval.yaml").values()) == sorted(before.values())


def test_each_run_input_changes_the_key(tmp_path: Path) -> None:
    path = project(tmp_path)
    before = keys(path)
    (tmp_path / "fixtures/in.txt").write_text("other input\n")
    assert set(keys(path).values()).isdisjoint(before.values())  # a fixture: every trial of the case
    (tmp_path / "fixtures/in.txt").write_text("input\n")
    assert keys(path) == before  # content, not mtime
    (tmp_path / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nnew body\n")
    after = keys(path)
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {f"a/{WITH_SKILL}/0", f"a/{WITH_SKILL}/1"}  # never the baseline
    (tmp_path / "agent.py").write_text("print('changed agent')\n")
    assert set(keys(path).values()).isdisjoint(after.values())  # the agent program is an input too
    path.write_text(SPEC.replace("model: m1", "model: m2"))
    assert f"a/{WITHOUT_SKILL}/0" in keys(path)


def test_grade_part_covers_checks_and_judges_but_not_run_inputs(tmp_path: Path) -> None:
    path = project(tmp_path)
    base = grade_part(loaded(path), loaded(path).cases[0]).digest
    path.write_text(SPEC.replace("needle: x", "needle: y"))
    assert grade_part(loaded(path), loaded(path).cases[0]).digest != base
    path.write_text(SPEC.replace("rubric: is it good?", "rubric: is it great?"))
    assert grade_part(loaded(path), loaded(path).cases[0]).digest != base
    path.write_text(SPEC.replace("timeout: 30", "timeout: 5").replace("trials: 2", "trials: 7"))
    assert grade_part(loaded(path), loaded(path).cases[0]).digest == base


def test_grade_part_covers_the_content_of_the_files_checks_read(tmp_path: Path) -> None:
    """Issue 13: a python check's script and a json_schema check's schema_file are grade inputs by content."""
    spec = SPEC.replace("checks: [{type: contains, needle: x}]",
                        "output_files: [out.json]\n    checks: [{type: python, script: checks/c.py}, "
                        "{type: json_schema, file: out.json, schema_file: checks/s.json}]")
    path = project(tmp_path, spec)
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks/c.py").write_text("assert output\n")
    (tmp_path / "checks/s.json").write_text('{"type": "object"}\n')
    base = grade_part(loaded(path), loaded(path).cases[0]).digest
    (tmp_path / "checks/c.py").write_text("assert 'x' in output\n")
    after_script = grade_part(loaded(path), loaded(path).cases[0]).digest
    assert after_script != base
    (tmp_path / "checks/s.json").write_text('{"type": "array"}\n')
    after_schema = grade_part(loaded(path), loaded(path).cases[0]).digest
    assert after_schema not in (base, after_script)
    (tmp_path / "checks/c.py").write_text("assert output\n")
    (tmp_path / "checks/s.json").write_text('{"type": "object"}\n')
    assert grade_part(loaded(path), loaded(path).cases[0]).digest == base
