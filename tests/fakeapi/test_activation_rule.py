"""The fake API's activation rule (FakeAPI.activation) over requests shaped as claude 2.1.328 and codex 0.169.0
send them (tests/e2e/test_activation.py drives the real CLIs with it)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.fakeapi import Activate, FakeAPI, Recorded, Reply
from tests.fakeapi.activation import latest_query, listed_skills, loaded_skills

CWD = "/ws"
LISTING = ("<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n"
           "- shout: Answers every request by shouting. Use it when asked to shout.\n"
           "- pdf: Fills PDF forms.\n</system-reminder>")
ENVIRONMENT = f"<system-reminder>\n# Environment\n - Primary working directory: {CWD}\n</system-reminder>"
CLAUDE_TOOLS = [{"name": "Read"}, {"name": "Skill"}, {"name": "Bash"}]
SKILLS_INSTRUCTIONS = ("<skills_instructions>\n## Skills\n### Skill roots\n- `r0` = `/h/.codex/skills/.system`\n"
                       "- `r1` = `/ws/.agents/skills`\n### Available skills\n"
                       "- imagegen: Generate images. (file: r0/imagegen/SKILL.md)\n"
                       "- shout: Answers every request by shouting. (file: r1/shout/SKILL.md)\n</skills_instructions>")


def recorded(path: str, body: dict[str, Any]) -> Recorded:
    return Recorded(method="POST", path=path, query="", headers={}, body=json.dumps(body).encode(), json=body,
                    index=0)


def claude_request(query: str, *later: dict[str, Any], tools: list[dict[str, Any]] | None = None,
                   listing: str = LISTING) -> Recorded:
    first = {"role": "user", "content": [{"type": "text", "text": ENVIRONMENT}, {"type": "text", "text": listing},
                                         {"type": "text", "text": query}]}
    return recorded("/v1/messages", {"model": "m", "tools": CLAUDE_TOOLS if tools is None else tools,
                                     "messages": [first, *later]})


def codex_request(query: str, *later: dict[str, Any]) -> Recorded:
    items = [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": SKILLS_INSTRUCTIONS}]},
             {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                              "text": "<environment_context>\n  <cwd>/ws</cwd>"}]},
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": query}]}, *later]
    return recorded("/v1/responses", {"model": "m", "tools": [{"type": "function", "name": "exec_command"}],
                                      "input": items})


AFTER_CALL = ({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Skill",
                                                 "input": {"skill": "shout"}}]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                            "content": "Launching skill: shout"},
                                           {"type": "text", "text": "Base directory for this skill: /ws/.claude/"
                                                                    "skills/shout\n\n# Shout\n"}]})
RULES = FakeAPI.activation(Activate(skill="shout", when=r"\bshout"), Activate(skill="pdf", when=r"\bpdf\b"),
                           answer=Reply.text("LOUD"), otherwise=Reply.text("quiet"))


def tool_call(reply: Reply | None) -> tuple[str, dict[str, Any]] | None:
    assert reply is not None
    calls = [(b.name, dict(b.input)) for b in reply.blocks if b.type == "tool_use"]
    return calls[0] if calls else None


# -- Claude Code (/v1/messages) ------------------------------------------------------------------------------------


def test_matching_query_calls_the_skill_tool_then_answers() -> None:
    assert tool_call(RULES(claude_request("please shout hello"))) == ("Skill", {"skill": "shout"})
    assert tool_call(RULES(claude_request("fill the pdf"))) == ("Skill", {"skill": "pdf"})
    reply = RULES(claude_request("please shout hello", *AFTER_CALL))
    assert reply is not None and reply.all_text == "LOUD" and not reply.calls_tool


def test_the_listing_and_reminders_are_not_the_query() -> None:
    """The skills listing says "shout" too; only what the user typed is matched."""
    request = claude_request("say hello")
    assert latest_query(request) == ("say hello", False)
    reply = RULES(request)
    assert reply is not None and reply.all_text == "quiet"


def test_a_skill_must_be_listed_and_the_tool_offered() -> None:
    unlisted = claude_request("shout", listing="<system-reminder>\nno skills\n</system-reminder>")
    assert tool_call(RULES(unlisted)) is None
    anyway = FakeAPI.activation(Activate(skill="shout", when="shout"), listed_only=False)
    assert tool_call(anyway(unlisted)) == ("Skill", {"skill": "shout"})
    assert tool_call(RULES(claude_request("shout", tools=[{"name": "Bash"}]))) is None
    assert tool_call(RULES(claude_request("shout", tools=[]))) is None  # a side request without tools


def test_read_variant_opens_the_skill_md_in_the_working_directory() -> None:
    script = FakeAPI.activation(Activate(skill="shout", when="shout", via="read"))
    assert tool_call(script(claude_request("shout"))) == ("Read", {"file_path": "/ws/.claude/skills/shout/SKILL.md"})
    assert tool_call(script(claude_request("shout", tools=[{"name": "Skill"}]))) is None


def test_args_and_a_script_as_answer() -> None:
    seen: list[int] = []

    def answer(request: Recorded) -> Reply:
        seen.append(request.turn)
        return Reply.text("done")

    script = FakeAPI.activation(Activate(skill="shout", when="shout", args="loudly"), answer=answer)
    assert tool_call(script(claude_request("shout"))) == ("Skill", {"skill": "shout", "args": "loudly"})
    assert script(claude_request("shout", *AFTER_CALL)) == Reply.text("done") and seen == [1]


def test_a_slash_command_already_loaded_is_answered_at_once() -> None:
    expanded = ("<command-message>shout</command-message>\n<command-name>/shout</command-name>\n"
                "<command-args>hello</command-args>\n")
    request = claude_request(expanded, tools=CLAUDE_TOOLS)
    body = {"type": "text", "text": "Base directory for this skill: /ws/.claude/skills/shout\n\n# Shout\n"}
    request.json["messages"][0]["content"].append(body)  # type: ignore[index]
    assert loaded_skills(request) == {"shout"}
    reply = RULES(request)
    assert reply is not None and reply.all_text == "LOUD"


def test_a_system_role_listing_is_read_too() -> None:
    """design.md describes the listing as a `role: "system"` message after the first user message."""
    request = claude_request("shout", listing="<system-reminder>x</system-reminder>")
    request.json["messages"].append({"role": "system", "content": LISTING})  # type: ignore[index]
    request.json["messages"].append({"role": "user", "content": "shout please"})  # type: ignore[index]
    assert "shout" in listed_skills(request)
    assert latest_query(request) == ("shout please", False)
    assert tool_call(RULES(request)) == ("Skill", {"skill": "shout"})


def test_bad_rules_are_refused() -> None:
    with pytest.raises(ValueError, match="via 'bash'"):
        Activate(skill="x", when="x", via="bash")
    with pytest.raises(re.error, match=r"missing \)"):
        Activate(skill="x", when="(x")


# -- Codex (/v1/responses) -----------------------------------------------------------------------------------------


def test_codex_listing_expands_the_roots() -> None:
    assert listed_skills(codex_request("hi")) == {"imagegen": "/h/.codex/skills/.system/imagegen/SKILL.md",
                                                  "shout": "/ws/.agents/skills/shout/SKILL.md"}


def test_codex_matching_query_runs_cat_then_answers() -> None:
    assert tool_call(RULES(codex_request("shout it"))) == ("exec_command",
                                                           {"cmd": "cat .agents/skills/shout/SKILL.md"})
    script = FakeAPI.activation(Activate(skill="imagegen", when="image", command="sed -n 1,200p {path}"))
    assert tool_call(script(codex_request("an image"))) == (
        "exec_command", {"cmd": "sed -n 1,200p /h/.codex/skills/.system/imagegen/SKILL.md"})
    assert tool_call(RULES(codex_request("fill the pdf"))) is None  # pdf is not listed here
    call = {"type": "function_call", "name": "exec_command", "call_id": "c1", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "---\nname: shout\n"}
    reply = RULES(codex_request("shout it", call, output))
    assert reply is not None and reply.all_text == "LOUD"


def test_codex_context_and_injected_skill_are_not_the_query() -> None:
    text = "<skill>\n<name>shout</name>\n<path>/ws/.agents/skills/shout/SKILL.md</path>\n</skill>"
    injected = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    request = codex_request("use $shout", injected)
    assert latest_query(request) == ("use $shout", False) and loaded_skills(request) == {"shout"}
    reply = RULES(request)
    assert reply is not None and reply.all_text == "LOUD"  # Codex already put the body in: no command


# -- through the server ----------------------------------------------------------------------------------------------


def test_the_server_counts_and_renders_the_rule(fake_api: FakeAPI) -> None:
    """Through HTTP with the anthropic SDK (strict validation): a Skill call, then the answer; two requests."""
    import anthropic  # here, not at the top: a worker that only collects this file need not import the SDK

    fake_api.script = RULES
    first: list[Any] = (claude_request("shout hello").json or {})["messages"]
    tools: Any = [{"name": t["name"], "input_schema": {"type": "object"}} for t in CLAUDE_TOOLS]
    with anthropic.Anthropic(base_url=fake_api.url, api_key="k", max_retries=0, timeout=10,
                             _strict_response_validation=True) as client:
        message = client.messages.create(model="m", max_tokens=10, tools=tools, messages=first)
        [call] = message.content
        assert call.type == "tool_use" and (call.name, call.input) == ("Skill", {"skill": "shout"})
        result = [{"type": "tool_result", "tool_use_id": call.id, "content": "Launching skill: shout"}]
        messages: Any = [*first, {"role": "assistant", "content": [call.model_dump()]},
                         {"role": "user", "content": result}]
        follow = client.messages.create(model="m", max_tokens=10, tools=tools, messages=messages)
        assert [(b.type, getattr(b, "text", None)) for b in follow.content] == [("text", "LOUD")]
    assert fake_api.count("/v1/messages") == 2 and fake_api.unexpected == [] and fake_api.errors == []
