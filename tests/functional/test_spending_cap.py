"""The spending cap (`--max-cost USD`, `max_cost` in the config; skillmake/run/budget.py), through the real CLI against
the loopback fake API: every trial is one /v1/messages request the fake answers with 100,000 input tokens of
claude-sonnet-4-6 ($3 per million), so each costs exactly $0.30 and the requests the fake counts are the trials that
ran. In every test what was spent stays within the cap."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeapi import FakeAPI, Reply
from tests.functional.project import AGENT, Project, Run, copy_of, template

MESSAGES = "/v1/messages"
PER_TRIAL = 0.30
SPEC = '''\
skill: skills/s
agent: {kind: anthropic, model: claude-sonnet-4-6}
trials: 3
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: hi}]
  - id: two
    prompt: say two
    checks: [{type: contains, needle: hi}]
'''
# The price table's ceiling for a trial never run: 2 prompt tokens at $3/M and 8,192 tokens out at $15/M.
PRICE_TABLE = (2 * 3 + 8192 * 15) / 1e6


def tokens(usd: float) -> dict[str, int]:
    return {"input_tokens": round(usd / 3 * 1e6), "output_tokens": 0}


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        fake.default = Reply.text("hi", usage=tokens(PER_TRIAL))
        yield fake


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.empty(tmp_path / "p", {
        "skills/s/SKILL.md": "---\nname: s\ndescription: says hi\n---\nSay hi.\n",
        "s.eval.yaml": SPEC,
    })


def run(project: Project, api: FakeAPI, *args: str) -> tuple[Run, int]:
    """`skillmake ARGS`, and how many trials it paid for (requests at the fake)."""
    before = api.count(MESSAGES)
    done = project.run(*args, env=api.anthropic_env(), check_views=False)
    return done, api.count(MESSAGES) - before


def spent(done: Run) -> float:
    """What the closing line says the run spent ($0 when it names no cost)."""
    m = re.search(r"spent [\d,]+ tokens \$([\d.]+)", done.out)
    return float(m.group(1)) if m else 0.0


def not_run(done: Run) -> list[str]:
    return re.findall(r"(trial:\S+)\s+not run: spending cap", done.out)


def test_a_run_estimated_over_the_cap_stops_before_any_call(project: Project, api: FakeAPI) -> None:
    done, calls = run(project, api, "--max-cost", "0.50")
    assert (done.code, calls) == (3, 0), done.out + done.err
    lines = done.err.strip().splitlines()
    assert len(lines) == 1, done.err
    assert f"est. ${6 * PRICE_TABLE:.4f} for 6 trials" in lines[0] and "cap of $0.50" in lines[0]
    assert "--spec NAME, -k EXPR" in lines[0] and "nothing was run" in lines[0]
    assert not (project.root / ".skillmake" / "runs").exists()
    # The same cap from the config refuses the same way; the command line beats it.
    project.write("skillmake.toml", "max_cost = 0.5\n")
    done, calls = run(project, api)
    assert (done.code, calls) == (3, 0) and "cap of $0.50" in done.err
    done, calls = run(project, api, "--max-cost", "2")
    assert (done.code, calls) == (0, 6), done.out + done.err
    assert spent(done) == pytest.approx(6 * PER_TRIAL) and spent(done) <= 2


def test_no_trial_starts_that_would_cross_the_cap(project: Project, api: FakeAPI) -> None:
    # The estimate ($0.74 from the price table) is within $1, so the run starts; the first trial costs $0.30 and
    # from then on each is expected to cost that: the 4th would take $0.90 to $1.20, so it and later ones wait.
    done, calls = run(project, api, "--max-cost", "1", "-j", "1")
    assert (done.code, calls) == (6, 3), done.out + done.err
    assert spent(done) == pytest.approx(3 * PER_TRIAL) and spent(done) <= 1
    assert len(not_run(done)) == 3 and "3 trials not run: spending cap" in done.out
    assert "spending cap $1.00 reached ($0.9000 spent): 3 trials not run: spending cap: s/" in done.out + done.err
    ledger = json.loads((project.root / ".skillmake" / "budget.json").read_text())
    assert sorted(ledger["capped"]) == sorted(c.removeprefix("trial:") for c in not_run(done))
    assert ledger["spent"] <= 1 and ledger["held"] == {}
    # A next run with room for the rest runs exactly the cells the cap left, and nothing else.
    again, calls = run(project, api, "--max-cost", "1", "-j", "1")
    assert (again.code, calls) == (0, 3), again.out + again.err
    assert spent(again) == pytest.approx(0.9)


def cheap_history(factory: pytest.TempPathFactory) -> Path:
    """The project after a first run whose 6 trials cost $0.03 each, built once per test process (each run of an
    API-agent trial imports the SDK, seconds of CPU)."""
    def build(root: Path) -> Project:
        built = Project.empty(root, {"skills/s/SKILL.md": "---\nname: s\ndescription: says hi\n---\nSay hi.\n",
                                     "s.eval.yaml": SPEC})
        with FakeAPI() as fake:
            fake.default = Reply.text("hi", usage=tokens(0.03))
            first, calls = run(built, fake)
        assert (first.code, calls) == (0, 6), first.out + first.err
        return built
    return template(factory, "spending-cap-cheap-history", build)


@pytest.mark.parametrize("mode", [[], ["-P", "process"]], ids=["threads", "processes"])
def test_parallel_trials_count_what_the_running_ones_will_spend(tmp_path: Path, tmp_path_factory:
                                                                pytest.TempPathFactory, api: FakeAPI,
                                                                mode: list[str]) -> None:
    # History says $0.03 a trial; today each costs $0.30. Three start at once (-j 3) on the history; once one has
    # cost $0.30, the running ones count at that too, so no fourth starts: $0.90 spent of a $1 cap, whatever order
    # the threads (or doit's worker processes: one ledger file, under flock) finish in.
    project = copy_of(cheap_history(tmp_path_factory), tmp_path / "p")
    api.default = Reply.text("hi", usage=tokens(PER_TRIAL))
    done, calls = run(project, api, "--resample", "--max-cost", "1", "-j", "3", *mode)
    assert (done.code, calls) == (6, 3), done.out + done.err
    assert spent(done) == pytest.approx(0.9) and len(not_run(done)) == 3


def test_the_estimate_learns_from_stored_trials(project: Project, api: FakeAPI) -> None:
    before = project.run("explain", env=api.anthropic_env())
    assert f"[est. ${PRICE_TABLE:.4f} (price table: claude-sonnet-4-6, up to 8,192 tokens out)]" in before.out
    first, calls = run(project, api)
    assert (first.code, calls) == (0, 6)
    project.replace("s.eval.yaml", "trials: 3", "trials: 5")  # 2 more per case: 4 trials
    project.replace("s.eval.yaml", "  - id: two\n", "  - id: three\n    prompt: say three\n"
                    "    checks: [{type: contains, needle: hi}]\n  - id: two\n")  # 5 trials of a new case
    explained = project.run("explain", "--format", "json", env=api.anthropic_env())
    stale = {s["cell"]: s for s in json.loads(explained.out)["stale"] if s["kind"] == "trial"}
    assert stale["s/one/with_skill/3"]["estimate_usd"] == pytest.approx(PER_TRIAL)
    assert stale["s/one/with_skill/3"]["estimate_basis"] == "mean of 3 stored trials of this case and arm"
    assert stale["s/three/with_skill/0"]["estimate_basis"] == "mean of 6 stored trials of this agent and model"
    assert json.loads(explained.out)["would_run"]["cost_usd"] == pytest.approx(9 * PER_TRIAL)
    text = project.run("explain", env=api.anthropic_env()).out
    assert "[est. $0.3000 (mean of 3 stored trials of this case and arm)]" in text
    # The learned $2.70 is over $2.50: refused before any call (explain says so first); $2.70 fits $2.75, and all 9
    # run.
    said = project.run("explain", "--max-cost", "2.5", env=api.anthropic_env()).out
    assert "run setting max_cost: $2.5 (command line)" in said
    assert "would stop before running: this run would cost est. $2.7000 for 9 trials" in said
    done, calls = run(project, api, "--max-cost", "2.50")
    assert (done.code, calls) == (3, 0) and "est. $2.7000 for 9 trials" in done.err
    done, calls = run(project, api, "--max-cost", "2.75")
    assert (done.code, calls) == (0, 9), done.out + done.err
    assert spent(done) == pytest.approx(2.7) and spent(done) <= 2.75


@pytest.mark.parametrize("value", ["0", "-1", "lots", "1e9", "nan"])
def test_a_bad_cap_is_a_usage_error(project: Project, api: FakeAPI, value: str) -> None:
    done, calls = run(project, api, f"--max-cost={value}")
    assert (done.code, calls) == (3, 0)
    assert "is not an amount of US dollars above 0" in done.err and "Traceback" not in done.err


JUDGED = '''\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
trials: 3
judge: {provider: anthropic, model: claude-sonnet-4-6}
cases:
  - id: greet
    prompt: say hello
    rubric: Is the greeting friendly?
'''


def verdict(usd: float) -> Reply:
    return Reply.tool_use("record_verdict", {"score": 5, "reason": "friendly"}, usage=tokens(usd))


def test_rejudge_honours_the_cap(tmp_path: Path, api: FakeAPI) -> None:
    project = Project.empty(tmp_path / "p", {
        "agent.py": AGENT,
        "skills/s/SKILL.md": "---\nname: s\ndescription: says hi\n---\nSay hi.\n",
        "s.eval.yaml": JUDGED,
    })
    api.default = verdict(0.01)  # the stored grades cost $0.01 each
    first, calls = run(project, api)
    assert (first.code, calls, first.agent_calls) == (0, 3, 3), first.out + first.err
    # 15 judgings at the stored $0.01 are $0.15: over $0.10, refused before any call.
    done, calls = run(project, api, "rejudge", "5", "--max-cost", "0.10")
    assert (done.code, calls) == (3, 0), done.out + done.err
    assert "15 judgings would cost est. $0.1500" in done.err and "cap of $0.10" in done.err
    # Within $0.35 on the estimate; today each call costs $0.10: after the first, each counts at that, so the 4th
    # would reach $0.40 and no call starts from there.
    api.default = verdict(0.10)
    done, calls = run(project, api, "rejudge", "5", "--max-cost", "0.35", "-j", "1")
    assert (done.code, calls) == (6, 3), done.out + done.err
    assert "spending cap $0.35 reached ($0.3000 spent): 12 judge calls not run: spending cap" in done.err


def test_compare_honours_the_cap(tmp_path: Path, api: FakeAPI) -> None:
    project = Project.empty(tmp_path / "p", {
        "skills/s/SKILL.md": "---\nname: s\ndescription: says hi\n---\nSay hi.\n",
        "s.eval.yaml": SPEC.replace("trials: 3\n", "trials: 2\nbaseline: true\n"
                                    "judge: {provider: anthropic, model: claude-sonnet-4-6}\n")
                           .split("  - id: two\n")[0],  # case one alone
    })
    # 4 trials to run (2 per side), at the price table's ceiling: $0.49, over $0.40.
    done, calls = run(project, api, "compare", "s", "--max-cost", "0.40")
    assert (done.code, calls) == (3, 0), done.out + done.err
    assert f"4 trial(s) to run would cost est. ${4 * PRICE_TABLE:.4f}" in done.err
    # Within $1 on the estimate; each trial costs $0.30, so the 4th would cross it: it does not start, and from then
    # on nothing does — not the two judge calls (one per order) of the one complete pair either.
    api.default = None
    api.script = FakeAPI.follows_skill("Say hi.", Reply.text("hi there", usage=tokens(PER_TRIAL)),
                                       Reply.text("hi", usage=tokens(PER_TRIAL)))
    done, calls = run(project, api, "compare", "s", "--max-cost", "1")
    assert (done.code, calls) == (6, 3), done.out + done.err
    assert "compare: spending cap $1.00 reached ($0.9000 spent): 3 trials or judge calls not run: spending cap" \
        in done.err


def test_the_description_optimiser_honours_the_cap(tmp_path: Path, api: FakeAPI,
                                                   capfd: pytest.CaptureFixture[str]) -> None:
    from tests.functional import test_optimize_description as opt
    from tests.functional.inprocess import InProcess

    project = Project.empty(tmp_path / "proj", {"agent.py": opt.AGENT, "skills/kids/SKILL.md": opt.SKILL,
                                                "kids.eval.yaml": opt.SPEC})
    api.default = None
    api.script = opt.improver({opt.D0: opt.GOOD})
    # The stand-in claude reports $0.002 a trigger trial: after the first, each counts at that, so the 5th would
    # take $0.008 to $0.010, over $0.009. No trial starts from there, and the improver is asked nothing.
    done, agent_calls = opt.optimize(InProcess(capfd), project, api, "kids", "-j", "1", "--max-cost", "0.009")
    assert (done.code, agent_calls, api.count(MESSAGES)) == (6, 4, 0), done.out + done.err
    data = opt.result(project)
    assert data["exit_reason"] == "spending_cap (iteration 1)"
    assert "spending cap $0.009 reached ($0.0080 spent): 3 trigger trials not run: spending cap" in done.err


def test_trigger_trials_of_a_run_stop_at_the_cap(tmp_path: Path) -> None:
    from tests.functional import test_triggers as trig

    project, env = trig._project(tmp_path)
    # 8 trigger trials of the stand-in claude at $0.002 each: the 5th would take $0.008 to $0.010.
    done, calls = trig._run(project, tmp_path, env, "--tag", "trigger", "-j", "1", "--max-cost", "0.009")
    assert (done.code, calls) == (6, 4), done.out + done.err
    assert len(re.findall(r"trigger:\S+\s+not run: spending cap", done.out)) == 4
    assert "4 trials not run: spending cap" in done.out and "$0.009 reached ($0.0080 spent)" in done.out + done.err
