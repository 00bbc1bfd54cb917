"""Bad input that used to get past validation, through the real `skillmake` CLI: a folder 1,300 levels deep
anywhere in the project, and one spec whose tasks cannot be planned — neither may stop the good specs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillmake.core import fstree
from tests.deepfolder import make_deep

from .project import ONE_SPEC, Project, one_case


@pytest.fixture(autouse=True)
def _no_inherited_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("SKILLMAKE_ROOT", "SKILLMAKE_STORE", "SKILLMAKE_TRIALS", "SKILLMAKE_TIMEOUT", "SKILLMAKE_JOBS",
                "SKILLMAKE_COMMAND_LINE_SETTINGS", "SKILLMAKE_ALLOWED_ROOTS"):
        monkeypatch.delenv(var, raising=False)


_DEEP: list[Path] = []


@pytest.fixture(autouse=True)
def _remove_deep_folders() -> Iterator[None]:
    """pytest's own clean-up of old temporary folders recurses (shutil.rmtree): a deep folder left there would
    crash every later pytest run on this machine. Removed here, iteratively."""
    yield
    while _DEEP:
        fstree.remove_tree(_DEEP.pop())


def deep_folder(top: Path, levels: int = 1300) -> None:
    """`top`/d/d/…/d, `levels` deep (tests/deepfolder.py), removed after the test."""
    _DEEP.append(make_deep(top, levels))


def project(root: Path, **extra: str) -> Project:
    return one_case(root, **{"skillmake.toml": "", **extra})


@pytest.mark.parametrize("config", ["", 'specs = ["**/*.eval.yaml"]\n'])
def test_a_folder_1300_deep_that_no_spec_uses_never_stops_validate_or_a_run(tmp_path: Path, config: str) -> None:
    p = project(tmp_path / "proj", **{"skillmake.toml": config})
    deep_folder(p.root / "unused")
    done = subprocess.run([sys.executable, "-m", "skillmake", "validate"], cwd=p.root, capture_output=True,
                          text=True, timeout=300)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr[-2000:]
    assert done.stdout == "1 spec(s) valid\n"
    run = p.run(check_views=False)
    assert "RecursionError" not in run.err + run.out
    assert run.code == 0, run.err[-2000:]
    assert run.agent_calls == 1


def test_a_folder_1300_deep_inside_a_skill_is_validated_without_a_crash(tmp_path: Path) -> None:
    p = project(tmp_path / "proj")
    deep_folder(p.root / "skills/a/notes")
    (p.root / "skills/a/notes/d/leak.md").symlink_to(tmp_path)  # still found, below the deep part's start
    done = subprocess.run([sys.executable, "-m", "skillmake", "validate"], cwd=p.root, capture_output=True,
                          text=True, timeout=300)
    assert "RecursionError" not in done.stderr
    assert done.stderr.startswith("a.eval.yaml:1:8 /skill: skill file 'notes/d/leak.md' links outside the skill "
                                  "folder"), done.stderr[-2000:]
    assert done.returncode == 2


def test_a_spec_whose_tasks_cannot_be_planned_fails_alone_and_every_other_spec_runs(tmp_path: Path) -> None:
    """A crash while planning one spec (as a lone surrogate once did in its trial key) is that spec's failing task,
    said in one line, after every other spec ran and was reported; no traceback."""
    p = project(tmp_path / "proj", **{"b.eval.yaml": ONE_SPEC.replace("id: one", "id: two")})
    # The crash is injected into the real CLI, in its own process: no input is known to cause one any more.
    code = ("import sys\n"
            "import skillmake.engine.tasks as tasks\n"
            "real = tasks.plan_spec\n"
            "def plan(project, spec):\n"
            "    if spec.name == 'a':\n"
            "        raise TypeError('str is not valid UTF-8: surrogates not allowed')\n"
            "    return real(project, spec)\n"
            "tasks.plan_spec = plan\n"
            "from skillmake.commands.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    run = p.run(cmd=[sys.executable, "-c", code, "-n", "2"], check_views=False)
    assert "Traceback" not in run.err + run.out
    assert run.code == 1
    assert run.agent_calls == 1 and p.calls() == ["two with_skill 0"]
    assert (p.root / ".skillmake/reports/b/report.json").is_file()
    assert not (p.root / ".skillmake/reports/a").exists()
    said = "a: its tasks could not be planned: TypeError: str is not valid UTF-8: surrogates not allowed"
    assert f"skillmake: {said}\n" in run.err
    assert f"report:a  FAILED\n  {said}\n" in run.out + run.err
    again = p.run(cmd=[sys.executable, "-c", code], check_views=False)  # still failing, b served from the store
    assert (again.code, again.agent_calls) == (1, 0)


def test_a_lone_surrogate_in_a_json_spec_is_its_error_and_the_other_spec_runs(tmp_path: Path) -> None:
    bad = ('{"skill": "skills/a", "agent": {"kind": "command", "command": ["python3", "agent.py"]},\n'
           ' "cases": [{"id": "x", "prompt": "bad \\ud800 here", "checks": [{"type": "contains", "needle": "X"}]}]}\n')
    p = project(tmp_path / "proj", **{"bad.eval.json": bad})
    run = p.run(check_views=False)
    assert "Traceback" not in run.err + run.out
    assert "bad.eval.json:2:34 /: not valid JSON: a lone surrogate \\ud800 in this string is not a character" \
        in run.err + run.out
    assert run.code != 0
    assert p.calls() == ["one with_skill 0"]
    assert (p.root / ".skillmake/reports/a/report.json").is_file()


def test_init_finds_the_skill_beside_a_folder_1300_deep(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    (root / "skills/x").mkdir(parents=True)
    (root / "skills/x/SKILL.md").write_text("---\nname: x\ndescription: d\n---\nbody\n")
    deep_folder(root / "unused")
    done = subprocess.run([sys.executable, "-m", "skillmake", "init"], cwd=root, capture_output=True, text=True,
                          timeout=300)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr[-2000:]
    assert (root / "skills/x.eval.yaml").is_file()
