"""engine/settled.py: what a settled spec's inputs digest, state signature and the store's signature see, and
when the end of a run may trust the store again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillmake.engine import settled
from skillmake.run.project import Project

SPEC = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
trials: 2
baseline: true
cases:
  - id: one
    prompt: say one
    input_files: [fixtures/one.txt]
    checks: [{type: contains, needle: ONE}]
  - id: two
    prompt: say two
    checks: [{type: python, script: checks/two.py}]
"""


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for rel, text in {"agent.py": "print('ONE')\n", "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n",
                      "fixtures/one.txt": "one\n", "checks/two.py": "def check(ctx):\n    return True\n",
                      "s.eval.yaml": SPEC}.items():
        _write(tmp_path, rel, text)
    return tmp_path


def _digest(root: Path) -> str | None:
    project = Project.open(str(root))  # a fresh load, as each run makes
    return settled.inputs_digest(project, project.specs[0])


@pytest.mark.parametrize(("rel", "text"), [
    ("skills/s/SKILL.md", "---\nname: s\ndescription: d\n---\nother body\n"),  # the skill tree
    ("skills/s/notes.md", "a new file in the skill\n"),
    ("fixtures/one.txt", "changed\n"),  # a staged fixture's content
    ("checks/two.py", "def check(ctx):\n    return False\n"),  # a file a check reads
    ("agent.py", "print('TWO')\n"),  # the command agent's program
    ("s.eval.yaml", SPEC.replace("needle: ONE", "needle: UNO")),  # the spec itself
    ("s.eval.yaml", SPEC.replace("trials: 2", "trials: 3")),
])
def test_each_input_changes_the_digest(root: Path, rel: str, text: str) -> None:
    before = _digest(root)
    assert before is not None
    _write(root, rel, text)
    assert _digest(root) != before


def test_a_touch_a_comment_or_a_setting_back_leave_it_as_it_was(root: Path) -> None:
    before = _digest(root)
    os.utime(root / "fixtures" / "one.txt", (1, 1))
    _write(root, "s.eval.yaml", SPEC + "# a comment\n")
    assert _digest(root) == before


def test_an_override_from_the_environment_changes_it(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _digest(root)
    monkeypatch.setenv("SKILLMAKE_TRIALS", "5")
    assert _digest(root) != before


def test_a_missing_fixture_is_no_digest_not_an_error(root: Path) -> None:
    project = Project.open(str(root))
    (root / "fixtures" / "one.txt").unlink()
    assert settled.inputs_digest(project, project.specs[0]) is None
    assert not settled.is_settled(project, project.specs[0])


def test_the_state_sees_a_removed_trial_folder_but_not_an_edit_inside_one(root: Path) -> None:
    project = Project.open(str(root))
    spec = project.specs[0]
    view = project.runs_dir / "s" / "one" / "with_skill" / "trial-0"
    view.mkdir(parents=True)
    (view / "output.txt").write_text("ONE\n")
    state = settled.state_signature(project, spec)
    (view / "output.txt").write_text("edited in place\n")  # a view's file: restored by a full plan, not seen here
    assert settled.state_signature(project, spec) == state
    (view / "output.txt").unlink()
    view.rmdir()
    assert settled.state_signature(project, spec) != state


def test_the_state_sees_the_report_files_and_the_index(root: Path) -> None:
    project = Project.open(str(root))
    spec = project.specs[0]
    _write(project.reports_dir, "s/report.json", "{}")
    _write(project.state_dir, "index/s.json", "{}")
    state = settled.state_signature(project, spec)
    (project.reports_dir / "s" / "report.json").write_text('{"touched": true}')
    assert settled.state_signature(project, spec) != state
    state = settled.state_signature(project, spec)
    (project.state_dir / "index" / "s.json").unlink()
    assert settled.state_signature(project, spec) != state


def test_a_deleted_object_or_record_changes_the_store_signature(root: Path) -> None:
    project = Project.open(str(root))
    store = project.store
    digest = store.put(b"an artifact")
    signature = settled.store_signature(store)
    assert settled.store_signature(store) == signature  # nothing changed: the same
    h = digest.removeprefix("sha256:")
    path = store.objects / h[:2] / h[2:]
    os.chmod(path, 0o644)
    path.unlink()
    assert settled.store_signature(store) != signature


def test_the_end_of_a_run_trusts_the_store_unless_something_was_set_aside(root: Path) -> None:
    project = Project.open(str(root))
    (project.state_dir / "index").mkdir(parents=True, exist_ok=True)
    mark = settled.quarantine_mark(project.store)
    settled.trust_store(project, mark)
    assert settled.store_trusted(project, settled.store_signature(project.store))
    project.store.put(b"written by a later run")
    assert not settled.store_trusted(project, settled.store_signature(project.store))
    settled.trust_store(project, mark)
    assert settled.store_trusted(project, settled.store_signature(project.store))
    project.store.quarantine_dir.mkdir(parents=True, exist_ok=True)  # something was set aside meanwhile
    settled.trust_store(project, mark)
    assert not settled.store_trusted(project, settled.store_signature(project.store))
