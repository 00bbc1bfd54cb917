"""The trial environment's allow-list, the documented capture and keep limits at their boundaries, kept-record
reads, and writing a kept tree out (pins found by bench/mutation.py)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from skillmake.run import workspace
from skillmake.run.workspace import ENV_ALLOW, TrialDir, capture, clean_env, materialize, prepare, snapshot
from skillmake.spec.model import Case, InputFile


def test_every_allowed_variable_passes_and_nothing_else(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ENV_ALLOW:
        monkeypatch.setenv(name, f"value-of-{name}")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("LCX", "no")
    env = clean_env(tmp_path / "home")
    for name in ENV_ALLOW:
        if name != "PATH":
            assert env[name] == f"value-of-{name}", name
    assert env["LC_ALL"] == "C.UTF-8"
    assert "ANTHROPIC_API_KEY" not in env and "LCX" not in env
    assert set(ENV_ALLOW) >= {"PATH", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR", "USER", "LOGNAME", "SHELL",
                              "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
                              "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"}
    home = tmp_path / "home"
    assert (env["HOME"], env["XDG_CONFIG_HOME"], env["XDG_CACHE_HOME"], env["XDG_DATA_HOME"]) == (
        str(home), str(home / ".config"), str(home / ".cache"), str(home / ".local" / "share"))


def test_path_defaults_and_extra_path_comes_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PATH", raising=False)
    assert clean_env(tmp_path)["PATH"] == os.defpath
    monkeypatch.setenv("PATH", "/usr/bin")
    env = clean_env(tmp_path, extra_path=("bin", "tools"), spec_folder="/spec")
    assert env["PATH"] == os.pathsep.join(["/spec/bin", "/spec/tools", "/usr/bin"])


def test_the_documented_limits() -> None:
    # README ("Where things go") and the capture error name these numbers.
    assert (workspace.CAPTURE_MAX_FILES, workspace.CAPTURE_MAX_BYTES) == (1_000, 64 << 20)
    assert (workspace.KEEP_MAX_FILES, workspace.KEEP_MAX_BYTES) == (5_000, 64 << 20)


def test_capture_limits_at_their_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workspace, "CAPTURE_MAX_FILES", 3)
    monkeypatch.setattr(workspace, "CAPTURE_MAX_BYTES", 10)
    case = Case(id="c", index=0, output_files=("*.txt",))
    for name, data in (("a.txt", "1234"), ("b.txt", "1234"), ("c.txt", "12")):
        (tmp_path / name).write_text(data)
    got = capture(tmp_path, case)  # exactly 3 files and exactly 10 bytes: within the limits
    assert got.error is None and len(got.files) == 3
    (tmp_path / "c.txt").write_text("123")  # 11 bytes
    assert capture(tmp_path, case).error
    (tmp_path / "c.txt").write_text("1")
    (tmp_path / "d.txt").write_text("")  # a 4th file, 9 bytes in all
    assert capture(tmp_path, case).error


def test_kept_records_are_read_only_when_they_are_the_one_asked_for(tmp_path: Path) -> None:
    tdir = TrialDir(root=tmp_path)
    assert tdir.read("trial.json") is None
    (tmp_path / "trial.json").write_bytes(b"[1, 2]")
    assert tdir.read("trial.json") is None
    (tmp_path / "trial.json").write_bytes(orjson.dumps({"key": "sha256:a"}))
    assert tdir.read("trial.json") == {"key": "sha256:a"}
    assert tdir.read("trial.json", key="sha256:a") == {"key": "sha256:a"}
    assert tdir.read("trial.json", key="sha256:b") is None


def test_prepare_empties_the_folder_and_stages_fresh_inputs(tmp_path: Path) -> None:
    source = tmp_path / "fixture.csv"
    source.write_text("a,b\n")
    tdir = TrialDir(root=tmp_path / "t")
    (tdir.workspace / "stale").mkdir(parents=True)
    (tdir.workspace / "stale" / "old.txt").write_text("old")
    case = Case(id="c", index=0, input_files=(InputFile(source=str(source), relpath="fixture.csv", dest="f.csv"),))
    prepare(tdir, case)
    assert sorted(p.name for p in tdir.workspace.iterdir()) == ["f.csv"]
    assert tdir.home.is_dir() and not any(tdir.home.iterdir())


def test_materialize_into_an_existing_folder_and_with_a_lost_object(tmp_path: Path) -> None:
    dest = tmp_path / "ws"
    dest.mkdir()
    tree = {"a.txt": {"file": "sha256:a", "exec": False}, "lost.txt": {"file": "sha256:gone", "exec": False}}
    assert materialize(tree, dest, {"sha256:a": b"A"}.get) == 1
    assert sorted(p.name for p in dest.iterdir()) == ["a.txt"]


def test_a_partly_kept_workspace_says_what_was_left_out(tmp_path: Path) -> None:
    deep = tmp_path
    for _ in range(70):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (tmp_path / "top.txt").write_text("t")
    tree, note = snapshot(tmp_path, lambda data: "sha256:x")
    assert tree == {"top.txt": {"file": "sha256:x", "exec": False}}
    assert note and note.startswith("parts of the workspace were not kept: ") and "deeper than 64" in note
