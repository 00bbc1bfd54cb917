"""A check's files are grade inputs (issue 13): editing only a `python` check's script, or only a `json_schema`
check's schema_file, re-grades exactly the cases that use it and runs no trial. Proven by counting agent calls and
grades through the real CLI."""

from __future__ import annotations

import re

import pytest

from .project import AGENT, Project, Run

SPEC = '''\
skill: skills/alpha
agent: {kind: command, command: [python3, agent.py]}
trials: 2
cases:
  - id: scripted
    prompt: say one
    checks: [{type: python, script: checks/shouts.py}]
  - id: schematic
    prompt: say two
    output_files: [answer.json]
    checks: [{type: json_schema, file: answer.json, schema_file: checks/answer.schema.json}]
  - id: plain
    prompt: say three
    checks: [{type: contains, needle: THREE}]
'''

# The log agent, also writing answer.json for the json_schema check.
WRITER = AGENT + 'Path("answer.json").write_text(\'{"answer": "yes"}\')\n'


def ran(run: Run) -> tuple[int, int, int]:
    """(agent calls, trials ran, grades ran): the summary line read whether or not it names request counts."""
    m = re.search(r"ran (\d+) trials?\b.*? and (\d+) grades?\b", run.out)
    trials, grades = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    return run.agent_calls, trials, grades


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    p = Project.empty(tmp_path_factory.mktemp("grade-inputs"), {
        "agent.py": WRITER,
        "skills/alpha/SKILL.md": "---\nname: alpha\ndescription: shouts\n---\nAnswer in UPPERCASE.\n",
        "checks/shouts.py": "assert 'ONE' in output\n",
        "checks/answer.schema.json": '{"type": "object", "required": ["answer"]}\n',
        "grade.eval.yaml": SPEC,
    })
    first = p.run()
    assert first.code == 0, first.err + first.out
    assert ran(first) == (6, 6, 6)
    return p


def test_editing_a_python_checks_script_regrades_only_its_case(project: Project) -> None:
    project.write("checks/shouts.py", "assert 'ONE' in output.upper()\n")
    run = project.run()
    assert run.code == 0, run.err + run.out
    assert ran(run) == (0, 0, 2)  # case scripted × 2 trials
    assert ran(project.run()) == (0, 0, 0)


def test_editing_a_json_schema_checks_schema_file_regrades_only_its_case(project: Project) -> None:
    project.write("checks/answer.schema.json", '{"type": "object", "required": ["answer", "reason"]}\n')
    run = project.run()
    assert run.code == 1, run.err + run.out  # the stricter schema fails: the new schema was used
    assert ran(run) == (0, 0, 2)  # case schematic × 2 trials
    project.write("checks/answer.schema.json", '{"type": "object", "required": ["answer"]}\n')
    back = project.run()
    assert back.code == 0, back.err + back.out
    assert ran(back) == (0, 0, 0)  # the old grades are reused
