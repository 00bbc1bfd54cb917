"""run/grade.py: a grade's key names its case's check scripts as they are when it is asked."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from skillmake.core.canonical import KEY_VERSION, digest_bytes
from skillmake.run import grade as grading
from skillmake.run.keys import grade_key, grade_part
from skillmake.spec.loader import load_spec
from skillmake.spec.model import Spec

SPEC = """\
skill: skills/s
agent: {kind: command, command: [sh, -c, 'echo hi']}
cases:
  - id: a
    prompt: do it
    checks: [{type: contains, needle: x}, {type: python, script: checks/c.py}]
    rubric: is it good?
  - id: b
    prompt: do that
    checks: [{type: contains, needle: x}]
"""

TRIAL: dict[str, Any] = {"outputs": {"output": digest_bytes(b"hi\n"), "files": {}},
                         "inputs": {"key_version": KEY_VERSION}}


def loaded(root: Path) -> Spec:
    return load_spec(str(root / "p.eval.yaml"), root=str(root))


def test_a_grade_key_reads_the_check_scripts_each_time_it_is_asked(tmp_path: Path) -> None:
    (tmp_path / "skills/s").mkdir(parents=True)
    (tmp_path / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks/c.py").write_text("assert output\n")
    (tmp_path / "p.eval.yaml").write_text(SPEC)
    spec = loaded(tmp_path)

    def unmemoised(spec: Spec, index: int) -> str:
        case = spec.cases[index]
        return grade_key(grading.outputs_digest(case, TRIAL), grade_part(spec, case), grading.judge_part(spec, case))

    first = [grading.key_for(spec, case, TRIAL)[0] for case in spec.cases]
    assert first == [unmemoised(spec, 0), unmemoised(spec, 1)]
    assert first[0] != first[1]
    # Another case object (a command that rewrites a case, as compare's preflight does) has a grade part of its own.
    other = dataclasses.replace(spec.cases[0], rubric="is it better?")
    assert grading.key_for(spec, other, TRIAL)[0] not in first
    # A check script edited: the same loaded spec's key names the new content (a script that changed while its grade
    # ran makes the grade and the view disagree, so no result is kept under the old key), as does a spec loaded again.
    (tmp_path / "checks/c.py").write_text("assert 'hi' in output\n")
    assert grading.key_for(spec, spec.cases[0], TRIAL)[0] == unmemoised(spec, 0) != first[0]
    again = loaded(tmp_path)
    assert grading.key_for(again, again.cases[0], TRIAL)[0] == unmemoised(again, 0) != first[0]
    assert grading.key_for(again, again.cases[1], TRIAL)[0] == first[1]


def test_a_case_whose_checks_read_no_file_has_its_grade_part_worked_out_once(tmp_path: Path) -> None:
    """Asked for by a cell's grade and again by its view: kept per loaded spec and case object, unless a check reads
    a file (its content is read each time: the test above)."""
    (tmp_path / "skills/s").mkdir(parents=True)
    (tmp_path / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks/c.py").write_text("assert output\n")
    (tmp_path / "p.eval.yaml").write_text(SPEC)
    spec = loaded(tmp_path)
    scripted, plain = spec.cases
    assert grading.case_grade_part(spec, plain) is grading.case_grade_part(spec, plain)
    assert grading.case_grade_part(spec, plain) == grade_part(spec, plain)
    assert grading.case_grade_part(spec, scripted) is not grading.case_grade_part(spec, scripted)
    other = dataclasses.replace(plain, checks=())  # another case object: a part of its own
    assert grading.case_grade_part(spec, other) == grade_part(spec, other) != grade_part(spec, plain)
