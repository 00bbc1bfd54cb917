"""Skill activation read from recorded transcripts (tests/data/streams, recorded by tests/e2e/test_activation.py
from claude 2.1.328 and codex 0.169.0 against the fake API's activation rule), and the field-scoped rules that
decide which tool calls and shell commands load a skill (docs/activation.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from skillmake.run.agents import claude_code, claude_stream, codex
from skillmake.run.agents.claude_code import ToolUse

REPO = Path(__file__).resolve().parents[3]
STREAMS = REPO / "tests" / "data" / "streams"


def lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (STREAMS / name).read_text().splitlines() if line.strip()]


def joined(events: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


def claude(name: str) -> claude_code.ClaudeStream:
    return claude_code.parse_stream((STREAMS / name).read_bytes())


def fates(stream: claude_code.ClaudeStream) -> list[tuple[str, str, str]]:
    return [(c.name, c.via, c.status) for c in stream.skill_calls]


def record_with(details: dict[str, Any]) -> list[str]:
    """The schema errors of the good example trial record carrying `details`."""
    schema = json.loads((REPO / "schemas" / "trial-record.schema.json").read_text())
    record = json.loads((REPO / "tests" / "data" / "schemas" / "trial-record" / "good" / "example.json").read_text())
    return [e.message for e in Draft7Validator(schema).iter_errors({**record, "details": details})]


# -- claude-code: recorded runs -----------------------------------------------------------------------------------


def test_claude_skill_call_with_its_result_is_an_activation() -> None:
    stream = claude("claude_activation.jsonl")
    assert fates(stream) == [("shout", "Skill", "loaded")]
    assert stream.skills == ("shout",) and stream.denied_skills == ()
    assert claude_code.activated_skills(stream, "please shout a greeting to the team", "shout") == ("shout",)
    details = claude_code.details_of(stream)
    assert details["skill_calls"] == [{"name": "shout", "via": "Skill", "id": stream.skill_calls[0].id,
                                       "status": "loaded"}]
    assert details["denied_skills"] == [] and record_with(details) == []
    assert {"shout", "pdf", "deploy"} <= set((stream.init or {})["skills"])  # the distractors were offered too


def test_claude_no_skill_call_is_no_activation() -> None:
    stream = claude("claude_no_activation.jsonl")
    assert stream.skill_calls == () and stream.skills == ()
    assert claude_code.activated_skills(stream, "say hello to the team", "shout") == ()
    assert claude_code.details_of(stream)["skill_calls"] == []


def test_claude_denied_skill_call_is_recorded_not_activated() -> None:
    stream = claude("claude_denied.jsonl")
    assert fates(stream) == [("shout", "Skill", "denied")]
    assert stream.skills == () and stream.denied_skills == ("shout",)
    assert claude_code.activated_skills(stream, "shout hello", "shout") == ()
    details = claude_code.details_of(stream)
    assert details["denied_skills"] == ["shout"] and [d["tool_name"] for d in details["permission_denials"]] == [
        "Skill"]
    assert record_with(details) == []


@pytest.mark.parametrize("keep", ["permission_denied", "tool_result_meta", "permission_denials"])
def test_claude_each_sign_of_a_denial_is_enough(keep: str) -> None:
    """The CLI says "denied" three ways (a system event, the tool result's meta, the result's list); any one
    of them makes the call a denial, and with none left it is an ordinary failed call (is_error)."""
    events = lines("claude_denied.jsonl")
    for event in events:
        if keep != "tool_result_meta":
            event.pop("tool_result_meta", None)
        if keep != "permission_denials" and event.get("type") == "result":
            event["permission_denials"] = []
    if keep != "permission_denied":
        events = [e for e in events if e.get("subtype") != "permission_denied"]
    assert fates(claude_code.parse_stream(joined(events))) == [("shout", "Skill", "denied")]
    for event in events:
        event.pop("tool_result_meta", None)
        if event.get("type") == "result":
            event["permission_denials"] = []
    bare = [e for e in events if e.get("subtype") != "permission_denied"]
    assert fates(claude_code.parse_stream(joined(bare))) == [("shout", "Skill", "failed")]


def test_claude_read_of_skill_md_is_an_activation() -> None:
    stream = claude("claude_read_activation.jsonl")
    assert fates(stream) == [("shout", "Read", "loaded")]
    assert claude_code.activated_skills(stream, "shout at the team", "shout") == ("shout",)


def test_claude_unknown_skill_is_a_failed_call() -> None:
    stream = claude("claude_unknown_skill.jsonl")
    assert fates(stream) == [("nosuch", "Skill", "failed")]
    assert stream.skills == () and stream.denied_skills == ()


def test_claude_run_killed_before_the_tool_result_still_counts() -> None:
    """The model chose the skill; the run ended (killed, timed out) before the CLI answered the call."""
    events = lines("claude_activation.jsonl")
    cut = next(i for i, e in enumerate(events) if e.get("type") == "assistant") + 1
    stream = claude_code.parse_stream(joined(events[:cut]))
    assert stream.result is None
    assert fates(stream) == [("shout", "Skill", "pending")]
    assert claude_code.activated_skills(stream, "shout", "shout") == ("shout",)


def test_claude_old_skill_stream_still_parses() -> None:
    stream = claude("claude_skill.jsonl")  # recorded before this rule: the same shape
    assert fates(stream) == [("shout", "Skill", "loaded")] and stream.skills == ("shout",)


def test_claude_a_denial_then_a_read_is_an_activation_not_a_denial() -> None:
    events = lines("claude_denied.jsonl")
    read = lines("claude_read_activation.jsonl")
    use = next(e for e in read if e.get("type") == "assistant")
    answer = next(e for e in read if e.get("type") == "user")
    result = events.pop()
    stream = claude_code.parse_stream(joined([*events, use, answer, result]))
    assert fates(stream) == [("shout", "Skill", "denied"), ("shout", "Read", "loaded")]
    assert stream.skills == ("shout",) and stream.denied_skills == ()


# -- claude-code: which calls load a skill --------------------------------------------------------------------------


@pytest.mark.parametrize(("tool_input", "expected"), [
    ({"skill": "shout"}, "shout"),
    ({"skill": "/shout"}, "shout"),
    ({"skill": " shout ", "args": "x"}, "shout"),
    ({"command": "/shout"}, "shout"),  # older CLIs; 2.1.328 refuses it (InputValidationError: a failed call)
    ({"skill": ""}, None),
    ({"skill": 3}, None),
    ({}, None),
])
def test_claude_skill_call_names(tool_input: dict[str, Any], expected: str | None) -> None:
    assert claude_stream.skill_called(ToolUse(name="Skill", input=tool_input)) == expected
    assert claude_stream.skill_called(ToolUse(name="Task", input=tool_input)) is None


@pytest.mark.parametrize(("path", "expected"), [
    ("/ws/.claude/skills/pdf/SKILL.md", "pdf"),
    ("/home/me/.claude/skills/pdf/SKILL.md", "pdf"),  # a user skill
    (".claude/skills/pdf/SKILL.md", "pdf"),
    ("C:\\ws\\.claude\\skills\\pdf\\SKILL.md", "pdf"),
    ("/ws/.claude/skills/pdf/../shout/SKILL.md", "shout"),
    ("/ws/report.pdf", None),  # skill-creator's example: a skill named pdf is not read by this
    ("/tmp/pdf/notes.txt", None),
    ("/ws/.claude/skills/pdf/reference.md", None),
    ("/ws/.claude/skills/pdf/SKILL.md.bak", None),
    ("/ws/.claude/skills/SKILL.md", None),
    ("/ws/claude/skills/pdf/SKILL.md", None),
    ("/ws/.agents/skills/pdf/SKILL.md", None),  # Codex's folder: Claude Code does not load it
    ("", None),
])
def test_claude_read_is_field_scoped(path: str, expected: str | None) -> None:
    assert claude_stream.skill_read(ToolUse(name="Read", input={"file_path": path})) == expected
    # Only the Read tool's file_path counts: not another tool, not another field.
    assert claude_stream.skill_read(ToolUse(name="Bash", input={"command": f"cat {path}"})) is None
    assert claude_stream.skill_read(ToolUse(name="Read", input={"pattern": path})) is None


# -- codex: recorded runs -----------------------------------------------------------------------------------------


def codex_events(name: str) -> codex.CodexEvents:
    return codex.parse_events((STREAMS / name).read_bytes())


def test_codex_shell_read_is_an_activation() -> None:
    events = codex_events("codex_activation.jsonl")
    assert codex.skill_calls(events) == [{"name": "shout", "via": "shell", "id": "item_1", "status": "loaded"}]
    assert codex.activated_skills(events, "please shout a greeting to the team", "shout") == ("shout",)
    assert record_with({"skill_calls": codex.skill_calls(events), "denied_skills": []}) == []


def test_codex_no_command_is_no_activation() -> None:
    events = codex_events("codex_no_activation.jsonl")
    assert codex.skill_calls(events) == [] and codex.activated_skills(events, "say hello", "shout") == ()


def test_codex_failed_read_is_not_an_activation() -> None:
    events = codex_events("codex_read_failed.jsonl")
    assert codex.skill_calls(events) == [{"name": "ghost", "via": "shell", "id": "item_1", "status": "failed"}]
    assert codex.activated_skills(events, "shout hello", "shout") == ()


def test_codex_mention_has_no_event() -> None:
    events = codex_events("codex_mention.jsonl")
    assert codex.skill_calls(events) == [] and [i["type"] for i in events.items] == ["error", "agent_message"]
    assert codex.activated_skills(events, "use $shout to greet the team", "shout") == ("shout",)
    assert codex.activated_skills(events, "use shout to greet the team", "shout") == ()


def test_codex_declined_command_is_a_denial() -> None:
    events = codex_events("codex_activation.jsonl")
    item = {**events.items[1], "status": "declined", "exit_code": None}
    declined = codex.CodexEvents(items=(item,))
    assert codex.skill_calls(declined)[0]["status"] == "denied"
    assert codex.activated_skills(declined, "shout", "shout") == ()


# -- codex: which commands read a skill -----------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "expected"), [
    ("/bin/bash -lc 'cat .agents/skills/shout/SKILL.md'", ["shout"]),
    ("/bin/bash -lc 'sed -n 1,200p /ws/.agents/skills/shout/SKILL.md'", ["shout"]),
    ("/bin/bash -lc \"cat '/ws/.agents/skills/shout/SKILL.md' | wc -l\"", ["shout"]),
    ("/bin/bash -lc 'head -n 50 ./.agents/skills/shout/SKILL.md && cat .agents/skills/pdf/SKILL.md'",
     ["shout", "pdf"]),
    ("/bin/bash -lc 'cat .agents/skills/shout/SKILL.md\ncat .agents/skills/pdf/SKILL.md'", ["shout", "pdf"]),
    ("/bin/bash -lc 'cd .agents/skills/shout && cat SKILL.md'", ["shout"]),
    ("/bin/bash -lc 'cat < .agents/skills/shout/SKILL.md'", ["shout"]),
    ("/bin/bash -lc 'LC_ALL=C grep -n description .agents/skills/shout/SKILL.md 2>/dev/null'", ["shout"]),
    ("/bin/bash -lc 'cat $CODEX_HOME/skills/.system/imagegen/SKILL.md'", ["imagegen"]),
    ("/bin/bash -lc 'cat /h/.codex/skills/custom/SKILL.md'", ["custom"]),
    ("/bin/bash -lc 'cat ~/.agents/skills/mine/SKILL.md'", ["mine"]),
    ("cat .agents/skills/shout/SKILL.md", ["shout"]),  # not wrapped in a shell
    # What the old regex over the whole command also counted:
    ("/bin/bash -lc 'ls -l .agents/skills/shout/SKILL.md'", []),
    ("/bin/bash -lc 'cat .agents/skills/shout/SKILL.md.bak'", []),
    ("/bin/bash -lc 'cat docs/report/SKILL.md'", []),
    ("/bin/bash -lc 'cat .agents/skills/shout/reference.md'", []),
    ("/bin/bash -lc 'cat x > .agents/skills/shout/SKILL.md'", []),  # written, not read
    ("/bin/bash -lc 'echo .agents/skills/shout/SKILL.md'", []),
    ("/bin/bash -lc 'cat report.pdf'", []),
    ("/bin/bash -lc 'cat .agents/skills/*/SKILL.md'", []),  # a glob: which skills is not in the command
    ("/bin/bash -lc 'cat .agents/skills/$name/SKILL.md'", []),
    ("/bin/bash -lc 'cat .agents/skills/shout/SKILL.md", []),  # an unbalanced quote: no script found
])
def test_codex_skill_reads_are_exact(command: str, expected: list[str]) -> None:
    assert codex.skill_reads(command) == expected


def test_codex_skill_reads_in_a_given_codex_home() -> None:
    assert codex.skill_reads("/bin/bash -lc 'cat /x/home/skills/mine/SKILL.md'", codex_home="/x/home") == ["mine"]
    assert codex.skill_reads("/bin/bash -lc 'cat /x/other/skills/mine/SKILL.md'", codex_home="/x/home") == []
    assert codex.skill_reads("/bin/bash -lc 'cat $CODEX_HOME/skills/mine/SKILL.md'", codex_home="/x/home") == [
        "mine"]


@pytest.mark.parametrize(("prompt", "expected"), [  # each as measured with codex 0.169.0 (docs/activation.md)
    ("use $shout.", ("shout",)),
    ("use `$shout`", ("shout",)),
    ("use $shout/", ("shout",)),
    ("cost $$shout", ("shout",)),
    ("x$shout", ("shout",)),
    ("use $shout-loud now", ()),
    ("use $shout_x", ()),
    ("use $shout:x", ()),
    ("use $shout1", ()),
    ("$SHOUT", ()),
    ("use ${shout}", ()),
])
def test_codex_mentions_as_codex_reads_them(prompt: str, expected: tuple[str, ...]) -> None:
    assert codex.activated_skills(codex.CodexEvents(), prompt, "shout") == expected


def test_codex_mention_of_another_installed_skill(tmp_path: Path) -> None:
    (tmp_path / "ws" / ".agents" / "skills" / "pdf").mkdir(parents=True)
    (tmp_path / "ws" / ".agents" / "skills" / "pdf" / "SKILL.md").write_text("---\nname: pdf\n---\n")
    (tmp_path / "home" / "skills" / ".system" / "imagegen").mkdir(parents=True)
    (tmp_path / "home" / "skills" / ".system" / "imagegen" / "SKILL.md").write_text("x")
    found = codex.activated_skills(codex.CodexEvents(), "$pdf then $imagegen then $ghost", "shout",
                                   workspace=str(tmp_path / "ws"), codex_home=str(tmp_path / "home"))
    assert found == ("pdf", "imagegen")
