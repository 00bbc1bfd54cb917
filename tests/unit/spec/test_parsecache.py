"""Spec parses kept by content (parsecache.py): an unchanged file is answered from `.skillmake/parsed/`, with the
same data and the same line:col for every error; an edited file, another parser or a corrupt entry is a miss."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillmake.core.errors import SpecErrors
from skillmake.run.project import Project
from skillmake.spec import parsecache
from skillmake.spec.loader import load_spec
from skillmake.spec.parsecache import ParseCache
from skillmake.spec.source import read_source

REPO = Path(__file__).resolve().parents[3]
INVALID = REPO / "tests" / "data" / "invalid"
VALID = REPO / "tests" / "data" / "valid"
CORPUS = sorted(p for folder in (INVALID, VALID) for p in folder.iterdir()
                if p.name.endswith((".eval.yaml", ".eval.json")))

SPEC = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: ONE}]
"""


def loaded(path: Path, root: Path, cache: ParseCache | None) -> object:
    """The spec, or the rendered errors, of one load."""
    try:
        return load_spec(str(path), root=str(root), parsed=cache)
    except SpecErrors as exc:
        return [e.render() for e in exc.errors]


@pytest.mark.parametrize("spec", CORPUS, ids=[p.name for p in CORPUS])
def test_a_cached_parse_gives_what_parsing_gives(spec: Path, tmp_path: Path) -> None:
    cache = ParseCache(tmp_path / "parsed")
    fresh = loaded(spec, spec.parent, None)
    assert loaded(spec, spec.parent, cache) == fresh
    cache.save()
    warm = ParseCache(tmp_path / "parsed")
    assert loaded(spec, spec.parent, warm) == fresh
    kept = list((tmp_path / "parsed").glob("*.json")) if (tmp_path / "parsed").exists() else []
    assert warm.hits == len(kept) <= 1


def test_an_unchanged_spec_is_not_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "proj"
    (root / "skills" / "s").mkdir(parents=True)
    (root / "skills" / "s" / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (root / "agent.py").write_text("print('ONE')\n")
    (root / "s.eval.yaml").write_text(SPEC)
    first = Project.open(str(root))
    parses: list[str] = []

    def counted(path: str, text: str | None = None, **kw: object) -> object:
        parses.append(path)
        return read_source(path, text, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(parsecache, "read_source", counted)
    again = Project.open(str(root))
    assert parses == [] and again.specs == first.specs
    (root / "s.eval.yaml").write_text(SPEC.replace("say one", "say ONE"))
    edited = Project.open(str(root))
    assert len(parses) == 1 and edited.specs[0].cases[0].prompt == "say ONE"
    assert len(list((root / ".skillmake" / "parsed").glob("*.json"))) == 2


def test_a_corrupt_or_foreign_entry_is_a_miss(tmp_path: Path) -> None:
    spec = VALID / "full.eval.yaml"
    folder = tmp_path / "parsed"
    cache = ParseCache(folder)
    good = loaded(spec, VALID, cache)
    cache.save()
    (entry,) = folder.glob("*.json")
    for broken in (b"", b'{"v": 1, "data":', b'{"v": 99, "data": {}, "positions": {}, "key_positions": {}}',
                   b'{"v": 1, "data": {}, "positions": {"": [1]}, "key_positions": {}}', b"[1, 2]"):
        entry.write_bytes(broken)
        again = ParseCache(folder)
        assert loaded(spec, VALID, again) == good and again.hits == 0, broken
        again.save()  # the miss is written again, and answers the next load
        third = ParseCache(folder)
        assert loaded(spec, VALID, third) == good and third.hits == 1, broken


def test_another_parser_misses_every_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ParseCache(tmp_path / "parsed")
    loaded(VALID / "minimal.eval.yaml", VALID, cache)
    cache.save()
    monkeypatch.setattr(parsecache, "_parser", b"another source.py")
    again = ParseCache(tmp_path / "parsed")
    loaded(VALID / "minimal.eval.yaml", VALID, again)
    assert again.hits == 0 and len(again.new) == 1


def test_data_json_cannot_hold_exactly_is_not_kept(tmp_path: Path) -> None:
    shutil.copytree(VALID / "skills", tmp_path / "skills")
    spec = tmp_path / "nan.eval.yaml"
    spec.write_text(SPEC.replace("skills/s", "skills/greet").replace("cases:", "trials: .nan\ncases:"))
    cache = ParseCache(tmp_path / "parsed")
    assert loaded(spec, tmp_path, cache) == loaded(spec, tmp_path, None)
    assert cache.new == {}


def _imports_in_a_fresh_interpreter(args: list[str], cwd: Path) -> set[str]:
    run = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=cwd, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def test_a_parse_answered_from_the_cache_imports_no_yaml(tmp_path: Path) -> None:
    """PyYAML (~11 ms of every start) loads for the first file that is parsed, not for one the cache answers."""
    cache = ParseCache(tmp_path / "parsed")
    cache.read(str(VALID / "full.eval.yaml"))
    cache.save()
    code = ("import sys; from pathlib import Path; from skillmake.spec.parsecache import ParseCache; "
            f"c = ParseCache(Path({str(tmp_path / 'parsed')!r})); c.read({str(VALID / 'full.eval.yaml')!r}); "
            "assert c.hits == 1, c.hits")
    names = _imports_in_a_fresh_interpreter(["-c", code], tmp_path)
    assert "skillmake.spec.parsecache" in names
    assert not {n for n in names if n.split(".")[0] == "yaml" or n == "skillmake.spec.yamlread"}


def test_a_no_op_run_imports_no_yaml(tmp_path: Path) -> None:
    (tmp_path / "skills" / "s").mkdir(parents=True)
    (tmp_path / "skills" / "s" / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (tmp_path / "s.eval.yaml").write_text(SPEC.replace("[python3, agent.py]", "[sh, -c, 'echo ONE']"))
    first = _imports_in_a_fresh_interpreter(["-m", "skillmake", "-q"], tmp_path)
    assert "yaml" in first  # the spec is parsed once
    again = _imports_in_a_fresh_interpreter(["-m", "skillmake", "-q"], tmp_path)
    assert "skillmake.engine.tasks" in again
    assert not {n for n in again if n.split(".")[0] == "yaml"}


def test_the_parser_key_follows_pyyaml_files_without_importing_them(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Another PyYAML version (its __init__.py) or its libyaml extension installed or not: another key."""
    package = tmp_path / "yaml"
    package.mkdir()
    (package / "__init__.py").write_text("__version__ = '6.0.1'\n")
    found = importlib.machinery.ModuleSpec("yaml", None, origin=str(package / "__init__.py"), is_package=True)
    found.submodule_search_locations = [str(package)]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: found if name == "yaml" else None)
    keys = []
    for change in (lambda: None, lambda: (package / "__init__.py").write_text("__version__ = '6.0.2'\n"),
                   lambda: (package / "_yaml.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\0" * 10)):
        change()
        monkeypatch.setattr(parsecache, "_parser", None)
        keys.append(parsecache._parser_digest())
    assert len(set(keys)) == 3
