"""Pins from the mutation run (bench/mutation.py): redaction's length floor for what counts as a secret."""

from __future__ import annotations

from skillmake.core.redact import REDACTED, redact_bytes, redact_text


def test_a_four_character_secret_is_redacted_and_a_three_character_one_is_not() -> None:
    assert redact_text("key=abcd!", ["abcd"]) == f"key={REDACTED}!"
    assert redact_bytes(b"key=abcd!", ["abcd"]) == b"key=" + REDACTED.encode() + b"!"
    assert redact_text("key=abc!", ["abc"]) == "key=abc!"
    assert redact_bytes(b"key=abc!", ["abc"]) == b"key=abc!"


def test_empty_and_missing_secrets_are_ignored_and_every_secret_is_replaced() -> None:
    assert redact_text("a-secret and b-secret", [None, "", "a-secret", "b-secret"]) == f"{REDACTED} and {REDACTED}"
    assert redact_bytes(b"a-secret and b-secret", [None, "", "a-secret", "b-secret"]) == \
        REDACTED.encode() + b" and " + REDACTED.encode()
