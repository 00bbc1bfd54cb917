"""Every field of what a trial runs is in its key, and nothing that only grades is (issue 20 §2): each edit below
changes one field of a populated project and runs again, and exactly the trials of the case (or spec, or arm) it
belongs to run again — counted as agent calls, named by case and arm — and nothing else. An edit of a grade-only
field runs no trial at all."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from .project import Project, copy_of, template

AGENT = '''\
import os, sys
from pathlib import Path
with open(Path(__file__).resolve().parent / "calls.log", "a") as log:
    log.write(os.environ["SKILLMAKE_CASE"] + " " + os.environ["SKILLMAKE_ARM"] + "\\n")
Path("out").mkdir(exist_ok=True)
Path("out/r.md").write_text("report\\n")
print("said", sys.stdin.read().strip(), sys.argv[1:])
'''

SPEC = '''\
description: the table of run fields
skill: skills/s
agent: {kind: command, command: [python3, agent.py], env: {MOOD: calm}}
baseline: true
system_prompt: be brief
sandbox: {forbidden_files: ["nothing-here"], extra_path: [bin]}
thresholds: {min_pass_rate: 0.5}
cases:
  - id: a
    prompt: say a
    checks: [{type: min_length, length: 1}]
  - id: b
    prompt: say b
    args: "--x 1"
    setup: echo s1 > s.txt
    cleanup: rm -f s.txt
    input_files: [fix/in.txt]
    output_files: ["out/*.md"]
    timeout: 50
    description: case b
    tags: [bee]
    checks: [{type: min_length, length: 1}]
  - id: c
    prompt: say c
    output_file: out/r.md
    checks: [{type: min_length, length: 1}]
'''

FILES = {"agent.py": AGENT, "table.eval.yaml": SPEC, "fix/in.txt": "in 1\n", "fix/other.txt": "other\n",
         "bin/.keep": "", "bin2/.keep": "", "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n"}
BOTH = ("with_skill", "without_skill")


def _spec(old: str, new: str) -> Callable[[Project], None]:
    return lambda p: p.replace("table.eval.yaml", old, new)


def _file(rel: str, text: str) -> Callable[[Project], None]:
    def edit(p: Project) -> None:
        p.write(rel, text)
    return edit


def _cells(cases: str, arms: tuple[str, ...] = BOTH) -> Counter[str]:
    return Counter(f"{c} {a}" for c in cases for a in arms)


# (what changes, the edit, the trials it must re-run: "case arm" → calls)
RUN_FIELDS: list[tuple[str, Callable[[Project], None], Counter[str]]] = [
    ("prompt", _spec("prompt: say b", "prompt: say bee"), _cells("b")),
    ("args", _spec('args: "--x 1"', 'args: "--x 2"'), _cells("b")),
    ("setup", _spec("setup: echo s1 > s.txt", "setup: echo s2 > s.txt"), _cells("b")),
    ("cleanup", _spec("cleanup: rm -f s.txt", "cleanup: rm -f s.txt t.txt"), _cells("b")),
    ("input file content", _file("fix/in.txt", "in 2\n"), _cells("b")),
    ("input file list", _spec("input_files: [fix/in.txt]", "input_files: [fix/in.txt, fix/other.txt]"),
     _cells("b")),
    ("output_files", _spec('output_files: ["out/*.md"]', 'output_files: ["out/**"]'), _cells("b")),
    ("output_file", _spec("output_file: out/r.md", "output_file: out/other.md"), _cells("c")),
    ("system_prompt", _spec("system_prompt: be brief", "system_prompt: be briefer"), _cells("abc")),
    ("forbidden_files", _spec('forbidden_files: ["nothing-here"]', 'forbidden_files: ["nor-here"]'), _cells("abc")),
    ("extra_path", _spec("extra_path: [bin]", "extra_path: [bin2]"), _cells("abc")),
    ("agent env", _spec("env: {MOOD: calm}", "env: {MOOD: wild}"), _cells("abc")),
    ("agent model", _spec("env: {MOOD: calm}}", "env: {MOOD: calm}, model: m2}"), _cells("abc")),
    ("agent program", _file("agent.py", AGENT + "# edited\n"), _cells("abc")),
    ("skill", _file("skills/s/SKILL.md", "---\nname: s\ndescription: d\n---\nbody 2\n"),
     _cells("abc", ("with_skill",))),
]

GRADE_FIELDS: list[tuple[str, Callable[[Project], None]]] = [
    ("a check", _spec("    output_files: [\"out/*.md\"]\n    timeout: 50\n    description: case b\n    tags: [bee]\n"
                      "    checks: [{type: min_length, length: 1}]",
                      "    output_files: [\"out/*.md\"]\n    timeout: 50\n    description: case b\n    tags: [bee]\n"
                      "    checks: [{type: min_length, length: 2}]")),
    ("a case's timeout", _spec("timeout: 50", "timeout: 60")),
    ("a case's description", _spec("description: case b", "description: the second case")),
    ("a case's tags", _spec("tags: [bee]", "tags: [wasp]")),
    ("the spec's description", _spec("description: the table of run fields", "description: another")),
    ("thresholds", _spec("min_pass_rate: 0.5", "min_pass_rate: 0.9")),
]


def _build(root: Path) -> Project:
    p = Project.empty(root, FILES)
    first = p.run()
    assert first.code == 0 and first.agent_calls == 6, first.out + first.err
    return p


@pytest.fixture
def project(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Project:
    return copy_of(template(tmp_path_factory, "run-fragment-table", _build), tmp_path / "proj")


@pytest.mark.parametrize(("field", "edit", "expected"), RUN_FIELDS, ids=[f for f, _, _ in RUN_FIELDS])
def test_a_run_field_reruns_exactly_its_trials(project: Project, field: str, edit: Callable[[Project], None],
                                               expected: Counter[str]) -> None:
    before = len(project.calls())
    edit(project)
    run = project.run()
    assert run.code == 0, run.out + run.err
    assert Counter(project.calls()[before:]) == expected, field
    assert project.run().agent_calls == 0  # and then it is cached


@pytest.mark.parametrize(("field", "edit"), GRADE_FIELDS, ids=[f for f, _ in GRADE_FIELDS])
def test_a_grade_only_field_reruns_no_trial(project: Project, field: str, edit: Callable[[Project], None]) -> None:
    edit(project)
    run = project.run()
    assert run.code in (0, 1), run.out + run.err
    assert run.agent_calls == 0, (field, project.calls()[-run.agent_calls:])
