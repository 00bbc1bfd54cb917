"""The anthropic agent marks its system prompt (the skill) cacheable; the cache tokens the API reports are recorded
and priced at their own rates, so the cost line shows the saving. Through the real CLI against the loopback fake."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.fakeapi import FakeAPI, Reply
from tests.functional.project import Project

SPEC = '''\
skill: skills/s
agent: {kind: anthropic, model: claude-sonnet-4-6}
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: hi}]
'''
# Long enough to be cached: the fake, as the real API, caches no prefix under 1,024 tokens on claude-sonnet-4-6.
BODY = " ".join(["Say hi, always, to everyone."] * 160)
GUIDANCE = " ".join(["A friendly greeting is warm and direct, with no sarcasm or filler."] * 70)


def test_the_skill_is_sent_cacheable_and_cache_reads_are_priced_apart(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "p", {"skills/s/SKILL.md": f"---\nname: s\ndescription: says hi\n---\n{BODY}\n",
                                             "s.eval.yaml": SPEC})
    with FakeAPI() as api:
        # 100 fresh input tokens and 100,000 read from the cache: $3/M and $0.30/M on claude-sonnet-4-6.
        api.default = Reply.text("hi", usage={"input_tokens": 100, "cache_read_input_tokens": 100_000,
                                              "output_tokens": 0})
        done = project.run(env=api.anthropic_env())
        assert done.code == 0, done.out + done.err
        (request,) = api.requests
    assert request.json is not None
    assert request.json["system"] == [{"type": "text", "text": BODY + "\n", "cache_control": {"type": "ephemeral"}}]
    m = re.search(r"spent [\d,]+ tokens \$([\d.]+)", done.out)
    assert m is not None and float(m.group(1)) == 0.0303  # uncached, the same tokens would cost $0.3003
    record = json.loads((project.root / ".skillmake/runs/s/one/with_skill/trial-0/trial.json").read_text())
    assert (record["usage"]["cache_read_tokens"], record["usage"]["cost_usd"]) == (100_000, 0.0303)


def test_the_viewer_shows_a_cacheable_system_prompt_as_its_text() -> None:
    import orjson

    from skillmake.view import transcript

    api = orjson.dumps({"request": {"system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
                                    "messages": [{"role": "user", "content": "q"}]},
                        "response": {"content": [{"type": "text", "text": "a"}]}})
    assert [x.text for x in transcript.entries(api)] == ["sys", "q", "a"]


def test_the_judges_fixed_prefix_is_sent_cacheable_before_the_material(tmp_path: Path) -> None:
    project = Project.empty(tmp_path / "p", {
        "agent.py": "print('hello there')\n",
        "skills/s/SKILL.md": "---\nname: s\ndescription: says hi\n---\nSay hi.\n",
        "s.eval.yaml": "skill: skills/s\nagent: {kind: command, command: [python3, agent.py]}\n"
                       "judge: {provider: anthropic, model: claude-sonnet-4-6}\n"
                       f"cases:\n  - id: one\n    prompt: say one\n    rubric: Is the greeting friendly? {GUIDANCE}\n"})
    with FakeAPI() as api:
        api.default = Reply.tool_use("record_verdict", {"score": 5, "reason": "friendly"},
                                     usage={"input_tokens": 100, "cache_read_input_tokens": 100_000,
                                            "output_tokens": 0})
        done = project.run(env=api.anthropic_env())
        assert done.code == 0, done.out + done.err
        (request,) = api.requests
    assert request.json is not None
    fixed, judged = request.json["messages"][0]["content"]
    assert fixed["cache_control"] == {"type": "ephemeral"} and "Is the greeting friendly?" in fixed["text"]
    assert "hello there" in judged["text"] and "hello there" not in fixed["text"] and "cache_control" not in judged
    grade = json.loads((project.root / ".skillmake/runs/s/one/with_skill/trial-0/grade.json").read_text())
    assert (grade["usage"]["cache_read_tokens"], grade["usage"]["cost_usd"]) == (100_000, 0.0303)
    m = re.search(r"spent [\d,]+ tokens \$([\d.]+)", done.out)
    assert m is not None and float(m.group(1)) == 0.0303
