"""skillmake.core.redact: which environment values are credentials, and redacting them out of data and written bytes."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from skillmake.core.redact import REDACTED, environment_secrets, redact_bytes, redact_data, redact_text


def test_credentials_are_found_by_name_and_flags_and_locations_are_not() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-0123456789", "OPENAI_APIKEY": "sk-openai-0123", "GITHUB_TOKEN": "ghp_abcdefgh",
           "AWS_SECRET_ACCESS_KEY": "aws/secret+value", "DB_PASSWORD": "hunter2hunter2",
           "SKILLMAKE_NO_API_KEY": "1", "FEATURE_TOKEN": "true", "AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/token-file",
           "ANTHROPIC_BASE_URL": "http://127.0.0.1:9999", "HOME": "/home/someone-long", "PATH": "/usr/bin:/bin"}
    assert set(environment_secrets(env)) == {"sk-ant-0123456789", "sk-openai-0123", "ghp_abcdefgh",
                                             "aws/secret+value", "hunter2hunter2"}
    # Longest first: a secret that contains another is replaced whole.
    assert environment_secrets({"A_TOKEN": "abcdefgh", "B_TOKEN": "abcdefgh-longer"}) == ("abcdefgh-longer",
                                                                                           "abcdefgh")


def test_the_process_environment_is_read_afresh_after_each_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_API_KEY", "sk-first-0123456")
    assert "sk-first-0123456" in environment_secrets()
    monkeypatch.setenv("SOME_API_KEY", "sk-second-012345")  # the same names, a new value
    assert "sk-second-012345" in environment_secrets() and "sk-first-0123456" not in environment_secrets()
    monkeypatch.setenv("OTHER_TOKEN", "tok-0123456789")  # a new name
    assert "tok-0123456789" in environment_secrets()
    monkeypatch.delenv("SOME_API_KEY")
    assert "sk-second-012345" not in environment_secrets()


def test_data_is_redacted_everywhere_and_untouched_data_is_the_same_object() -> None:
    record = {"key": "sha256:00", "checks": [{"evidence": "saw sk-ant-0123456789 here", "passed": False}],
              "sk-ant-0123456789": 1, "n": 3}
    out = redact_data(record, ["sk-ant-0123456789"])
    assert out == {"key": "sha256:00", "checks": [{"evidence": f"saw {REDACTED} here", "passed": False}],
                   REDACTED: 1, "n": 3}
    assert record["checks"][0]["evidence"] == "saw sk-ant-0123456789 here"  # the caller's data is not changed
    clean = {"a": ["b", {"c": "d"}]}
    assert redact_data(clean, ["sk-ant-0123456789"]) is clean
    assert redact_data(record, []) is record


def test_bytes_are_redacted_also_where_json_escaped_the_secret() -> None:
    secret = 'pa"ss\\word-123'
    data = orjson.dumps({"evidence": f"got {secret}"})
    assert secret.encode() not in data  # written escaped
    assert redact_bytes(data, [secret]) == orjson.dumps({"evidence": f"got {REDACTED}"})


def test_the_store_redacts_records_and_attempts_where_it_writes_them(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from skillmake.store.objects import TRIAL_SCHEMA, Store
    from tests.unit.store.test_objects import trial_record

    key = "sk-ant-api03-STORE-WRITE-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    store = Store(tmp_path)
    failed = dict(trial_record(store), outcome="error", error=f"the API refused {key}")
    store.put_attempt(failed, schema=TRIAL_SCHEMA)
    store.put_action(dict(failed, outcome="completed"), schema=TRIAL_SCHEMA)
    written = [p.read_bytes() for p in tmp_path.rglob("*.json")]
    assert len(written) == 2 and all(key.encode() not in data for data in written)
    assert store.get_attempt(failed["key"], schema=TRIAL_SCHEMA)["error"] == f"the API refused {REDACTED}"
    assert failed["error"] == f"the API refused {key}"  # the caller's record is left as it was


# Pins from the mutation run (bench/mutation.py): redaction's length floor for what counts as a secret.
def test_a_four_character_secret_is_redacted_and_a_three_character_one_is_not() -> None:
    assert redact_text("key=abcd!", ["abcd"]) == f"key={REDACTED}!"
    assert redact_bytes(b"key=abcd!", ["abcd"]) == b"key=" + REDACTED.encode() + b"!"
    assert redact_text("key=abc!", ["abc"]) == "key=abc!"
    assert redact_bytes(b"key=abc!", ["abc"]) == b"key=abc!"


def test_empty_and_missing_secrets_are_ignored_and_every_secret_is_replaced() -> None:
    assert redact_text("a-secret and b-secret", [None, "", "a-secret", "b-secret"]) == f"{REDACTED} and {REDACTED}"
    assert redact_bytes(b"a-secret and b-secret", [None, "", "a-secret", "b-secret"]) == \
        REDACTED.encode() + b" and " + REDACTED.encode()
