"""`skillmake promote`: draft → tested → ready, one step per call, only on passing results of the spec as it is
now; the state beside the spec (eva's promotion.json in the eval folder), never a reason to re-run anything."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from tests.fakeapi.reply import Reply
from tests.fakeapi.server import FakeAPI

from .project import Project, Run
from .test_seed_eva import _config, _project

# The lead wires `promote` into cli.py; until then the command is its module's main().
PROMOTE = [sys.executable, "-c",
           "import sys; from skillmake.commands.promote import main; sys.exit(main(sys.argv[1:]))"]


def promote(p: Project, *args: str) -> Run:
    return p.run(cmd=[*PROMOTE, *args])


def _state(p: Project, rel: str) -> dict | None:
    path = p.root / rel
    return orjson.loads(path.read_bytes()) if path.exists() else None


def test_an_eva_prompt_moves_draft_tested_ready_on_passing_results_only(tmp_path: Path) -> None:
    p = _project(tmp_path)
    state = "prompts/diff-surgeon/promotion.json"
    before = promote(p, "diff-surgeon")
    assert before.code == 1 and before.out == ""
    assert before.err.strip().splitlines() == [
        "skillmake promote: diff-surgeon stays draft, not tested: it has no results yet; run `skillmake` first"]
    assert _state(p, state) is None
    with FakeAPI() as api:
        api.default = Reply.text("SCORE=5 REASON=Surgical.")
        assert p.run(env=api.anthropic_env()).code == 0
        step = promote(p, "diff-surgeon")
        assert step.code == 0, step.err
        assert step.out.strip() == "diff-surgeon: draft → tested (prompts/diff-surgeon/promotion.json)"
        assert _state(p, state)["state"] == "tested"
        assert _state(p, "prompts/rejects-empty/promotion.json") is None  # only the named spec moves
        # Promoting changes no key: the next run has nothing to do.
        quiet = p.run(env=api.anthropic_env())
        assert quiet.code == 0 and quiet.agent_calls == 0 and api.count() == 1
        # An edited prompt is not promoted on the old prompt's results.
        p.replace("prompts/diff-surgeon/prompt.xml", "smallest change", "smallest possible change")
        stale = promote(p, "diff-surgeon")
        assert stale.code == 1 and len(stale.err.strip().splitlines()) == 1
        assert "stays tested, not ready: its last results are not of the spec as it is now" in stale.err
        assert p.run(env=api.anthropic_env()).code == 0
        assert promote(p, "diff-surgeon").out.strip() == ("diff-surgeon: tested → ready "
                                                          "(prompts/diff-surgeon/promotion.json)")
    done = _state(p, state)
    assert done["state"] == "ready"
    assert [(h["from"], h["to"]) for h in done["history"]] == [("draft", "tested"), ("tested", "ready")]
    assert done["history"][0]["results"] != done["history"][1]["results"]  # each step names its own results
    again = promote(p, "diff-surgeon")
    assert again.code == 0 and again.out.strip() == "diff-surgeon: already ready"


def test_failing_results_keep_the_prompt_where_it_is(tmp_path: Path) -> None:
    p = _project(tmp_path)
    with FakeAPI() as api:
        api.default = Reply.text("SCORE=3 REASON=It also reformats the file.")
        assert p.run(env=api.anthropic_env()).code == 1
    run = promote(p)  # every spec: one moves, one is refused, and the exit code says so
    assert run.code == 1
    assert run.out.strip() == "rejects-empty: draft → tested (prompts/rejects-empty/promotion.json)"
    [line] = run.err.strip().splitlines()
    assert line.startswith("skillmake promote: diff-surgeon stays draft, not tested: its last results did not pass: ")
    assert _state(p, "prompts/diff-surgeon/promotion.json") is None


def test_status_shows_each_state_and_changes_nothing(tmp_path: Path) -> None:
    p = _project(tmp_path)
    run = promote(p, "--status")
    assert run.code == 0
    assert run.out.splitlines() == [
        "diff-surgeon: draft (may not move: it has no results yet; run `skillmake` first)",
        "rejects-empty: draft (may not move: it has no results yet; run `skillmake` first)"]
    assert not list(p.root.rglob("promotion.json"))


def test_an_unknown_spec_is_a_usage_error(tmp_path: Path) -> None:
    p = _project(tmp_path)
    run = promote(p, "nope")
    assert run.code == 3 and "no spec named nope" in run.err


def test_a_native_spec_is_promoted_the_same_way_with_its_state_beside_it(tmp_path: Path) -> None:
    p = _project(tmp_path)
    _config(p, '"twins"')
    with FakeAPI() as api:
        api.default = Reply.text("SCORE=5 REASON=Surgical.")
        assert p.run(env=api.anthropic_env()).code == 0
        run = promote(p, "rejects-empty-twin")
        assert run.code == 0, run.err
        assert run.out.strip() == "rejects-empty-twin: draft → tested (twins/rejects-empty-twin.promotion.json)"
        assert p.run(env=api.anthropic_env()).agent_calls == 0


def test_a_spec_inside_its_skill_folder_is_promoted_without_changing_the_skill(tmp_path: Path) -> None:
    """A state file is not part of the skill (paths.not_skill): promoting a spec kept in its SKILL.md folder writes
    the state beside it and re-runs nothing."""
    p = Project(tmp_path / "proj")
    agent = f"agent: {{kind: command, command: [python3, {p.root}/agent.py]}}\n"
    p.write("skills/alpha/alpha.eval.yaml", f"skill: .\n{agent}"
            "cases:\n  - {id: one, prompt: say one, checks: [{type: contains, needle: ONE}]}\n")
    (p.root / "alpha.eval.yaml").unlink()
    (p.root / "beta.eval.yaml").unlink()
    assert p.run().code == 0
    run = promote(p, "alpha")
    assert run.code == 0, run.err
    assert (p.root / "skills/alpha/alpha.promotion.json").exists()
    assert p.run().agent_calls == 0
