"""Validation (the pre-commit hook, the editor's save hook) works without the provider SDKs and never imports
them, nor doit; an API agent that needs a missing SDK says which extra to install; the API judges need none."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .project import Project

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("anthropic", "openai", "httpx", "doit")
# Runs skillmake's CLI as an install without the SDKs would: importing either one fails as a missing module
# does. Prints the heavy modules that were imported anyway, as JSON, on the last line of stderr.
_BLOCKED = f"""\
import json, sys
HEAVY = {HEAVY!r}
for name in ("anthropic", "openai"):
    sys.modules[name] = None  # `import anthropic` now raises ImportError, as on an install without it
from skillmake.commands.cli import main
try:
    code = main(sys.argv[1:])
finally:
    heavy = sorted({{m.split(".")[0] for m in sys.modules if sys.modules[m] is not None}} & set(HEAVY))
    sys.stderr.write("\\n" + json.dumps(heavy) + "\\n")
sys.exit(code)
"""


def blocked(cwd: Path, *args: str,
            env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    done = subprocess.run([sys.executable, "-c", _BLOCKED, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env)
    return done, json.loads(done.stderr.strip().splitlines()[-1])


def valid_corpus() -> list[str]:
    specs = sorted(p for p in (REPO / "tests" / "data" / "valid").iterdir() if ".eval." in p.name)
    return [str(p) for p in specs]


def test_validating_files_imports_no_sdk_and_no_doit() -> None:
    files = valid_corpus()
    assert len(files) >= 3
    done, heavy = blocked(REPO / "tests" / "data" / "valid", "validate", *files)
    assert done.returncode == 0, done.stderr
    assert heavy == []


def test_validating_a_whole_project_imports_no_sdk_and_no_doit(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(REPO / "examples", tmp_path / "examples")
    done, heavy = blocked(tmp_path / "examples", "validate")
    assert done.returncode == 0, done.stderr
    assert "3 spec(s) valid" in done.stdout
    assert heavy == []


def test_the_pre_commit_hooks_entry_is_that_validate(tmp_path: Path) -> None:
    import yaml

    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    entry = next(h for h in hooks if h["id"] == "skillmake-validate")["entry"].split()
    assert entry[:2] == ["skillmake", "validate"]
    import shutil

    shutil.copytree(REPO / "examples", tmp_path / "examples")
    done, heavy = blocked(tmp_path / "examples", *entry[1:], "shout.eval.yaml")
    assert done.returncode == 0, done.stderr
    assert heavy == []


@pytest.mark.parametrize("args", [["init"], ["schema"], ["schema", "--path"]], ids=" ".join)
def test_init_and_schema_need_no_sdk(tmp_path: Path, args: list[str]) -> None:
    done, heavy = blocked(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert heavy == []


def test_a_missing_sdk_is_named_with_its_extra() -> None:
    code = ("import sys; sys.modules['openai'] = None\n"
            "from skillmake.run import sdk\n"
            "assert not sdk.available('openai')\n"
            "sdk.load('openai', what='the openai judge')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "MissingSDK: the openai judge needs the openai Python SDK, which is not installed" in done.stderr
    assert "pip install 'skillmake[api]'" in done.stderr


def test_an_api_agent_without_its_sdk_fails_its_trial_with_the_fix(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "api", {
        "skills/s/SKILL.md": "body\n",
        "s.eval.yaml": "skill: skills/s\nagent: {kind: anthropic}\n"
                       "cases: [{id: a, prompt: hi, checks: [{type: min_length, length: 1}]}]\n"})
    done = subprocess.run([sys.executable, "-c", _BLOCKED], cwd=p.root, capture_output=True, text=True, timeout=120,
                          env={**_env(), "ANTHROPIC_API_KEY": "sk-ant-x", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    assert "pip install 'skillmake[api]'" in done.stdout + done.stderr


def test_an_api_judge_needs_no_sdk_and_imports_none(tmp_path: Path) -> None:
    """The anthropic and openai judges call the API over the standard library (run/wire.py): a run they judge works
    on an install without the SDKs, and imports neither them nor httpx."""
    from tests.fakeapi import FakeAPI, Reply

    p = Project.empty(tmp_path / "judge", {
        "skills/s/SKILL.md": "body\n",
        "s.eval.yaml": "skill: skills/s\nagent: {kind: command, command: [cat]}\njudge: {provider: anthropic}\n"
                       "cases: [{id: a, prompt: hi, rubric: it says hi}]\n",
        "o.eval.yaml": "skill: skills/s\nagent: {kind: command, command: [cat]}\njudge: {provider: openai}\n"
                       "cases: [{id: a, prompt: hi, rubric: it says hi}]\n"})
    with FakeAPI() as api:
        verdict = {"score": 5, "reason": "it says hi"}
        api.script = lambda request: (Reply.tool_use("record_verdict", verdict) if request.path == "/v1/messages"
                                      else Reply.text(json.dumps(verdict)))
        done, heavy = blocked(p.root, env={**_env(), **api.env()})
        assert (api.count("/v1/messages"), api.count("/v1/chat/completions")) == (1, 1)
    assert done.returncode == 0, done.stdout + done.stderr
    assert heavy == ["doit"]  # a run imports doit; no SDK, no httpx


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)
