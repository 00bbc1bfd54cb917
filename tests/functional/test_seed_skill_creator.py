"""skill-creator's own evals.json examples, copied verbatim, run by the real `skillmake` on the command agent with
an expectations judge at the fake API: the same verdicts as their hand-written native twins, and the same trials
(running a twin after its seed costs no agent call)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.functional.project import AGENT, Project

SEEDS = Path(__file__).resolve().parents[1] / "data" / "seeds" / "skill-creator"
# Absolute: a command's program path is relative to the spec's folder, and evals.json sits in <skill>/evals/.
CONFIG = 'agent = {{kind = "command", command = ["python3", "{root}/agent.py"]}}\n'
JUDGE = "/v1/chat/completions"


def judge(request: Recorded) -> Reply:
    """Every expectation passes when the agent shouted (the skill says so), fails otherwise."""
    text = request.text()
    ids = re.findall(r"^- (E\d+): ", text, flags=re.MULTILINE)
    shouted = re.search(r"[A-Z]{4,}!", text) is not None
    return Reply.text(json.dumps({"expectations": [{"id": i, "passed": shouted, "evidence": "as written"}
                                                   for i in ids]}))


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        fake.script = judge
        yield fake


def project(root: Path, *names: str) -> Project:
    p = Project.empty(root, {"agent.py": AGENT, "skillmake.toml": CONFIG.format(root=root)})
    for name in names:
        shutil.copytree(SEEDS / name, root / name)
    return p


def env(api: FakeAPI) -> dict[str, str]:
    return {**api.openai_env(), "SKILLMAKE_JUDGE_PROVIDER": "openai", "SKILLMAKE_JUDGE_MODEL": "gpt-5.4-mini"}


def rows(root: Path, spec: str) -> dict[tuple[str, str], dict[str, object]]:
    report = json.loads((root / ".skillmake" / "reports" / spec / "report.json").read_text())
    return {(r["case"], r["arm"]): r for r in report["rows"]}


@pytest.mark.parametrize("skill", ["example-skill", "reference-skill"])
def test_seed_example_runs_and_shares_trials_with_its_native_twin(skill: str, api: FakeAPI, tmp_path: Path) -> None:
    p = project(tmp_path / "proj", skill)
    seed = p.run(env=env(api))
    assert seed.code == 0, seed.out + seed.err  # no thresholds: the baseline's failures fail no run
    cases = json.loads((p.root / skill / "evals" / "evals.json").read_text())["evals"]
    assert seed.agent_calls == 2 * len(cases)  # with and without the skill, one trial each
    assert sorted(p.calls()) == sorted(f"eval-{c['id']} {arm} 0" for c in cases
                                       for arm in ("with_skill", "without_skill"))
    judged = api.count(JUDGE)

    shutil.copy(SEEDS / f"{skill}.eval.yaml", p.root / f"{skill}.eval.yaml")
    twin = p.run(env=env(api))
    assert twin.code == 0, twin.out + twin.err
    assert twin.agent_calls == 0, twin.out + twin.err  # the native twin's trials are the seed's
    assert api.count(JUDGE) == judged  # and so are its grades

    theirs, ours = rows(p.root, skill), rows(p.root, f"{skill}-native")
    assert theirs.keys() == ours.keys() == {(f"eval-{c['id']}", arm) for c in cases
                                            for arm in ("with_skill", "without_skill")}
    for cell, row in theirs.items():
        assert row["trial_keys"] == ours[cell]["trial_keys"], cell
        assert row["grade_keys"] == ours[cell]["grade_keys"], cell
        verdict = ("passed", "outcomes", "pass_rate", "mean_score")
        assert {k: row[k] for k in verdict} == {k: ours[cell][k] for k in verdict}, cell
        assert row["passed"] == (1 if cell[1] == "with_skill" else 0), cell


# evals/evals.json sits inside the skill folder, whose whole tree is the skill digest in every with_skill trial key:
# today any edit of it re-runs every with_skill trial. These pin the catalogue as it must hold (report: exclude
# the skill's own evals/ folder from its digest and its installed copy).


def test_editing_an_expectation_regrades_without_running(api: FakeAPI, tmp_path: Path) -> None:
    p = project(tmp_path / "proj", "reference-skill")
    assert p.run(env=env(api)).agent_calls == 2
    judged = api.count(JUDGE)
    p.replace("reference-skill/evals/evals.json", "The output includes X", "The output includes Z")
    again = p.run(env=env(api))
    assert (again.agent_calls, api.count(JUDGE) - judged) == (0, 2), again.out


def test_editing_one_evals_prompt_reruns_that_eval_only(api: FakeAPI, tmp_path: Path) -> None:
    p = project(tmp_path / "proj", "example-skill")
    assert p.run(env=env(api)).agent_calls == 4
    p.replace("example-skill/evals/evals.json", "Another test prompt", "Another test prompt, edited")
    again = p.run(env=env(api))
    assert sorted(p.calls()[-again.agent_calls:]) == ["eval-1 with_skill 0", "eval-1 without_skill 0"], again.out


def test_editing_evals_json_never_reruns_an_unchanged_baseline_trial(api: FakeAPI, tmp_path: Path) -> None:
    p = project(tmp_path / "proj", "example-skill")
    assert p.run(env=env(api)).agent_calls == 4
    p.replace("example-skill/evals/evals.json", "Another test prompt", "Another test prompt, edited")
    again = p.run(env=env(api))
    assert "eval-0 without_skill 0" not in p.calls()[-again.agent_calls:]
    assert "eval-1 without_skill 0" in p.calls()[-again.agent_calls:]


def test_validate_names_the_seed_file_and_line(tmp_path: Path) -> None:
    p = project(tmp_path / "proj", "example-skill")
    p.replace("example-skill/evals/evals.json", '"id": 1,', '"id": "one",')
    done = p.run("validate", check_views=False)
    assert done.code == 2, done.out + done.err
    assert ("example-skill/evals/evals.json:18:13 /evals/1/id: expected an integer, got string 'one'\n"
            "  hint: use an integer\n") in done.err
    assert "Traceback" not in done.err
