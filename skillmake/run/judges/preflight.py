"""Judge preflight: whether every spec that needs a judge can reach one, checked before any trial runs.

Only what can be known without a call: the provider is supported, its credentials are set, a configured base
URL is an http(s) URL, and for the claude-code and codex judges the CLI is installed (for codex, also a key or a
`codex login`). Resolution is the judges' own (resolve.choose, then skillmake.spec.settings), so the check and the
judging never disagree.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from skillmake.run.judges.resolve import Choice, applicable, choose, endpoint
from skillmake.spec.model import Spec

_KEYS = {"anthropic": "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)", "openai": "OPENAI_API_KEY (or CODEX_API_KEY)"}
_URLS = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL", "claude-code": "ANTHROPIC_BASE_URL",
         "codex": "OPENAI_BASE_URL"}


def judge_problems(specs: Iterable[Spec], *, environ: Mapping[str, str] | None = None) -> list[str]:
    """One line per problem, in spec order, each naming the spec and the variable and ending with the fix;
    empty when every judge can be reached (or no case of these specs has a judge). Specs without a judged
    case are skipped. `environ` defaults to os.environ (the claude CLI is always looked up as the claude-code
    agent does, from os.environ and the project's .tools folder)."""
    env = os.environ if environ is None else environ
    problems: list[str] = []
    for spec in specs:
        if not any(applicable(case) for case in spec.cases):
            continue
        problems.extend(f"spec {spec.name}: {text}" for text in _problems(spec, env))
    return problems


def _problems(spec: Spec, env: Mapping[str, str]) -> list[str]:
    """Every distinct judge the spec's judged cases resolve to (a case may name its own model), each checked once."""
    choices = dict.fromkeys(choose(spec, case, environ=env) for case in spec.cases if applicable(case))
    return list(dict.fromkeys(line for choice in choices for line in _choice_problems(choice, env)))


def _choice_problems(choice: Choice, env: Mapping[str, str]) -> list[str]:
    if choice.error:
        return [choice.error]
    target = endpoint(choice, environ=env)
    which = _which(choice)
    out = []
    if choice.provider == "claude-code":
        from skillmake.run.judges.claude_code_provider import CLI_ENV, binary

        if binary() is None:  # credentials are optional: without them the CLI uses the user's claude login
            out.append(f"the judge needs the claude CLI ({which}); install it (npm install -g "
                       f"@anthropic-ai/claude-code, or scripts/setup.sh), set {CLI_ENV} to its path, "
                       "or change judge.provider")
    elif choice.provider == "codex":
        out.extend(_codex_problems(target.secrets, env, which))
    elif not target.secrets:  # the API judges need no SDK (run/wire.py), only a key
        out.append(f"the judge needs {_KEYS[choice.provider]} ({which}); set it, or change judge.provider")
    if target.base_url and not _is_http_url(target.base_url):
        variable = _URLS[choice.provider]
        out.append(f"{variable}={target.base_url!r} is not an http(s) URL ({which}); set it to one "
                   "(e.g. http://127.0.0.1:8080), or unset it to use the provider's own")
    return out


def _codex_problems(secrets: tuple[str, ...], env: Mapping[str, str], which: str) -> list[str]:
    from skillmake.run.judges.codex_provider import CLI_ENV, binary, logged_in

    out = []
    if binary() is None:
        out.append(f"the judge needs the codex CLI ({which}); install it (npm install -g @openai/codex, or "
                   f"scripts/setup.sh), set {CLI_ENV} to its path, or change judge.provider")
    if not secrets and not logged_in(env):  # without a key, Codex judges on the user's own login
        out.append(f"the judge needs OPENAI_API_KEY (or CODEX_API_KEY) or a codex login ({which}); set one, run "
                   "`codex login`, or change judge.provider")
    return out


def _which(choice: Choice) -> str:
    if choice.source == "default":
        return f"judge provider {choice.provider}, the default"
    if choice.source.endswith("judge.model"):  # judge.model, or a case's cases[i].judge.model
        return f"judge provider {choice.provider}, inferred from {choice.source} {choice.model!r}"
    return f"judge provider {choice.provider}, from {choice.source}"


def _is_http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)
