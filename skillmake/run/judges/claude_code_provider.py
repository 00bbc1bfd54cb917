"""The claude-code judge provider (clauditor's `transport: cli`): the real `claude -p` with --json-schema.

With an API key or token in the environment the CLI runs hermetic (a fresh HOME and config dir; --bare with a key).
Without one it runs with the user's own HOME so a Claude subscription's cached login can pay for judging.
Either way it runs in an empty temporary folder with every tool disabled: it only answers.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from skillmake.core.redact import redact_text
from skillmake.run import process
from skillmake.run.agents.base import Usage
from skillmake.run.judges.base import Endpoint, JudgeCallError, JudgeRequest, ProviderReply, brief
from skillmake.run.judges.retry import MAX_ATTEMPTS, TOTAL_BUDGET_S

CLI_ENV = "SKILLMAKE_CLAUDE"  # an explicit path to the claude binary (as the claude-code agent reads it)
_PASS = ("PATH", "LANG", "LC_ALL", "TMPDIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy",
         "no_proxy", "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS")


def binary() -> str | None:
    from skillmake.run.agents.cli_common import find_cli

    return find_cli("claude", CLI_ENV)


def version() -> str | None:
    """The CLI's version (part of the judge key, as it is of a claude-code trial key); None when not installed."""
    from skillmake.run.agents.cli_common import cli_version

    found = binary()
    return cli_version(found) if found else None


def complete(request: JudgeRequest, endpoint: Endpoint) -> ProviderReply:
    """One verdict from `claude -p`; the CLI retries API errors itself, so a failure here is final."""
    found = binary()
    secrets = endpoint.secrets  # redacted from every message before it is cut short
    if not found:
        raise JudgeCallError("the claude CLI was not found for the claude-code judge; install it "
                             f"(npm install -g @anthropic-ai/claude-code, or scripts/setup.sh) or set {CLI_ENV}",
                             requests=0)
    argv = [found, "-p", "--output-format", "json", "--json-schema", json.dumps(request.schema),
            "--model", endpoint.model, "--system-prompt", request.system, "--tools", "", "--max-turns", "3"]
    with tempfile.TemporaryDirectory(prefix="skillmake-judge-") as work:
        env = {k: os.environ[k] for k in _PASS if k in os.environ}
        env.update({"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                    "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_MAX_RETRIES": str(MAX_ATTEMPTS - 1)})
        if endpoint.base_url:
            env["ANTHROPIC_BASE_URL"] = endpoint.base_url
        if endpoint.api_key or endpoint.auth_token:
            env.update({"HOME": work, "CLAUDE_CONFIG_DIR": os.path.join(work, ".claude")})
            if endpoint.api_key:
                argv.append("--bare")  # bare mode reads ANTHROPIC_API_KEY only (no login, no token)
                env["ANTHROPIC_API_KEY"] = endpoint.api_key
            else:
                env["ANTHROPIC_AUTH_TOKEN"] = str(endpoint.auth_token)
        else:  # the user's own login (subscription), as clauditor's cli transport does
            env.update({k: os.environ[k] for k in ("HOME", "CLAUDE_CONFIG_DIR") if k in os.environ})
        done = process.run(argv, cwd=work, env=env, timeout=TOTAL_BUDGET_S, stdin=request.user.encode())
    if done.error:
        raise JudgeCallError(done.error, requests=0)
    if done.timed_out:
        raise JudgeCallError(f"claude -p did not finish within {TOTAL_BUDGET_S:.0f}s", requests=1)
    try:
        result = json.loads(done.stdout)
    except ValueError:
        result = None
    if not isinstance(result, dict):
        tail = " ".join(redact_text(done.stderr.decode("utf-8", "replace"), secrets).split())[-300:]
        raise JudgeCallError(f"claude -p exited {done.returncode} without a JSON result: {tail or '(no output)'}",
                             requests=1)
    usage = _usage(result)
    if result.get("is_error") or result.get("subtype") != "success":
        detail = result.get("result") or result.get("api_error_status") or result.get("subtype")
        # is_error with subtype "success" happens (an API error reported as the result text)
        kind = result.get("subtype") if result.get("subtype") != "success" else "is_error"
        raise JudgeCallError(f"claude -p failed ({kind}): {brief(detail, secrets)}; check the judge model and the "
                             "Anthropic credentials (claude login, or ANTHROPIC_API_KEY)", requests=1)
    structured = result.get("structured_output")
    return ProviderReply(data=structured if isinstance(structured, dict) else None,
                         text=str(result.get("result") or ""), usage=usage)


def _usage(result: dict[str, Any]) -> Usage:
    raw = result.get("usage") if isinstance(result.get("usage"), dict) else {}
    assert isinstance(raw, dict)

    def num(name: str) -> int | None:
        value = raw.get(name)
        return value if isinstance(value, int) else None

    cost = result.get("total_cost_usd")
    turns = result.get("num_turns")
    return Usage(input_tokens=num("input_tokens"), output_tokens=num("output_tokens"),
                 cache_read_tokens=num("cache_read_input_tokens"),
                 cache_creation_tokens=num("cache_creation_input_tokens"),
                 cost_usd=float(cost) if isinstance(cost, int | float) else None,
                 num_turns=turns if isinstance(turns, int) else None, requests=1)
