"""The rate limiter's settings through the real CLI: `--max-connections N` and `[limits] max_connections` cap the
judge requests a `-j 6` run has in flight at the loopback fake API, and a bad value is one located line."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeapi import FakeAPI, Reply
from tests.functional.project import Project

REPO = Path(__file__).resolve().parents[2]
SPEC = "skill: skills/s\nagent: {kind: command, command: [cat]}\njudge: {provider: anthropic}\ncases:\n" + "".join(
    f"  - {{id: c{i}, prompt: 'say hi {i}', rubric: it says hi}}\n" for i in range(6))


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as fake:
        yield fake


def run(tmp_path: Path, api: FakeAPI, *args: str, config: str | None = None) -> tuple[int, int, str]:
    """(exit code, the most judge requests the fake had in flight, output) of `skillmake -j 6 ARGS` on a fresh
    project of six judged cases."""
    files = {"skills/s/SKILL.md": "---\nname: s\ndescription: greets\n---\nSay hi.\n", "s.eval.yaml": SPEC}
    if config is not None:
        files["skillmake.toml"] = config
    project = Project.empty(tmp_path / "p", files)
    api.reset()
    api.default = Reply.tool_use("record_verdict", {"score": 5, "reason": "it says hi"})
    limits = api.limit(latency=0.3)
    done = project.run(cmd=[sys.executable, "-m", "skillmake", "-j", "6", *args],
                       env={**api.anthropic_env(), "PYTHONPATH": str(REPO)}, check_views=False)
    return done.code, limits.peak, done.out + done.err


def test_the_command_line_caps_the_requests_in_flight(tmp_path: Path, api: FakeAPI) -> None:
    code, peak, out = run(tmp_path, api, "--max-connections", "2")
    assert code == 0, out
    assert api.count("/v1/messages") == 6 and peak == 2


def test_the_config_caps_them_and_the_command_line_beats_it(tmp_path: Path, api: FakeAPI) -> None:
    code, peak, out = run(tmp_path / "a", api, config="[limits]\nmax_connections = 1\n")
    assert code == 0, out
    assert peak == 1
    code, peak, out = run(tmp_path / "b", api, "--max-connections", "3", config="[limits]\nmax_connections = 1\n")
    assert code == 0, out
    assert 1 < peak <= 3


def test_a_bad_value_is_one_line(tmp_path: Path, api: FakeAPI) -> None:
    code, _, out = run(tmp_path / "flag", api, "--max-connections", "0")
    assert code == 3 and "--max-connections needs a whole number above 0, not '0'" in out
    assert "Traceback" not in out
    code, _, out = run(tmp_path / "config", api, config="[limits]\nmax_connections = 0\n")
    assert code == 2 and "skillmake.toml:2:" in out and "/limits/max_connections" in out
    assert "Traceback" not in out and api.count() == 0
