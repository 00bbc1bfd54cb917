"""The codex judge provider with a stand-in `codex` (SKILLMAKE_CODEX): the command line, the hermetic CODEX_HOME,
the verdict read from the last agent message, failures as judge errors, preflight, and the grade key (a codex
judge's holds the CLI version; every other judge's key is what it was before codex could judge)."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from skillmake.run import grade
from skillmake.run.judges import judge_case, judge_key, judge_problems, resolve
from skillmake.spec.model import AgentConfig, Case, JudgeConfig, Skill, Spec
from tests.fakeapi.claude_cli import FakeClaude

CASE = Case(id="c1", index=0, prompt="Summarise.", rubric="Is it faithful?", expectations=("It is short.",))
KEY = "sk-codex-judge-secret-0123456789"


class FakeCodex:
    """A stand-in `codex` printing scripted `exec --json` events; it records argv, stdin, its environment and the
    files it was pointed at (the output schema, CODEX_HOME/config.toml)."""

    def __init__(self, folder: Path, *, version: str = "codex-cli 0.169.0") -> None:
        self.script_file = folder / "codex-script.json"
        self.log = folder / "codex-calls.jsonl"
        self.path = folder / "codex"
        self.path.write_text(f"""#!{sys.executable}
import json, os, sys
if sys.argv[1:] == ["--version"]:
    print({version!r}); sys.exit(0)
argv = sys.argv[1:]
schema = json.load(open(argv[argv.index("--output-schema") + 1]))
toml = os.path.join(os.environ.get("CODEX_HOME", "/nonexistent"), "config.toml")
config = open(toml).read() if os.path.exists(toml) else None
call = {{"argv": argv, "stdin": sys.stdin.read(), "env": dict(os.environ), "cwd": os.getcwd(),
         "cwd_files": os.listdir("."), "schema": schema, "config": config}}
with open({str(self.log)!r}, "a") as f:
    f.write(json.dumps(call) + "\\n")
script = json.load(open({str(self.script_file)!r}))
for line in script["events"]:
    print(json.dumps(line))
