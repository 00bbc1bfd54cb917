"""`skillmake rejudge N` (judge noise): stored outputs judged N more times, never an agent call, repeats cached by
grade key. Proven through the real CLI by counting agent calls (the command agent's log) and judge requests at the
loopback fake API (/v1/messages), and the report file checked against schemas/judge-noise.schema.json.

The first run (a doit build: 12 trials, 12 grades) is made once per test process and each test works on a copy of
its project; `rejudge` runs in this process (inprocess.py), a build in a child."""

from __future__ import annotations

import json
import re
import statistics
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from tests.fakeapi import FakeAPI, Recorded, Reply
from tests.functional.inprocess import InProcess, command_state
from tests.functional.project import AGENT, Project, Run, copy_of, template

REPO = Path(__file__).resolve().parents[2]
MESSAGES = "/v1/messages"

SPEC = '''\
skill: skills/alpha
agent: {kind: command, command: [python3, agent.py]}
trials: 2
baseline: true
judge: {provider: anthropic, model: claude-sonnet-4-6}
cases:
  - id: greet
    prompt: say hello
    rubric: Is the greeting friendly?
    expectations: [It says hello]
  - id: part
    prompt: say goodbye
    rubric: Is the farewell warm?
  - id: plain
    prompt: say three
    checks: [{type: contains, needle: THREE}]
'''
# greet: 4 cells × 2 judges, part: 4 cells × 1 judge, plain: no judge — 12 judge calls per round of judging.
PER_ROUND = 12
GREET_CELLS = ["alpha/greet/with_skill/0", "alpha/greet/with_skill/1", "alpha/greet/without_skill/0",
               "alpha/greet/without_skill/1"]
_CELL = re.compile(r"\[(with_skill|without_skill) (\d+)\]")


