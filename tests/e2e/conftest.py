"""Fixtures of the end-to-end tests: the fake API, a recording dead-end proxy, and trial requests built from a
small spec written under tmp_path (the same objects skillmake's trial runner hands an agent)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillmake.run.agents import TrialRequest
from skillmake.run.workspace import TrialDir, clean_env, prepare
from skillmake.spec.loader import load_spec
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL
from tests.e2e.cli_fakes import RecordingProxy
from tests.fakeapi import FAKE_KEY, FakeAPI

SKILL_BODY_MARK = "Reply in UPPERCASE letters only"
SKILL_DESC_MARK = "Answers every request by shouting"
SHOUT_SKILL = f"""\
---
name: shout
description: {SKILL_DESC_MARK}. Use it when asked to shout.
---
# Shout

{SKILL_BODY_MARK}, and end the reply with "!".
"""


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingProxy]:
    """Every non-loopback connection a CLI tries goes here instead (and is refused and recorded)."""
    with RecordingProxy() as recorder:
        for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
            monkeypatch.setenv(name, recorder.url)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.setenv(name, "127.0.0.1,localhost")
        yield recorder


@pytest.fixture
def api(proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    """The fake API, with the environment the agents read their endpoint and key from pointing at it."""
    with FakeAPI() as fake:
        for name, value in fake.env().items():
            monkeypatch.setenv(name, value)
        yield fake


class Trials:
    """Builds TrialRequests for one test: a project folder with the shout skill and a one-case spec."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0
        skill = root / "project" / "skills" / "shout"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(SHOUT_SKILL)
        (skill / "reference.txt").write_text("a file beside SKILL.md, copied with the folder\n")
        (root / "project" / "secret.txt").write_text("the expected answer: 42\n")

    def request(self, *, kind: str, prompt: str = "say hello to the team", with_skill: bool = True,
                model: str | None = None, forbidden: tuple[str, ...] = (), inputs: tuple[str, ...] = (),
                timeout: float = 60, agent_extra: dict[str, Any] | None = None) -> TrialRequest:
        self.count += 1
        spec_path = self.root / "project" / f"shout{self.count}.eval.yaml"
        agent = {"kind": kind, **({"model": model} if model else {}), **(agent_extra or {})}
        lines = ["skill: skills/shout", f"agent: {json.dumps(agent)}"]
        if forbidden:
            lines.append(f"sandbox: {json.dumps({'forbidden_files': list(forbidden)})}")
        lines += ["cases:", "  - id: greet", f"    prompt: {json.dumps(prompt)}",
                  "    checks: [{type: min_length, length: 1}]"]
        if inputs:
            lines.append(f"    input_files: {json.dumps(list(inputs))}")
        spec_path.write_text("\n".join(lines) + "\n")
        spec = load_spec(str(spec_path))
        case = spec.cases[0]
        tdir = TrialDir(root=self.root / "runs" / f"trial-{self.count}")
        prepare(tdir, case)
        return TrialRequest(spec=spec, case=case, arm_name=WITH_SKILL if with_skill else WITHOUT_SKILL, k=0,
                            agent=spec.agent, skill=spec.skill if with_skill else None, prompt=prompt,
                            system_prompt=None, workspace=str(tdir.workspace), home=str(tdir.home),
                            env=clean_env(tdir.home), timeout=timeout)


@pytest.fixture
def trials(tmp_path: Path) -> Trials:
    return Trials(tmp_path)


def assert_offline(api: FakeAPI, proxy: RecordingProxy) -> None:
    """Nothing went anywhere but the fake API, and the fake API saw nothing it did not expect."""
    assert proxy.seen == [], f"the CLI tried to reach other hosts: {proxy.seen}"
    assert api.unexpected == [], [f"{r.method} {r.path}" for r in api.unexpected]


def assert_no_key(*blobs: bytes | str | None) -> None:
    for blob in blobs:
        if blob is None:
            continue
        text = blob.decode("utf-8", "replace") if isinstance(blob, bytes) else blob
        assert FAKE_KEY not in text
