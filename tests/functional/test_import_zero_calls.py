"""`skillmake import` keeps its promise, "0 calls after import", in the layouts the seed tools use: a caliper spec
beside SKILL.md at the project root (the schema copy must not become part of the skill), and a skill-creator
evals.json removed after the import (its `evals/` folder must stay out of the skill). Calls are counted at the
command agent's log and the fake API."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeapi import FakeAPI, Reply
from tests.functional.project import AGENT, Project
from tests.functional.test_import import JUDGE, env_of, judge

SEEDS = Path(__file__).resolve().parents[1] / "data" / "seeds"
SKILL = "---\nname: shout\ndescription: Answers in uppercase.\n---\nAnswer in UPPERCASE.\n"
CALIPER = """\
skill:
  path: ./SKILL.md
tasks:
  - name: says one
    prompt: say one
    assert: "assert 'ONE' in output"
  - name: says two
    prompt: say two
    assert: "assert 'TWO' in output"
"""


def import_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillmake", "import", *args]


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        yield fake


def test_a_caliper_spec_beside_skill_md_imported_in_place_runs_nothing(tmp_path: Path) -> None:
    # caliper's layout: the project is the skill's own folder; the spec, the config and the agent sit beside SKILL.md.
    root = tmp_path / "shout"
    config = f'trials = 2\nagent = {{kind = "command", command = ["python3", "{tmp_path}/agent.py"]}}\n'
    p = Project.empty(root, {"SKILL.md": SKILL, "shout.eval.yaml": CALIPER, "skillmake.toml": config})
    (tmp_path / "agent.py").write_text(AGENT)  # it logs its calls beside itself, outside the skill's folder
    log = tmp_path / "calls.log"
    seed = p.run()
    assert (seed.code, len(log.read_text().splitlines())) == (0, 4), seed.out + seed.err

    done = p.run(cmd=import_cmd("shout.eval.yaml", "--force"), check_views=False)
    assert done.code == 0, done.out + done.err
    assert "cases:" in p.read("shout.eval.yaml")
    assert not (root / "schemas").exists()  # no schema copy written into the skill's folder
    again = p.run()
    assert again.code == 0, again.out + again.err
    assert (len(log.read_text().splitlines()), again.trials, again.grades) == (4, 0, 0)


def test_a_skill_creator_import_runs_nothing_after_evals_json_is_removed(api: FakeAPI, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    config = f'agent = {{kind = "command", command = ["python3", "{root}/agent.py"]}}\n'
    p = Project.empty(root, {"agent.py": AGENT, "skillmake.toml": config})
    shutil.copytree(SEEDS / "skill-creator" / "reference-skill", root / "reference-skill")
    api.script = judge
    seed = p.run(env=env_of(api))
    assert (seed.code, seed.agent_calls) == (0, 2), seed.out + seed.err
    judged = api.count(JUDGE)

    done = p.run(cmd=import_cmd("reference-skill/evals/evals.json"), check_views=False)
    assert done.code == 0, done.out + done.err
    (root / "reference-skill" / "evals" / "evals.json").unlink()  # retired the plain way
    again = p.run(env=env_of(api))
    assert again.code == 0, again.out + again.err
    assert again.agent_calls == 0 and api.count(JUDGE) == judged
    assert (again.trials, again.grades) == (0, 0)


EVA_AGENT = """\
import sys
from pathlib import Path
with open(Path(__file__).resolve().parent / "prompts.log", "a") as log:
    log.write(sys.stdin.read().replace("\\n", " ") + "\\n")
print("<diff>\\n- total\\n+ sum\\n</diff>")
"""


def test_an_eva_import_keeps_rendering_prompt_xml(api: FakeAPI, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    config = f'agent = {{kind = "command", command = ["python3", "{root}/agent.py"]}}\n'
    p = Project.empty(root, {"agent.py": EVA_AGENT, "skillmake.toml": config})
    shutil.copytree(SEEDS / "eva" / "diff-surgeon", root / "diff-surgeon")
    api.default = Reply.text("SCORE=5 REASON=One renamed name, nothing else.")  # eva's rubric reply
    prompts = root / "prompts.log"
    seed = p.run(env=api.anthropic_env())
    assert seed.code == 0 and len(prompts.read_text().splitlines()) == 1, seed.out + seed.err

    done = p.run(cmd=import_cmd("diff-surgeon/eval.yml"), check_views=False)
    assert done.code == 0, done.out + done.err
    native = p.read("diff-surgeon/diff-surgeon.eval.yaml")
    assert "inputs:" in native and "Make the smallest change" not in native  # variables, not a frozen text
    (root / "diff-surgeon" / "eval.yml").unlink()
    again = p.run(env=api.anthropic_env())
    assert again.code == 0 and len(prompts.read_text().splitlines()) == 1, again.out + again.err  # 0 calls

    p.replace("diff-surgeon/prompt.xml", "Make the smallest change", "Make the tiniest change")
    edited = p.run(env=api.anthropic_env())
    assert edited.code == 0, edited.out + edited.err
    sent = prompts.read_text().splitlines()
    assert len(sent) == 2 and "Make the tiniest change" in sent[1] and "{{" not in sent[1]