sys.stderr.write(script.get("stderr", ""))
sys.exit(script.get("code", 0))
""")
        self.path.chmod(0o755)

    def answer(self, message: str | dict[str, Any] | None, *, failed: str | None = None, code: int = 0,
               stderr: str = "") -> None:
        events: list[dict[str, Any]] = [{"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"}]
        if message is not None:
            text = message if isinstance(message, str) else json.dumps(message)
            events.append({"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": text}})
        if failed:
            events += [{"type": "error", "message": failed}, {"type": "turn.failed", "error": {"message": failed}}]
        else:
            events.append({"type": "turn.completed",
                           "usage": {"input_tokens": 1200, "cached_input_tokens": 200, "output_tokens": 80}})
        self.script_file.write_text(json.dumps({"events": events, "code": code, "stderr": stderr}))

    def calls(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []


def make_spec(**judge: Any) -> Spec:
    return Spec(name="demo", path="/p/demo.eval.yaml", relpath="demo.eval.yaml",
                skill=Skill(name="demo", path="/p/demo", kind="folder"), agent=AgentConfig(kind="command"),
                arms=(), cases=(CASE,), judge=JudgeConfig(**judge))


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (resolve.PROVIDER_ENV, "SKILLMAKE_JUDGE_MODEL", "SKILLMAKE_CODEX", "SKILLMAKE_CLAUDE",
                 "OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCodex:
    fake = FakeCodex(tmp_path)
    monkeypatch.setenv("SKILLMAKE_CODEX", str(fake.path))
    return fake


def verdicts(passed: bool) -> list[dict[str, Any]]:
    return [{"score": 5 if passed else 1, "reason": "faithful" if passed else "made up"},
            {"expectations": [{"id": "E1", "passed": passed, "evidence": "two lines"}]}]


def run_judges(codex: FakeCodex, replies: list[dict[str, Any]]) -> Any:
    """judge_case over CASE (a rubric, then expectations), each judge answered by the next reply."""
    outcomes = []
    for reply in replies:  # the stand-in answers every call alike: one call per judge, scripted in turn
        codex.answer(reply)
        outcomes.append(judge_case(make_spec(provider="codex", model="gpt-5.4-mini"),
                                   Case(**{**_fields(CASE), **_only(reply)}), output="Short text.", files={}))
    return outcomes


def _fields(case: Case) -> dict[str, Any]:
    return {name: getattr(case, name) for name in case.__dataclass_fields__}


def _only(reply: dict[str, Any]) -> dict[str, Any]:
    # one judge per call: a rubric reply goes to a rubric-only case, an expectations reply to an expectations one
    return {"expectations": ()} if "score" in reply else {"rubric": None}


def test_codex_judges_with_a_schema_constrained_reply(codex: FakeCodex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    rubric_out, expect_out = run_judges(codex, verdicts(True))
    assert rubric_out.error is None and expect_out.error is None, (rubric_out.error, expect_out.error)
    assert [e["passed"] for e in rubric_out.expectations] == [True]
    assert rubric_out.expectations[0]["score"] == 1.0
    assert [(e["id"], e["passed"], e["evidence"]) for e in expect_out.expectations] == [
        ("expectation-0", True, "two lines")]
    assert expect_out.usage.requests == 1 and expect_out.usage.input_tokens == 1000
    assert expect_out.usage.cache_read_tokens == 200 and expect_out.usage.output_tokens == 80
    call = codex.calls()[-1]
    argv = call["argv"]
    assert argv[:5] == ["exec", "--json", "--skip-git-repo-check", "--ephemeral", "--sandbox"]
    assert argv[argv.index("--sandbox") + 1] == "read-only" and argv[argv.index("--model") + 1] == "gpt-5.4-mini"
    assert argv[-1] == "-"
    assert call["schema"]["properties"].keys() >= {"expectations"}  # the judge's own verdict schema
    assert call["stdin"].startswith("<instructions>\n") and "It is short." in call["stdin"]
    assert "Short text." in call["stdin"]
    assert call["cwd_files"] == []  # an empty folder: nothing to read
    # Hermetic: its own CODEX_HOME, pointed at the resolved base URL, with the key only in the environment.
    config = tomllib.loads(call["config"])
    assert config["model_provider"] == "skillmake" and config["model"] == "gpt-5.4-mini"
    assert config["model_providers"]["skillmake"]["base_url"] == "http://127.0.0.1:9/v1"
    assert call["env"]["OPENAI_API_KEY"] == KEY and KEY not in call["config"]
    assert call["env"]["HOME"] != str(Path.home()) and call["env"]["CODEX_HOME"].startswith(call["env"]["HOME"])


def test_without_a_key_codex_judges_on_the_users_login(codex: FakeCodex, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "login"))
    [out, _] = run_judges(codex, verdicts(False))
    assert out.error is None and [e["passed"] for e in out.expectations] == [False]
    call = codex.calls()[0]
    assert call["env"]["CODEX_HOME"] == str(tmp_path / "login") and call["config"] is None
    assert "OPENAI_API_KEY" not in call["env"]


def test_a_failed_turn_is_a_judge_error_without_the_key(codex: FakeCodex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    codex.answer(None, failed=f"model gpt-9 is not supported (key {KEY})", code=1)
    out = judge_case(make_spec(provider="codex", model="gpt-9"), CASE, output="x", files={})
    assert out.error is not None and out.error.startswith("rubric judge (gpt-9): codex exec exited 1")
    assert "is not supported" in out.error and KEY not in out.error
    assert out.expectations == () and out.usage.requests == 1


def test_a_reply_that_is_no_json_is_a_judge_error(codex: FakeCodex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    codex.answer("I think it is fine.")
    out = judge_case(make_spec(provider="codex"), Case(id="c", index=0, prompt="p", rubric="r"), output="x", files={})
    assert out.error is not None and "gave no usable verdict" in out.error


def test_a_missing_cli_is_a_judge_error_without_a_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SKILLMAKE_CODEX", str(tmp_path / "no-codex"))
    out = judge_case(make_spec(provider="codex"), CASE, output="x", files={})
    assert out.error is not None and "the codex CLI was not found for the codex judge" in out.error
    assert "SKILLMAKE_CODEX" in out.error and out.usage.requests == 0


def test_preflight_names_the_missing_cli_and_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SKILLMAKE_CODEX", str(tmp_path / "no-codex"))
    env = {"HOME": str(tmp_path)}
    assert judge_problems([make_spec(provider="codex")], environ=env) == [
        "spec demo: the judge needs the codex CLI (judge provider codex, from judge.provider); install it (npm "
        "install -g @openai/codex, or scripts/setup.sh), set SKILLMAKE_CODEX to its path, or change judge.provider",
        "spec demo: the judge needs OPENAI_API_KEY (or CODEX_API_KEY) or a codex login (judge provider codex, from "
        "judge.provider); set one, run `codex login`, or change judge.provider"]
    fake = FakeCodex(tmp_path)
    monkeypatch.setenv("SKILLMAKE_CODEX", str(fake.path))
    assert judge_problems([make_spec(provider="codex")], environ={**env, "CODEX_API_KEY": "k"}) == []
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "auth.json").write_text("{}")  # a `codex login`
    assert judge_problems([make_spec(provider="codex")], environ=env) == []
    [line] = judge_problems([make_spec(provider="codex")], environ={**env, "OPENAI_BASE_URL": "localhost:1"})
    assert line.startswith("spec demo: OPENAI_BASE_URL='localhost:1' is not an http(s) URL")


def test_a_codex_grade_key_holds_provider_model_and_cli_version(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    keys = []
    for folder, version in (("old", "codex-cli 0.169.0"), ("new", "codex-cli 0.170.0")):
        (tmp_path / folder).mkdir()
        monkeypatch.setenv("SKILLMAKE_CODEX", str(FakeCodex(tmp_path / folder, version=version).path))
        keys.append(grade.judge_part(make_spec(provider="codex"), CASE).digest)
    assert keys[0] != keys[1]
    key = judge_key(make_spec(provider="codex"), CASE)
    assert (key["provider"], key["model"], key["cli_version"]) == ("codex", "gpt-5.4", "codex-cli 0.170.0")
    assert judge_key(make_spec(provider="codex", model="gpt-5.4-mini"), CASE)["model"] == "gpt-5.4-mini"
    # The same model through the openai API is another judge.
    openai = grade.judge_part(make_spec(provider="openai", model="gpt-5.4"), CASE).digest
    assert openai not in keys


# The judge parts of specs that do not judge with codex, computed before the codex judge existed (commit d15dc79):
# adding codex must not re-judge anything else.
BEFORE = {
    "default": ({}, "sha256:7067c97d60c9faae55ecf7e0a6adb3f7373a7e5d87bff2d497557355738ff6ae"),
    "openai": ({"provider": "openai"}, "sha256:9e315faa0eaa43e6272038b8abbf81df590075fc3960eded47748cbe1c715c32"),
    "claude-code": ({"provider": "claude-code", "model": "claude-haiku-4-5"},
                    "sha256:e8203cc7b2c838ef464395fcf4f51c3d6c9a144eeb9af6ff1f45935f79d8274d"),
    "inferred openai": ({"model": "gpt-5.4-mini"},
                        "sha256:067de2ce01834447f26c73937fbacb26661788419313398e1eeb80cd7b964f4d"),
}


@pytest.mark.parametrize("name", list(BEFORE))
def test_other_judges_keep_their_grade_keys(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLMAKE_CLAUDE", str(FakeClaude(tmp_path).path))
    monkeypatch.setenv("SKILLMAKE_CODEX", str(FakeCodex(tmp_path).path))  # installed, and still not in their keys
    judge, digest = BEFORE[name]
    assert grade.judge_part(make_spec(**judge), CASE).digest == digest
    assert "cli_version" not in judge_key(make_spec(**judge), CASE) or name == "claude-code"
