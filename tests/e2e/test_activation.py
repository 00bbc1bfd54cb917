"""Skill activation as the agents detect it, with the real `claude` and `codex` CLIs driven by the fake API's
activation rule (FakeAPI.activation): a query that matches loads the skill, one that does not, does not; the
requests each run makes are counted at the fake. SKILLMAKE_RECORD_STREAMS=1 writes each transcript to
tests/data/streams/ (the unit tests in tests/unit/run/test_agents_activation.py read them)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from skillmake.run.agents import get_agent
from skillmake.run.agents.base import AgentResult, TrialRequest
from tests.e2e.cli_fakes import RecordingProxy
from tests.e2e.clis import require_cli
from tests.e2e.conftest import SKILL_BODY_MARK, SKILL_DESC_MARK, Trials, assert_offline
from tests.fakeapi import Activate, FakeAPI, Recorded, Reply
from tests.fakeapi.activation import listed_skills

pytestmark = pytest.mark.e2e
STREAMS = Path(__file__).resolve().parent.parent / "data" / "streams"
CLAUDE_MODEL, CODEX_MODEL = "claude-sonnet-4-6", "gpt-5.4"
SHOUT = Activate(skill="shout", when=r"\bshout")
PDF = Activate(skill="pdf", when=r"\bpdf\b")
FOLLOWED = Reply.text("HELLO TEAM!")  # the turn after the skill's body came back
PLAIN = Reply.text("Hello, team.")
# Stand-ins of other skills, installed beside the one under test as a trigger trial does.
DISTRACTORS = {"pdf": "Fills and reads PDF forms. Use it whenever a .pdf file is involved.",
               "deploy": "Deploys the service to staging. Use it when asked to ship or deploy."}


def install_distractors(request: TrialRequest, folder: str) -> None:
    for name, description in DISTRACTORS.items():
        skill = Path(request.workspace) / folder / name
        skill.mkdir(parents=True, exist_ok=True)
        (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n"
                                        f"This skill handles: {description}\n")


def run(api: FakeAPI, request: TrialRequest, record: str | None = None) -> tuple[AgentResult, list[Recorded]]:
    """Run one trial through its agent; the requests it made (the fake is shared by a test's trials)."""
    before = len(api.requests)
    result = get_agent(request.agent.kind).run(request)
    if record and os.environ.get("SKILLMAKE_RECORD_STREAMS"):
        (STREAMS / record).write_bytes(result.transcript or b"")
    return result, api.requests[before:]


def calls(result: AgentResult) -> list[tuple[str, str, str]]:
    return [(c["name"], c["via"], c["status"]) for c in result.details["skill_calls"]]


# -- claude-code --------------------------------------------------------------------------------------------------


@pytest.fixture
def claude(trials: Trials) -> Trials:
    require_cli("claude")
    return trials


def claude_request(trials: Trials, prompt: str, agent_extra: dict[str, Any] | None = None) -> TrialRequest:
    request = trials.request(kind="claude-code", model=CLAUDE_MODEL, prompt=prompt, agent_extra=agent_extra)
    install_distractors(request, ".claude/skills")
    return request


def test_claude_matching_query_activates_the_skill(api: FakeAPI, proxy: RecordingProxy, claude: Trials) -> None:
    api.script = FakeAPI.activation(SHOUT, PDF, answer=FOLLOWED, otherwise=PLAIN)
    result, requests = run(api, claude_request(claude, "please shout a greeting to the team"),
                           "claude_activation.jsonl")

    assert (result.outcome, result.output) == ("completed", "HELLO TEAM!"), result.error
    assert result.activated_skills == ("shout",)
    assert calls(result) == [("shout", "Skill", "loaded")]
    assert result.details["denied_skills"] == [] and result.details["permission_denials"] == []
    # One request chooses the skill, the next carries "Launching skill: shout" and the body, and is answered.
    assert [r.path for r in requests] == ["/v1/messages"] * 2 and api.count() == 2
    assert {"shout", "pdf", "deploy"} <= set(listed_skills(requests[0]))
    assert listed_skills(requests[0])["shout"].startswith(SKILL_DESC_MARK)
    assert not requests[0].contains(SKILL_BODY_MARK)
    assert requests[1].tool_results()[0].startswith("Launching skill: shout") and requests[1].contains(SKILL_BODY_MARK)
    assert_offline(api, proxy)


def test_claude_other_query_does_not_activate(api: FakeAPI, proxy: RecordingProxy, claude: Trials) -> None:
    api.script = FakeAPI.activation(SHOUT, PDF, answer=FOLLOWED, otherwise=PLAIN)
    result, requests = run(api, claude_request(claude, "say hello to the team"), "claude_no_activation.jsonl")

    assert (result.outcome, result.output) == ("completed", "Hello, team."), result.error
    assert result.activated_skills == ()
    assert result.details["skill_calls"] == [] and result.details["denied_skills"] == []
    assert len(requests) == 1 and api.count("/v1/messages") == 1
    assert "shout" in listed_skills(requests[0])  # offered, not chosen
    assert_offline(api, proxy)


def test_claude_distractor_activates_only_itself(api: FakeAPI, proxy: RecordingProxy, claude: Trials) -> None:
    api.script = FakeAPI.activation(SHOUT, PDF, answer=FOLLOWED, otherwise=PLAIN)
    result, requests = run(api, claude_request(claude, "fill in the pdf form for me"))

    assert result.outcome == "completed", result.error
    assert result.activated_skills == ("pdf",)
    assert len(requests) == 2
    assert_offline(api, proxy)


def test_claude_read_of_skill_md_activates(api: FakeAPI, proxy: RecordingProxy, claude: Trials) -> None:
    api.script = FakeAPI.activation(replace(SHOUT, via="read"), answer=FOLLOWED, otherwise=PLAIN)
    request = claude_request(claude, "shout at the team")
    result, requests = run(api, request, "claude_read_activation.jsonl")

    assert (result.outcome, result.output) == ("completed", "HELLO TEAM!"), result.error
    assert result.activated_skills == ("shout",)
    assert calls(result) == [("shout", "Read", "loaded")]
    assert len(requests) == 2 and SKILL_BODY_MARK in requests[1].tool_results()[0]
    assert_offline(api, proxy)


def test_claude_denied_skill_is_not_an_activation(api: FakeAPI, proxy: RecordingProxy, claude: Trials) -> None:
    """In -p, a skill whose frontmatter has `allowed-tools` is denied without `--allowedTools Skill`: the model
    chose it, the CLI refused, and the run says so; with `allowed_tools: [Skill]` the same query loads it."""
    skill_md = claude.root / "project" / "skills" / "shout" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("description:", "allowed-tools: Bash\ndescription:", 1))
    api.script = FakeAPI.activation(SHOUT, answer=FOLLOWED, otherwise=PLAIN)
    denied, denied_requests = run(api, claude_request(claude, "shout hello"), "claude_denied.jsonl")
    allowed, allowed_requests = run(api, claude_request(claude, "shout hello",
                                                        agent_extra={"allowed_tools": ["Skill"]}))

    assert denied.outcome == "completed", denied.error
    assert denied.activated_skills == ()
    assert calls(denied) == [("shout", "Skill", "denied")]
    assert denied.details["denied_skills"] == ["shout"]
    assert [d["tool_name"] for d in denied.details["permission_denials"]] == ["Skill"]
    assert len(denied_requests) == 2 and not denied_requests[1].contains(SKILL_BODY_MARK)
    assert "allow rule Skill(shout)" in denied_requests[1].tool_results()[0]

    assert allowed.activated_skills == ("shout",), allowed.error
    assert calls(allowed) == [("shout", "Skill", "loaded")] and allowed.details["denied_skills"] == []
    assert len(allowed_requests) == 2 and allowed_requests[1].contains(SKILL_BODY_MARK)
    assert api.count() == 4
    assert_offline(api, proxy)