class Judge:
    """The fake judge: the greeting rubric scores 5, 5, 2, 5, 5, 2, … for each cell in turn (it flips; 2 of every 3
    judgings pass), the farewell rubric always 4, every expectation passes. Counted per cell, so the verdicts a
    cell gets do not depend on the order parallel requests arrive in."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: dict[tuple[str, ...], int] = {}
        self.temperatures: list[Any] = []

    def __call__(self, request: Recorded) -> Reply:
        body = request.json or {}
        self.temperatures.append(body.get("temperature", "unset"))
        properties = body["tools"][0]["input_schema"]["properties"]
        text = request.text()
        cell = _CELL.search(text)
        assert cell is not None, text
        if "expectations" in properties:
            return Reply.tool_use("record_verdict", {"expectations": [
                {"id": "E1", "passed": True, "evidence": "it greets"}]})
        case = "greet" if "friendly" in text else "part"
        with self.lock:
            key = (case, *cell.groups())
            n = self.seen[key] = self.seen.get(key, -1) + 1
        score = (2 if n % 3 == 2 else 5) if case == "greet" else 4
        return Reply.tool_use("record_verdict", {"score": score, "reason": "as written"})


@pytest.fixture
def judge() -> Judge:
    return Judge()


@pytest.fixture
def api(judge: Judge) -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        fake.script = judge
        yield fake


@pytest.fixture
def cli(capfd: pytest.CaptureFixture[str]) -> InProcess:
    return InProcess(capfd)


Stored = tuple[Project, dict[str, str]]  # a copy of the project after its first run, and the judge's environment
_FIRST_RUN: dict[str, Any] = {}  # what the fake judge had seen when the template's first run ended


def first_run(root: Path) -> Project:
    """The project after its first run, which stored every trial and grade: 12 agent calls, 12 judge calls, no
    temperature sent (the spec sets none)."""
    project = Project.empty(root, {
        "agent.py": AGENT,
        "skills/alpha/SKILL.md": "---\nname: alpha\ndescription: shouts\n---\nAnswer in UPPERCASE.\n",
        "alpha.eval.yaml": SPEC,
    })
    judge = Judge()
    with FakeAPI() as api:
        api.script = judge
        first = project.run(env=api.anthropic_env())
        assert first.code == 0, first.out + first.err
        assert first.agent_calls == 12 and api.count(MESSAGES) == PER_ROUND
    assert judge.temperatures == ["unset"] * PER_ROUND  # without judge.temperature, none is sent to anthropic
    _FIRST_RUN["seen"] = dict(judge.seen)
    return project


@pytest.fixture
def stored(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, api: FakeAPI, judge: Judge) -> Stored:
    """A copy of the project after its first run (built once per test process), and the judge's environment; this
    test's judge goes on from where the first run's left off. Judge requests are counted from the copy on."""
    folder = template(tmp_path_factory, "rejudge-first-run", first_run)
    judge.seen.update(_FIRST_RUN["seen"])
    return copy_of(folder, tmp_path / "p"), api.anthropic_env()


def judge_calls(api: FakeAPI) -> int:
    """Judge requests since the project was new: the first run's, then this test's."""
    return PER_ROUND + api.count(MESSAGES)


def rejudge(cli: InProcess, project: Project, env: dict[str, str], *args: str) -> Run:
    return cli.run(project, "rejudge", *args, env=env)


def report(project: Project) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project.root / ".skillmake/reports/alpha/judge-noise.json").read_text())
    schema = json.loads((REPO / "schemas" / "judge-noise.schema.json").read_text())
    assert [e.message for e in Draft7Validator(schema).iter_errors(data)] == []
    return data


def criterion(data: dict[str, Any], case: str, entry: str) -> dict[str, Any]:
    return next(c for c in data["criteria"] if c["case"] == case and c["id"] == entry)


def test_repeats_are_cached_so_only_new_ones_cost_judge_calls(stored: Stored, cli: InProcess, api: FakeAPI) -> None:
    project, env = stored
    five = rejudge(cli, project, env, "5")
    assert five.code == 0, five.out + five.err
    assert five.agent_calls == 0
    assert judge_calls(api) == PER_ROUND + 5 * PER_ROUND  # the stored grade is repeat 0: not judged again
    assert "judge calls: 60 made, 12 reused from the store; 0 agent calls" in five.out

    again = rejudge(cli, project, env, "5")
    assert again.code == 0 and again.agent_calls == 0
    assert judge_calls(api) == 6 * PER_ROUND  # rejudge 5, then rejudge 5: no judge call
    assert "judge calls: 0 made, 72 reused" in again.out

    seven = rejudge(cli, project, env, "7")
    assert seven.code == 0 and seven.agent_calls == 0
    assert judge_calls(api) == 8 * PER_ROUND  # exactly 2 more per judged cell and judge
    data = report(project)
    assert data["repeats"] == 7 and data["verdicts_per_cell"] == 8
    assert data["calls"] == {"made": 2 * PER_ROUND, "reused": 6 * PER_ROUND}

    # Then a normal run: every grade is still the stored one.
    run = project.run(env=env)
    assert run.code == 0 and run.agent_calls == 0 and run.grades == 0
    assert judge_calls(api) == 8 * PER_ROUND


def test_editing_one_rubric_rejudges_only_that_cases_cells(stored: Stored, cli: InProcess, api: FakeAPI) -> None:
    project, env = stored
    assert rejudge(cli, project, env, "3").code == 0
    before = judge_calls(api)
    project.replace("alpha.eval.yaml", "Is the farewell warm?", "Is the farewell warm and brief?")
    edited = rejudge(cli, project, env, "3")
    assert edited.code == 0, edited.out + edited.err
    assert edited.agent_calls == 0
    # part's 4 cells × (its new grade + 3 repeats) × 1 judge; greet's are all reused
    assert judge_calls(api) - before == 4 * 4
    assert "judge calls: 16 made, 32 reused" in edited.out
    # The grades it made are the run's own: the next run judges nothing.
    run = project.run(env=env)
    assert run.code == 0 and run.agent_calls == 0 and run.grades == 0
    assert judge_calls(api) - before == 16


def test_the_report_says_which_criterion_the_judge_decides(stored: Stored, cli: InProcess, api: FakeAPI) -> None:
    project, env = stored
    done = rejudge(cli, project, env, "5", "--format", "json")
    assert done.code == 0, done.out + done.err
    printed = json.loads(done.out)
    data = report(project)
    assert printed["specs"] == [data] and printed["calls"] == {"made": 60, "reused": 12}
    assert data["cells"] == 8 and data["skipped"] == [] and data["incomplete"] == []
    assert data["judges"] == [{"provider": "anthropic", "model": "claude-sonnet-4-6", "temperature": None,
                               "temperature_sent": False}]

    flipping = criterion(data, "greet", "rubric")
    assert flipping["judge"] == "rubric" and flipping["cells"] == 4
    assert [c["cell"] for c in flipping["per_cell"]] == GREET_CELLS
    for cell in flipping["per_cell"]:  # 5, 5, 2, 5, 5, 2 in some order: 4 passes, 2 fails
        assert sorted(cell["verdicts"]) == [False, False, True, True, True, True]
        assert sorted(cell["scores"]) == [2, 2, 5, 5, 5, 5]
        assert cell["sd"] == pytest.approx(statistics.stdev([2, 2, 5, 5, 5, 5]), abs=1e-6)
    assert flipping["flip_rate"] == 1.0
    assert flipping["minority_share"] == pytest.approx(2 / 6, abs=1e-6)
    # every row [4, 2]: P̄ = 14/30, P̄e = (2/3)² + (1/3)² = 5/9, κ = (14/30 − 5/9) / (4/9) = −0.2
    assert flipping["kappa"] == pytest.approx(-0.2, abs=1e-6)
    assert flipping["score_sd"]["scale"] == "1-5"
    assert flipping["verdict"] == "noisy: the judge, not the skill, decides"

    for case, entry, kind in (("greet", "expectation-0", "expectations"), ("part", "rubric", "rubric")):
        steady = criterion(data, case, entry)
        assert steady["judge"] == kind and steady["cells"] == 4
        assert steady["flip_rate"] == 0 and steady["minority_share"] == 0
        assert steady["kappa"] is None and steady["kappa_note"] == "perfect agreement, no variance"
        assert steady["verdict"] == "stable"
    assert {c["case"] for c in data["criteria"]} == {"greet", "part"}  # plain has no judge

    text = project.run("--rejudge", "5", "alpha", env=env)  # the spelling: the same command
    assert text.code == 0, text.out + text.err
    assert re.search(r"greet rubric \"Is the greeting friendly\?\"\s+4\s+100%\s+33%\s+-0\.20\s+1\.55 \(1-5\)\s+"
                     r"noisy: the judge, not the skill, decides", text.out), text.out
    assert re.search(r"part rubric .*\s+4\s+0%\s+0%\s+n/a\s+0\.00 \(1-5\)\s+stable", text.out), text.out
    assert "kappa n/a: perfect agreement, no variance" in text.out
    assert "wrote .skillmake/reports/alpha/judge-noise.json" in text.out


def test_cells_without_a_stored_trial_are_skipped_never_run(stored: Stored, cli: InProcess,
                                                            api: FakeAPI, judge: Judge) -> None:
    project, env = stored
    project.replace("alpha.eval.yaml", "trials: 2", "trials: 3")
    keyless = rejudge(cli, project, {"ANTHROPIC_BASE_URL": api.url}, "2")
    assert keyless.code == 3 and "ANTHROPIC_API_KEY" in keyless.err and "Traceback" not in keyless.err
    assert judge_calls(api) == PER_ROUND  # the judge's credentials are checked before any call
    done = rejudge(cli, project, env, "2", "-k", "greet and with_skill", "--format", "json")
    assert done.code == 0, done.out + done.err
    assert done.agent_calls == 0
    assert judge_calls(api) == PER_ROUND + 2 * 2 * 2  # 2 stored with_skill cells × 2 repeats × 2 judges
    data = report(project)
    assert data["selection"] == "-k 'greet and with_skill'"
    why = "its trial is not stored: run it first (skillmake trial:alpha/greet/with_skill/2)"
    assert data["skipped"] == [{"cell": "alpha/greet/with_skill/2", "why": why}]
    assert data["cells"] == 2
    # A judgement that fails is not cached: its cell is incomplete (left out of the numbers) and asked again next time.
    def failing(request: Recorded) -> Reply:
        rubric = "score" in (request.json or {})["tools"][0]["input_schema"]["properties"]
        if rubric and request.contains("[with_skill 1]"):
            return Reply.error(400, "this judge is down")
        return judge(request)

    api.script = failing
    broken = rejudge(cli, project, env, "3", "-k", "greet and with_skill", "--format", "json")
    assert broken.code == 0, broken.out + broken.err
    assert judge_calls(api) == PER_ROUND + 8 + 3  # cell 0: both judges; cell 1: the rubric failed, so no more
    data = report(project)
    assert data["cells"] == 1 and [c["cells"] for c in data["criteria"]] == [1, 1]
    [incomplete] = data["incomplete"]
    assert incomplete["cell"] == "alpha/greet/with_skill/1" and incomplete["repeat"] == 3
    assert "HTTP 400" in incomplete["error"] and "this judge is down" in incomplete["error"]
    api.script = judge
    healed = rejudge(cli, project, env, "3", "-k", "greet and with_skill")
    assert healed.code == 0 and judge_calls(api) == PER_ROUND + 8 + 3 + 2
    assert report(project)["incomplete"] == [] and report(project)["cells"] == 2
    # Nothing to judge: no credentials needed.
    text = rejudge(cli, project, {"ANTHROPIC_BASE_URL": api.url}, "2", "--case", "greet", "--tag", "nothing-has-this")
    assert text.code == 0 and "nothing to re-judge" in text.out and text.agent_calls == 0


@pytest.fixture
def unrun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    """The project, never run, as the current one of this process (noise.main called in-process; what it leaves in
    the process, a run id and the run lock among it, is put back afterwards)."""
    project = Project.empty(tmp_path / "p", {
        "agent.py": AGENT,
        "skills/alpha/SKILL.md": "---\nname: alpha\ndescription: shouts\n---\nAnswer in UPPERCASE.\n",
        "alpha.eval.yaml": SPEC,
    })
    monkeypatch.setenv("SKILLMAKE_ROOT", str(project.root))
    with command_state():
        yield project


@pytest.mark.parametrize(("args", "message"), [
    ([], "say how many more times to judge each stored output"),
    (["many"], "N must be a whole number"),
    (["0"], "N must be at least 1"),
    (["2", "alpah"], "no spec named 'alpah'; did you mean 'alpha'?"),
    (["2", "--formt", "json"], "unknown option --formt; did you mean --format?"),
    (["2", "--format", "yaml"], "invalid choice: 'yaml'"),
    (["2", "--case", "gret"], "spec alpha has no case 'gret'; did you mean 'greet'?"),
    (["2", "-k", "greet and"], "-k 'greet and': at column 10"),
    (["2", "--max-flip-rate", "2"], "--max-flip-rate must be between 0 and 1"),
])
def test_usage_errors_exit_3_in_one_message(unrun: Project, capsys: pytest.CaptureFixture[str], args: list[str],
                                            message: str) -> None:
    from skillmake.commands import rejudge as noise

    assert noise.main(args) == 3
    out, err = capsys.readouterr()
    assert message in err and err.startswith("skillmake rejudge: ") and "Traceback" not in err, err
    assert out == "" and unrun.calls() == []


def test_help_and_a_project_without_specs(unrun: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from skillmake.commands import rejudge as noise

    assert noise.main(["--help"]) == 0
    assert "Fleiss' kappa" in capsys.readouterr().out
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("SKILLMAKE_ROOT", str(empty))
    assert noise.main(["2"]) == 5
    assert "no spec" in capsys.readouterr().err


def test_an_invalid_spec_exits_2_and_the_others_are_still_rejudged(unrun: Project,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from skillmake.commands import rejudge as noise

    unrun.write("beta.eval.yaml", SPEC.replace("trials: 2", "trials: many"))
    assert noise.main(["2", "beta"]) == 2
    out, err = capsys.readouterr()
    assert "beta.eval.yaml:" in err and "trials" in err
    assert noise.main(["2"]) == 2  # alpha has nothing stored: its cells are skipped, and beta is still invalid
    out, err = capsys.readouterr()
    assert "skipped alpha/greet/with_skill/0: its trial is not stored" in out and unrun.calls() == []


def test_temperature_is_sent_recorded_and_keyed(stored: Stored, cli: InProcess, api: FakeAPI,
                                                judge: Judge) -> None:
    project, env = stored  # its first run sent no temperature: `first_run` checks that where it is made
    project.replace("alpha.eval.yaml", "model: claude-sonnet-4-6}", "model: claude-sonnet-4-6, temperature: 0.5}")
    run = project.run(env=env)
    assert run.code == 0, run.out + run.err
    assert run.agent_calls == 0 and run.grades == 8  # the 8 judged cells re-grade; plain's grades stay
    assert judge_calls(api) == 2 * PER_ROUND
    assert judge.temperatures == [0.5] * PER_ROUND
    done = rejudge(cli, project, env, "1", "--format", "json")
    assert done.code == 0 and judge_calls(api) == 3 * PER_ROUND  # new grade keys: new repeats
    assert report(project)["judges"] == [{"provider": "anthropic", "model": "claude-sonnet-4-6", "temperature": 0.5,
                                          "temperature_sent": True}]
    # Taking the setting out again is the spec as it was: its grades and repeats are all reused.
    project.replace("alpha.eval.yaml", ", temperature: 0.5}", "}")
    back = project.run(env=env)
    assert back.code == 0 and back.agent_calls == 0 and back.grades == 0
    assert judge_calls(api) == 3 * PER_ROUND


EXAMPLES = REPO / "tests" / "data" / "schemas"


@pytest.mark.parametrize("name", ["judge-noise", "rejudge-record"])
def test_the_schemas_against_their_examples(name: str) -> None:
    """Good examples validate and bad ones fail, with jsonschema and with skillmake's own validator (what writes and
    reads them). Until tests/unit/spec/test_schema_results.py lists these names, this is where they are checked."""
    from skillmake.core.errors import RecordError
    from skillmake.spec.schema import validate_record

    schema = json.loads((REPO / "schemas" / f"{name}.schema.json").read_text())
    Draft7Validator.check_schema(schema)
    good = sorted((EXAMPLES / name / "good").glob("*.json"))
    bad = sorted((EXAMPLES / name / "bad").glob("*.json"))
    assert good and len(bad) >= 3
    for path in good:
        data = json.loads(path.read_text())
        assert [e.message for e in Draft7Validator(schema).iter_errors(data)] == [], path.name
        validate_record(f"{name}.schema.json", data, what=path.name)
    for path in bad:
        data = json.loads(path.read_text())
        assert list(Draft7Validator(schema).iter_errors(data)), path.name
        with pytest.raises(RecordError):
            validate_record(f"{name}.schema.json", data, what=path.name)
