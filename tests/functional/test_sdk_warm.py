"""No SDK import on the critical path: the judges need none (they call the API over the standard library,
run/wire.py), so a run of command or CLI agents imports no SDK, whoever judges it; a run of the anthropic agent
starts importing `anthropic` in its own thread of the run's process when its first trial starts (sdk.warm).
Through the real CLI against the loopback fake API; the import is seen by a finder first on sys.meta_path of the
run's process."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeapi import FakeAPI, Reply
from tests.functional.project import Project

REPO = Path(__file__).resolve().parents[2]
AGENT = "import sys\nsys.stdin.read()\nprint('hello there')\n"
JUDGED = '''\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
judge: {provider: anthropic, model: claude-sonnet-4-6}
trials: 2
cases:
  - id: greet
    prompt: say hello
    rubric: Is the greeting friendly?
'''
API_AGENT = '''\
skill: skills/s
agent: {kind: anthropic, model: claude-haiku-4-5}
trials: 2
cases:
  - id: greet
    prompt: say hello
    checks: [{type: contains, needle: hello}]
'''
UNJUDGED = '''\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
trials: 2
cases:
  - id: greet
    prompt: say hello
    checks: [{type: contains, needle: hello}]
'''
# The run, in a process that logs (as JSON lines) each SDK import's start and each grade's start, with the thread.
WRAPPER = '''\
import importlib.util, json, sys, threading, time
log = open(sys.argv[1], "a", buffering=1)
class Seen:  # asked first for every module not imported yet (finds none itself): an import, or find_spec's look
    @staticmethod
    def find_spec(name, path=None, target=None):
        caller = sys._getframe(2).f_code.co_filename
        looking = caller in ("<frozen importlib.util>", importlib.util.__file__)  # sdk.available: no import
        if name in ("anthropic", "openai") and not looking:
            seen = {"import": name, "t": time.monotonic(), "thread": threading.current_thread().name}
            log.write(json.dumps(seen) + "\\n")
        return None
sys.meta_path.insert(0, Seen)
import skillmake.run.grade as grading
execute = grading.execute
def logged(*args, **kwargs):
    log.write(json.dumps({"grade": True, "t": time.monotonic(), "thread": threading.current_thread().name}) + "\\n")
    return execute(*args, **kwargs)
grading.execute = logged
from skillmake.commands.cli import main
sys.exit(main(sys.argv[2:]))
'''


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        fake.default = Reply.tool_use("record_verdict", {"score": 5, "reason": "friendly"})
        yield fake


def run(tmp_path: Path, spec: str, api: FakeAPI, *args: str) -> list[dict[str, object]]:
    project = Project.empty(tmp_path / "p", {
        "skills/s/SKILL.md": "---\nname: s\ndescription: greets\n---\nSay hello.\n",
        "agent.py": AGENT, "s.eval.yaml": spec, "wrapper.py": WRAPPER})
    log = tmp_path / "events.jsonl"
    done = project.run(cmd=[sys.executable, "wrapper.py", str(log), *args],
                       env={**api.anthropic_env(), "PYTHONPATH": str(REPO)}, check_views=False)
    assert done.code == 0, done.out + done.err
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.parametrize("jobs", [[], ["-j", "2"]])
def test_a_run_the_anthropic_judge_grades_imports_no_sdk(tmp_path: Path, api: FakeAPI, jobs: list[str]) -> None:
    events = run(tmp_path, JUDGED, api, *jobs)
    assert len([e for e in events if "grade" in e]) == 2 and api.count("/v1/messages") >= 1
    assert [e for e in events if "import" in e] == []


def test_an_api_agents_run_imports_its_sdk_in_its_own_thread_before_the_first_grade(tmp_path: Path,
                                                                                     api: FakeAPI) -> None:
    api.default = Reply.text("hello there")
    events = run(tmp_path, API_AGENT, api)
    imports = [e for e in events if "import" in e]
    grades = [e for e in events if "grade" in e]
    assert len(grades) == 2 and api.count("/v1/messages") == 2
    assert [(e["import"], e["thread"]) for e in imports] == [("anthropic", "skillmake: import anthropic")]
    assert imports[0]["t"] < min(float(str(g["t"])) for g in grades)  # type: ignore[operator]


def test_a_run_that_needs_no_sdk_never_imports_one(tmp_path: Path, api: FakeAPI) -> None:
    events = run(tmp_path, UNJUDGED, api)
    assert [e for e in events if "grade" in e] != []
    assert [e for e in events if "import" in e] == []
    assert api.count() == 0


def test_a_run_with_nothing_stale_imports_no_sdk(tmp_path: Path, api: FakeAPI) -> None:
    api.default = Reply.text("hello there")
    first = run(tmp_path, API_AGENT, api)
    assert any("import" in e for e in first)
    (tmp_path / "events.jsonl").unlink()
    again = run(tmp_path, API_AGENT, api)
    assert [e for e in again if "import" in e] == []
