"""`skillmake import FILE` on a real project: the seed runs, is imported, the seed is retired, and the next run of
the real `skillmake` reuses every trial and grade of the seed (no agent call, no judge call)."""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillmake.commands import cli
from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.functional.project import AGENT, Project

SEEDS = Path(__file__).resolve().parents[1] / "data" / "seeds"
JUDGE = "/v1/chat/completions"
# eva's thing under test is prompt.xml, not a SKILL.md folder: an agent that only logs the call and answers.
EVA_AGENT = '''\
from pathlib import Path
with open(Path(__file__).resolve().parent / "calls.log", "a") as log:
    log.write("called\\n")
print("<diff>\\n- total\\n+ sum\\n</diff>")
'''


def import_cmd(*args: str) -> list[str]:
    """`skillmake import` once the front end has it; until then the module's own entry point (same function)."""
    if re.search(r"^\s+import\b", cli.COMMANDS, flags=re.MULTILINE):
        return [sys.executable, "-m", "skillmake", "import", *args]
    return [sys.executable, "-m", "skillmake.commands.importer", *args]


def judge(request: Recorded) -> Reply:
    text = request.text()
    ids = re.findall(r"^- (E\d+): ", text, flags=re.MULTILINE)
    return Reply.text(json.dumps({"expectations": [{"id": i, "passed": True, "evidence": "ok"} for i in ids]}))


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        yield fake


def env_of(api: FakeAPI) -> dict[str, str]:
    return {**api.openai_env(), **api.anthropic_env(), "SKILLMAKE_JUDGE_PROVIDER": "openai",
            "SKILLMAKE_JUDGE_MODEL": "gpt-5.4-mini"}


def test_an_imported_skill_creator_spec_reruns_nothing(api: FakeAPI, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    config = f'agent = {{kind = "command", command = ["python3", "{root}/agent.py"]}}\n'
    p = Project.empty(root, {"agent.py": AGENT, "skillmake.toml": config})
    shutil.copytree(SEEDS / "skill-creator" / "reference-skill", root / "reference-skill")
    api.script = judge
    seed = p.run(env=env_of(api))
    assert (seed.code, seed.agent_calls) == (0, 2), seed.out + seed.err
    judged = api.count(JUDGE)
    assert judged > 0

    done = p.run(cmd=import_cmd("reference-skill/evals/evals.json"), check_views=False)
    assert done.code == 0, done.out + done.err
    assert "wrote reference-skill/evals/reference-skill.eval.yaml" in done.out
    assert "exclude" in done.out  # the next step: two specs of one name are both refused
    # Retired as the next step says: kept out of the specs (evals/ then stays out of the skill, so no re-run).
    p.write("skillmake.toml", config + 'exclude = ["evals.json"]\n')

    again = p.run(env=env_of(api))
    assert again.code == 0, again.out + again.err
    assert again.agent_calls == 0 and api.count(JUDGE) == judged  # the seed's trials and grades serve it
    assert (again.trials, again.grades) == (0, 0)
    valid = p.run("validate", check_views=False)
    assert valid.code == 0 and "1 spec(s) valid" in valid.out, valid.out + valid.err  # the import alone


def test_an_imported_eva_spec_reruns_nothing_and_validates(api: FakeAPI, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    config = f'agent = {{kind = "command", command = ["python3", "{root}/agent.py"]}}\n'
    p = Project.empty(root, {"agent.py": EVA_AGENT, "skillmake.toml": config})
    shutil.copytree(SEEDS / "eva" / "diff-surgeon", root / "diff-surgeon")
    api.default = Reply.text("SCORE=5 REASON=One renamed name, nothing else.")  # eva's rubric reply
    seed = p.run(env=api.anthropic_env())
    assert (seed.code, seed.agent_calls) == (0, 1), seed.out + seed.err
    judged = api.count()

    done = p.run(cmd=import_cmd("diff-surgeon/eval.yml"), check_views=False)
    assert done.code == 0, done.out + done.err
    (root / "diff-surgeon" / "eval.yml").unlink()
    valid = p.run("validate", check_views=False)
    assert valid.code == 0, valid.out + valid.err

    again = p.run(env=api.anthropic_env())
    assert again.code == seed.code, again.out + again.err
    assert again.agent_calls == 0 and api.count() == judged


def test_refusals_exit_as_documented(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    p = Project.empty(root, {"skillmake.toml": 'agent = {kind = "command", command = ["cat"]}\n'})
    shutil.copytree(SEEDS / "clauditor" / "invalid", root / "bad")
    broken = p.run(cmd=import_cmd("bad/type_regexp.eval.json"), check_views=False)
    assert broken.code == 2 and "Traceback" not in broken.err
    assert "bad/type_regexp.eval.json:" in broken.err and "nothing imported" in broken.err
    missing = p.run(cmd=import_cmd("nope.json"), check_views=False)
    assert missing.code == 3 and "no file nope.json" in missing.err