def test_claude_unknown_skill_call_fails(api: FakeAPI, proxy: RecordingProxy, claude: Trials) -> None:
    """A Skill call naming a skill the CLI does not have gets an error result: neither activated nor denied."""
    api.script = FakeAPI.activation(Activate(skill="nosuch", when="shout"), answer=FOLLOWED, otherwise=PLAIN,
                                    listed_only=False)
    result, requests = run(api, claude_request(claude, "shout hello"), "claude_unknown_skill.jsonl")

    assert result.outcome == "completed", result.error
    assert result.activated_skills == ()
    assert calls(result) == [("nosuch", "Skill", "failed")] and result.details["denied_skills"] == []
    assert len(requests) == 2 and "Unknown skill: nosuch" in requests[1].tool_results()[0]
    assert_offline(api, proxy)


def test_claude_slash_prompt_needs_no_tool_call(api: FakeAPI, proxy: RecordingProxy, claude: Trials) -> None:
    """`/shout …` is expanded by the CLI before the first request: the rule answers at once, and the prompt rule
    of the agent counts the activation (the stream has no Skill call)."""
    api.script = FakeAPI.activation(SHOUT, answer=FOLLOWED, otherwise=PLAIN)
    result, requests = run(api, claude_request(claude, "/shout hello team"))

    assert (result.outcome, result.output) == ("completed", "HELLO TEAM!"), result.error
    assert result.activated_skills == ("shout",) and result.details["skill_calls"] == []
    assert len(requests) == 1 and requests[0].contains(SKILL_BODY_MARK)
    assert_offline(api, proxy)


