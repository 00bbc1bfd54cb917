"""Keeping secrets out of anything written: every key or token is replaced by [REDACTED].

Agents and judges redact the credentials they were given. As defence in depth, every record and result file is
redacted again where it is written (store.put_action, results.files.write_changed) of the credentials this
process holds in its environment (environment_secrets), whatever path a text took to get there."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"
# Environment variables whose values are credentials: ANTHROPIC_API_KEY, OPENAI_API_KEY, GITHUB_TOKEN,
# CLAUDE_CODE_OAUTH_TOKEN, AWS_SECRET_ACCESS_KEY, *_PASSWORD… Not settings that merely name where one lives.
_SECRET_NAME = re.compile(r"API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|ACCESS_KEY", re.I)
_NOT_SECRET = re.compile(r"_(FILE|PATH|DIR|URL|HOST|PORT|REGION|ID)$", re.I)
_ENV_MIN = 8  # shorter values of such variables are flags ("1", "true"), not credentials


def _worth(secrets: Iterable[str | None]) -> list[str]:
    return [s for s in secrets if s and len(s) >= 4]  # a tiny "secret" would redact ordinary text


def redact_text(text: str, secrets: Iterable[str | None]) -> str:
    for secret in _worth(secrets):
        text = text.replace(secret, REDACTED)
    return text


def redact_bytes(data: bytes, secrets: Iterable[str | None]) -> bytes:
    for secret in _worth(secrets):
        data = data.replace(secret.encode(), REDACTED.encode())
        escaped = json.dumps(secret)[1:-1]  # as it stands inside a JSON string, if that differs
        if escaped != secret:
            data = data.replace(escaped.encode(), REDACTED.encode())
    return data


def environment_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The credentials in the environment (`environ`, default this process's): the values of variables named like
    keys, tokens, secrets and passwords, longest first (so a key that contains another is replaced whole)."""
    env = os.environ if environ is None else environ
    # Every record and result file asks (several per trial): the names that qualify are worked out once per set
    # of names, and only their values are read each time (an environment changed since is still seen). This
    # process's own names are taken undecoded (os._Environ's bytes keys: decoding each cost more than the rest).
    raw = getattr(env, "_data", None) if environ is None else None
    names: tuple[Any, ...] = tuple(raw) if isinstance(raw, dict) else tuple(env)
    secret_names = _SECRET_NAMES.get(names)
    if secret_names is None:
        decoded = tuple(env)
        secret_names = tuple(n for n in decoded if _SECRET_NAME.search(n) and not _NOT_SECRET.search(n))
        if len(_SECRET_NAMES) > 16:
            _SECRET_NAMES.clear()
        _SECRET_NAMES[names] = secret_names
    found = {value.strip() for value in (env.get(n, "") for n in secret_names) if len(value.strip()) >= _ENV_MIN}
    return tuple(sorted(found, key=lambda s: (-len(s), s)))


_SECRET_NAMES: dict[tuple[Any, ...], tuple[str, ...]] = {}  # the environment's names → those of credentials


def redact_data(value: Any, secrets: Iterable[str | None]) -> Any:
    """`value` (JSON-like data) with every secret replaced in every string, keys included; the same object when
    nothing was replaced."""
    worth = _worth(secrets)
    if not worth:
        return value
    return _redact(value, worth)


def _redact(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return redact_text(value, secrets) if any(s in value for s in secrets) else value
    if isinstance(value, dict):
        out = {_redact(k, secrets): _redact(v, secrets) for k, v in value.items()}
        return value if all(out.get(k) is v for k, v in value.items()) else out
    if isinstance(value, list):
        items = [_redact(v, secrets) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value
