"""The codex judge provider (caliper's `judge.backend: codex`): the real `codex exec --json --output-schema`.

With an OpenAI key in the environment (OPENAI_API_KEY or CODEX_API_KEY) Codex runs hermetic: a fresh CODEX_HOME
whose config.toml points it at the resolved base URL, as the codex agent does. Without one it runs with the
user's own HOME and CODEX_HOME, so a `codex login` (a ChatGPT plan) pays for judging, as caliper's codex backend
does. Either way it runs in an empty temporary folder with a read-only sandbox: it only answers.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from skillmake.core.redact import redact_bytes, redact_text
from skillmake.run import process
from skillmake.run.judges.base import Endpoint, JudgeCallError, JudgeRequest, ProviderReply, brief
from skillmake.run.judges.retry import TOTAL_BUDGET_S

CLI_ENV = "SKILLMAKE_CODEX"  # an explicit path to the codex binary (as the codex agent reads it)
_PASS = ("PATH", "LANG", "LC_ALL", "TMPDIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy",
         "no_proxy", "SSL_CERT_FILE", "CODEX_CA_CERTIFICATE")
_LOGIN = ("HOME", "CODEX_HOME")  # where a `codex login` keeps its auth.json


def binary() -> str | None:
    from skillmake.run.agents.cli_common import find_cli

    return find_cli("codex", CLI_ENV)


def version() -> str | None:
    """The CLI's version (part of the judge key, as it is of a codex trial key); None when not installed."""
    from skillmake.run.agents.cli_common import cli_version

    found = binary()
    return cli_version(found) if found else None


def logged_in(environ: Mapping[str, str]) -> bool:
    """Whether a `codex login` is on file: $CODEX_HOME/auth.json, else ~/.codex/auth.json."""
    home = environ.get("CODEX_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".codex")
    return os.path.isfile(os.path.join(home, "auth.json"))


def prompt_of(request: JudgeRequest) -> str:
    """`codex exec` has no system prompt of its own to replace: the judge's instructions come first, marked."""
    return f"<instructions>\n{request.system}\n</instructions>\n\n{request.user}"


def build_argv(found: str, *, model: str, schema_file: str) -> list[str]:
    """`-` reads the prompt from stdin; a read-only sandbox, since a judge has nothing to change."""
    return [found, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--sandbox", "read-only",
            "--output-schema", schema_file, "--model", model, "-"]


def complete(request: JudgeRequest, endpoint: Endpoint) -> ProviderReply:
    """One verdict from `codex exec`; Codex retries API errors itself, so a failure here is final."""
    from skillmake.run.agents.codex import KEY_ENV, config_toml, parse_events, usage_of
    from skillmake.spec.settings import DEFAULT_OPENAI_URL

    found = binary()
    secrets = endpoint.secrets  # redacted from every message before it is cut short
    if not found:
        raise JudgeCallError("the codex CLI was not found for the codex judge; install it "
                             f"(npm install -g @openai/codex, or scripts/setup.sh) or set {CLI_ENV}", requests=0)
    with tempfile.TemporaryDirectory(prefix="skillmake-judge-") as work:
        schema_file = os.path.join(work, "verdict.schema.json")
        Path(schema_file).write_text(json.dumps(request.schema), encoding="utf-8")
        answer = os.path.join(work, "answer")  # the working folder: empty, so there is nothing to read
        os.mkdir(answer)
        env = {k: os.environ[k] for k in _PASS if k in os.environ}
        if endpoint.api_key:
            codex_home = Path(work) / ".codex"
            codex_home.mkdir()
            (codex_home / "config.toml").write_text(
                config_toml(model=endpoint.model, base_url=endpoint.base_url or DEFAULT_OPENAI_URL), encoding="utf-8")
            env.update({"HOME": work, "CODEX_HOME": str(codex_home), KEY_ENV: endpoint.api_key})
        else:  # the user's own login (a ChatGPT plan), as caliper's codex backend uses it
            env.update({k: os.environ[k] for k in _LOGIN if k in os.environ})
        done = process.run(build_argv(found, model=endpoint.model, schema_file=schema_file), cwd=answer, env=env,
                           timeout=TOTAL_BUDGET_S, stdin=prompt_of(request).encode())
    if done.error:
        raise JudgeCallError(done.error, requests=0)
    if done.timed_out:
        raise JudgeCallError(f"codex exec did not finish within {TOTAL_BUDGET_S:.0f}s", requests=1)
    events = parse_events(redact_bytes(done.stdout, secrets))
    usage = dataclasses.replace(usage_of(events, endpoint.model), requests=1)
    if events.failures or done.returncode != 0 or not events.messages:
        why = (events.failures[-1:] or events.notices[-1:]
               or [redact_text(done.stderr.decode("utf-8", "replace"), secrets)[-300:] or "no output"])[0]
        raise JudgeCallError(f"codex exec exited {done.returncode} without a verdict: {brief(why, secrets)}; "
                             "check the judge model and the OpenAI credentials (codex login, or OPENAI_API_KEY)",
                             requests=1)
    text = events.messages[-1]
    try:
        value = json.loads(text)
    except ValueError:
        value = None  # left to the judge's lenient text parsing, which reports the error
    return ProviderReply(data=value if isinstance(value, dict) else None, text=text, usage=usage)