# -- codex --------------------------------------------------------------------------------------------------------


@pytest.fixture
def codex(trials: Trials) -> Trials:
    require_cli("codex")
    return trials


def codex_request(trials: Trials, prompt: str) -> TrialRequest:
    request = trials.request(kind="codex", model=CODEX_MODEL, prompt=prompt)
    install_distractors(request, ".agents/skills")
    return request


def test_codex_matching_query_reads_the_skill(api: FakeAPI, proxy: RecordingProxy, codex: Trials) -> None:
    api.script = FakeAPI.activation(SHOUT, PDF, answer=FOLLOWED, otherwise=PLAIN)
    request = codex_request(codex, "please shout a greeting to the team")
    result, requests = run(api, request, "codex_activation.jsonl")

    assert (result.outcome, result.output) == ("completed", "HELLO TEAM!"), result.error
    assert result.activated_skills == ("shout",)
    assert calls(result) == [("shout", "shell", "loaded")]
    assert [r.path for r in requests] == ["/v1/responses"] * 2 and api.count() == 2
    listed = listed_skills(requests[0])
    assert listed["shout"] == os.path.join(request.workspace, ".agents", "skills", "shout", "SKILL.md")
    assert {"pdf", "deploy"} <= set(listed)
    assert requests[1].contains(SKILL_BODY_MARK)
    assert_offline(api, proxy)


def test_codex_other_query_does_not_activate(api: FakeAPI, proxy: RecordingProxy, codex: Trials) -> None:
    api.script = FakeAPI.activation(SHOUT, PDF, answer=FOLLOWED, otherwise=PLAIN)
    result, requests = run(api, codex_request(codex, "say hello to the team"), "codex_no_activation.jsonl")

    assert (result.outcome, result.output) == ("completed", "Hello, team."), result.error
    assert result.activated_skills == () and result.details["skill_calls"] == []
    assert len(requests) == 1 and api.count("/v1/responses") == 1
    assert_offline(api, proxy)


@pytest.mark.parametrize(("command", "expected"), [
    ("sed -n 1,200p {path}", ("shout",)),  # the absolute path Codex lists
    ("cd .agents/skills/shout && head -n 40 SKILL.md", ("shout",)),
    ("cat .agents/skills/shout/SKILL.md.bak", ()),
    ("ls -l .agents/skills/shout/SKILL.md", ()),
])
def test_codex_shell_reads_are_exact(api: FakeAPI, proxy: RecordingProxy, codex: Trials, command: str,
                                     expected: tuple[str, ...]) -> None:
    api.script = FakeAPI.activation(replace(SHOUT, command=command), answer=FOLLOWED, otherwise=PLAIN)
    result, requests = run(api, codex_request(codex, "shout hello"))

    assert result.outcome == "completed", result.error
    assert result.activated_skills == expected
    assert len(requests) == 2
    assert_offline(api, proxy)


def test_codex_failed_read_is_not_an_activation(api: FakeAPI, proxy: RecordingProxy, codex: Trials) -> None:
    """A read of a SKILL.md that is not there exits 1: the command is seen, the skill is not activated."""
    api.script = FakeAPI.activation(Activate(skill="ghost", when="shout"), answer=FOLLOWED, otherwise=PLAIN,
                                    listed_only=False)
    result, requests = run(api, codex_request(codex, "shout hello"), "codex_read_failed.jsonl")

    assert result.outcome == "completed", result.error
    assert result.activated_skills == ()
    assert calls(result) == [("ghost", "shell", "failed")]
    assert len(requests) == 2
    assert_offline(api, proxy)


def test_codex_dollar_mention_loads_without_a_command(api: FakeAPI, proxy: RecordingProxy, codex: Trials) -> None:
    """`$shout` makes Codex put the skill's body into the first request itself: no command, no event; the
    rule sees the body there and answers at once."""
    api.script = FakeAPI.activation(SHOUT, answer=FOLLOWED, otherwise=PLAIN)
    result, requests = run(api, codex_request(codex, "use $shout to greet the team"), "codex_mention.jsonl")

    assert (result.outcome, result.output) == ("completed", "HELLO TEAM!"), result.error
    assert result.activated_skills == ("shout",) and result.details["skill_calls"] == []
    assert len(requests) == 1 and requests[0].contains(SKILL_BODY_MARK)
    assert_offline(api, proxy)
