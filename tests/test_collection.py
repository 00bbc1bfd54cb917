"""What collecting the suite costs each xdist worker: no provider SDK imported (tests/lazy.py), and pytest's
assert-rewritten test modules cached for the next run though the workers start with PYTHONDONTWRITEBYTECODE=1
(tests/bytecode.py); tests/cputime.py's numbers add up by file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests import cputime

REPO = Path(__file__).resolve().parent.parent

# Collects in a child, as a worker does (PYTHONDONTWRITEBYTECODE=1 from its start), then says what it imported.
COLLECT = """\
import json, sys
import pytest
code = pytest.main(["--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider", *sys.argv[1:]])
print(json.dumps({"code": int(code), "sdks": sorted(m for m in ("anthropic", "openai") if m in sys.modules),
                  "dont_write_bytecode": sys.dont_write_bytecode}))
"""


def collect(*args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", COLLECT, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**{k: v for k, v in os.environ.items() if k != cputime.ENV},
                                            "PYTHONDONTWRITEBYTECODE": "1", **(env or {})})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_collecting_the_whole_suite_imports_no_provider_sdk() -> None:
    # Before: tests/fakeapi's test files imported anthropic and openai at their top, ~4 CPU-s in every worker.
    result = collect("tests")
    assert result == {"code": 0, "sdks": [], "dont_write_bytecode": True}


def test_a_worker_caches_the_rewritten_test_modules_it_collects() -> None:
    # Before: a worker inherits PYTHONDONTWRITEBYTECODE=1, so pytest rewrote every test module's asserts again in
    # every worker on every run (~70% of collecting). (Removing a cache file is safe: a reader rewrites it.)
    cache = REPO / "tests" / "__pycache__"
    for stale in cache.glob("test_balance.*-pytest-*.pyc"):
        stale.unlink(missing_ok=True)
    result = collect("tests/test_balance.py")
    assert result == {"code": 0, "sdks": [], "dont_write_bytecode": True}  # and none written once tests run
    assert len(list(cache.glob("test_balance.*-pytest-*.pyc"))) == 1


def test_cpu_seconds_are_summed_by_file_and_the_controller_is_not_counted_twice(tmp_path: Path) -> None:
    (tmp_path / "gw0-1.json").write_text(json.dumps({
        "worker": "gw0", "total": 5.0, "files": {"tests/a.py": 3.0, "tests/b.py": 1.0}, "tests": {"tests/a.py": 2,
                                                                                                 "tests/b.py": 1}}))
    (tmp_path / "gw1-2.json").write_text(json.dumps({
        "worker": "gw1", "total": 2.5, "files": {"tests/b.py": 1.5}, "tests": {"tests/b.py": 4}}))
    (tmp_path / "main-3.json").write_text(json.dumps({"worker": "main", "total": 7.5, "files": {}, "tests": {}}))
    lines = cputime.summary(tmp_path, 10)
    assert lines[1:] == ["    3.0     2  tests/a.py", "    2.5     5  tests/b.py",
                         "    5.5     7  all tests; 7.5 s in the test processes from their start (collection included)"]
