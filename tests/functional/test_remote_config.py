"""Saying where the remote store is: the config's `remote`, SKILLMAKE_REMOTE, --remote URL, --offline."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skillmake.store import remote

from .project import Project


def test_the_environment_beats_the_config_and_offline_beats_both() -> None:
    assert remote.configured("s3://cfg/p", {}) == "s3://cfg/p"
    assert remote.configured("s3://cfg/p", {"SKILLMAKE_REMOTE": "file:///x"}) == "file:///x"
    assert remote.configured("s3://cfg/p", {"SKILLMAKE_REMOTE": "file:///x", "SKILLMAKE_OFFLINE": "1"}) is None
    assert remote.configured(None, {"SKILLMAKE_OFFLINE": "0"}) is None
    assert remote.configured(None, {"SKILLMAKE_REMOTE": "  "}) is None


@pytest.mark.parametrize(("url", "shown"), [
    ("s3://AKIAEXAMPLE:wJalrXUtnFEMI@team-bucket/evals", "s3://team-bucket/evals"),
    ("https://user:pass@minio.local:9000/b/p?X-Amz-Signature=abc", "https://minio.local:9000/b/p"),
    ("file:///mnt/shared/evals", "file:///mnt/shared/evals"),
])
def test_a_remote_url_is_shown_without_credentials(url: str, shown: str) -> None:
    assert remote.shown(url) == shown


def test_a_remote_that_is_not_a_url_is_a_located_config_error(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "p", {"skillmake.toml": 'trials = 1\nremote = "team-bucket/evals"\n'})
    run = p.run("validate", check_views=False)
    assert run.code == 2, run.out + run.err
    assert "skillmake.toml:2:10 /remote: remote 'team-bucket/evals' is not a URL" in run.err, run.err
    assert "s3://bucket/prefix" in run.err


def test_remote_needs_a_url_on_the_command_line(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "p", {"skillmake.toml": "trials = 1\n"})
    run = p.run("--remote", "team-bucket", "validate", check_views=False)
    assert run.code == 3 and "--remote needs a URL" in run.err, run.err


def test_push_and_pull_say_there_is_no_remote(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "p", {
        "skillmake.toml": 'remote = "file:///nowhere"\n',
        "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n",
        "t.eval.yaml": "skill: skills/s\nagent: {kind: command, command: [echo, hi]}\ncases:\n"
                       "  - {id: a, prompt: p, checks: [{type: contains, needle: hi}]}\n"})
    for command in ("push", "pull"):
        run = p.run("--offline", command, check_views=False)
        assert run.code == 3 and "no remote store (--offline" in run.err, run.err


def test_a_remote_in_the_config_costs_validate_and_a_warm_no_op_no_fsspec_import(tmp_path: Path) -> None:
    """The remote is made on its first request: the editor-save path and a warm no-op never import fsspec."""
    p = Project.empty(tmp_path / "p", {
        "skillmake.toml": 'remote = "s3://team-bucket/evals"\n',
        "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n",
        "t.eval.yaml": "skill: skills/s\nagent: {kind: command, command: [echo, hi]}\ncases:\n"
                       "  - {id: a, prompt: p, checks: [{type: contains, needle: hi}]}\n"})
    assert p.run("--offline").code == 0  # fills the local store without the remote
    for args in (("validate", "t.eval.yaml"), ()):
        run = p.run(*args, cmd=[sys.executable, "-X", "importtime", "-m", "skillmake", *args], check_views=False)
        assert run.code == 0, run.out + run.err
        imported = {line.rsplit("|", 1)[-1].strip() for line in run.err.splitlines() if "|" in line}
        assert "skillmake.store.remote" in imported or args, imported  # the run path did load the remote module…
        assert not {m for m in imported if m.split(".")[0] in ("fsspec", "s3fs", "botocore", "aiobotocore")}
