"""The store and the views as damage leaves them: a record naming a lost or corrupt object is stale and runs again
(explain says which object); a removed or hand-edited view, or a garbage report.json, is rebuilt by a plain run;
`--failed` selects from records; temp files a killed writer left are swept; the first run leaves the index."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from .project import Project, copy_of, template

AGENT = r'''
import os, sys
from pathlib import Path
here = Path(__file__).resolve().parent
with open(here / "calls.log", "a") as log:
    log.write(os.environ["SKILLMAKE_CASE"] + " " + os.environ["SKILLMAKE_ARM"] + "\n")
prompt = sys.stdin.read().strip()
Path("made.txt").write_text("made by " + prompt + "\n")
print("HELLO " + prompt.upper())
'''

SPEC = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
cases:
  - {id: one, prompt: first words, checks: [{type: contains, needle: HELLO}]}
  - {id: two, prompt: second words, checks: [{type: contains, needle: HELLO}]}
"""


def _build(root: Path, spec: str = SPEC) -> Project:
    p = Project.empty(root, {"agent.py": AGENT, "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n",
                             "t.eval.yaml": spec})
    first = p.run()
    assert first.agent_calls == 2, first.out + first.err
    return p


@pytest.fixture
def p(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Project:
    """The project after its first run: two cases, one trial each, both pass."""
    return copy_of(template(tmp_path_factory, "integrity", _build), tmp_path / "proj")


def _view(p: Project, case: str = "one") -> Path:
    return p.root / ".skillmake" / "runs" / "t" / case / "with_skill" / "trial-0"


def _object(p: Project, digest: str) -> Path:
    h = digest.removeprefix("sha256:")
    return p.root / ".skillmake" / "objects" / h[:2] / h[2:]


def _damage(path: Path, data: bytes) -> None:
    path.chmod(0o644)
    path.write_bytes(data)


def test_a_corrupt_output_object_makes_its_trial_stale_until_it_runs_again(p: Project) -> None:
    trial = orjson.loads((_view(p) / "trial.json").read_bytes())
    obj = _object(p, trial["outputs"]["output"])
    good = obj.read_bytes()
    _damage(obj, bytes([good[0] ^ 0x20]) + good[1:])  # one flipped bit, same size
    explained = p.run("explain", check_views=False)
    assert f"trial:t/one/with_skill/0  output object {trial['outputs']['output'][:19]}… is corrupt" in explained.out
    assert "would run 1 trial " in explained.out
    report = p.run("report")  # a re-render shows the cell without a result (its record is set aside) …
    assert report.code == 1 and "1 of 2 trials have no grade" in report.out
    run = p.run()  # … and the next run draws it again
    assert (run.code, run.agent_calls) == (0, 1)
    assert (_view(p) / "output.txt").read_text() == "HELLO FIRST WORDS\n"
    again = p.run()
    assert (again.code, again.agent_calls, again.trials) == (0, 0, 0)


def test_a_lost_object_makes_its_trial_stale(p: Project) -> None:
    trial = orjson.loads((_view(p, "two") / "trial.json").read_bytes())
    _object(p, trial["outputs"]["output"]).unlink()
    explained = p.run("explain", check_views=False)
    assert f"trial:t/two/with_skill/0  output object {trial['outputs']['output'][:19]}… is missing" in explained.out
    run = p.run()
    assert (run.code, run.agent_calls) == (0, 1)
    assert (_view(p, "two") / "output.txt").read_text() == "HELLO SECOND WORDS\n"


def test_a_truncated_workspace_tree_is_stale_not_a_workspace_never_kept(p: Project) -> None:
    trial = orjson.loads((_view(p) / "trial.json").read_bytes())
    tree = _object(p, trial["workspace"])
    _damage(tree, tree.read_bytes()[:10])
    run = p.run()
    assert (run.code, run.agent_calls) == (0, 1)
    assert (_view(p) / "workspace" / "made.txt").read_text() == "made by first words\n"
    assert not (_view(p) / "workspace.txt").exists()
    assert p.run().agent_calls == 0


def test_removed_views_are_checked_out_again_by_a_plain_run(p: Project) -> None:
    import shutil

    shutil.rmtree(p.root / ".skillmake" / "runs" / "t" / "one")
    run = p.run()  # assert_views_match_reports: every cell folder is there and shows its records
    assert (run.code, run.agent_calls) == (0, 0)
    assert (_view(p) / "output.txt").read_text() == "HELLO FIRST WORDS\n"
    shutil.rmtree(p.root / ".skillmake" / "runs")
    run = p.run()
    assert (run.code, run.agent_calls) == (0, 0)
    assert (_view(p, "two") / "workspace" / "made.txt").is_file()


def test_hand_edited_view_files_are_restored(p: Project) -> None:
    view = _view(p)
    grade, output, made = (view / "grade.json").read_bytes(), (view / "output.txt").read_bytes(), \
        (view / "workspace" / "made.txt").read_bytes()
    (view / "grade.json").write_text('{"outcome": "fail"}')
    (view / "output.txt").write_text("edited by hand\n")
    (view / "workspace" / "made.txt").write_text("edited too\n")
    run = p.run()
    assert (run.code, run.agent_calls) == (0, 0)
    assert (view / "grade.json").read_bytes() == grade
    assert (view / "output.txt").read_bytes() == output
    assert (view / "workspace" / "made.txt").read_bytes() == made
    (view / "grade.json").write_text('{"outcome": "fail"}')
    assert p.run("report").code == 0  # a re-render restores it too
    assert (view / "grade.json").read_bytes() == grade


def test_a_garbage_report_json_is_regenerated_by_a_plain_run(p: Project) -> None:
    report = p.root / ".skillmake" / "reports" / "t" / "report.json"
    report.write_text("garbage")
    run = p.run()
    assert (run.code, run.agent_calls) == (0, 0)
    assert orjson.loads(report.read_bytes())["spec"]["name"] == "t"


FAILING = SPEC + "  - {id: bad, prompt: third words, checks: [{type: contains, needle: NEVER}]}\n"


def test_failed_selects_from_records_not_from_a_garbage_report(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "proj", {"agent.py": AGENT, "t.eval.yaml": FAILING,
                                          "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n"})
    assert p.run().agent_calls == 3
    (p.root / ".skillmake" / "reports" / "t" / "report.json").write_text('{"rows": []}')
    run = p.run("--failed", "--resample", check_views=False)
    assert run.agent_calls == 1 and p.calls()[-1] == "bad with_skill"


@pytest.fixture
def killed_writer(p: Project) -> Iterator[Path]:
    """A run that died (SIGKILL) in the middle of writing an object: its temp file is still in objects/."""
    script = textwrap.dedent(f"""
        import os, signal, tempfile
        from skillmake.store.objects import Store
        store = Store({str(p.root / '.skillmake')!r})
        store.begin_run()
        folder = store.objects / "ab"
        folder.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".cdef.", suffix=".tmp")
        os.write(fd, b"half an obj")
        print(tmp, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    tmp = Path(proc.stdout.strip())
    old = time.time() - 60
    os.utime(tmp, (old, old))
    yield tmp


def test_temp_files_a_killed_run_left_are_swept_by_the_next_run(p: Project, killed_writer: Path) -> None:
    assert killed_writer.exists()
    run = p.run()
    assert (run.code, run.agent_calls) == (0, 0)
    assert not killed_writer.exists()
    assert not list((p.root / ".skillmake").rglob(".*.tmp"))
    assert [m for m in (p.root / ".skillmake" / "running").iterdir()] == []  # both runs' marks are gone


def test_the_first_run_leaves_the_index_and_the_next_no_op_opens_no_record(tmp_path: Path) -> None:
    p = Project.empty(tmp_path / "proj", {"agent.py": AGENT, "t.eval.yaml": SPEC,
                                          "skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n"})
    assert p.run().agent_calls == 2
    index = orjson.loads((p.root / ".skillmake" / "index" / "t.json").read_bytes())
    assert len(index["trials"]) == 2
    actions = str(p.root / ".skillmake" / "actions")
    opened = _opens_under(actions, lambda: _plan(p.root))
    assert opened == [], opened
    (p.root / ".skillmake" / "index" / "t.json").unlink()  # lost: one pass reads the records and writes it again
    assert len(_opens_under(actions, lambda: _plan(p.root))) == 2
    assert _opens_under(actions, lambda: _plan(p.root)) == []
    run = p.run()
    assert (run.code, run.agent_calls, run.trials) == (0, 0, 0)


def _plan(root: Path) -> None:
    from skillmake.engine.plan import plan_spec
    from skillmake.run.project import Project as Opened

    project = Opened.open(str(root))
    for spec in project.specs:
        plan = plan_spec(project, spec)
        assert all(i.trial_cached and i.grade_cached for i in plan.items)


_watch: list[str] = []  # the audit hook below is installed once per process and records only while a test asks


def _hook(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _watch and isinstance(args[0], str) and args[0].startswith(_watch[0]):
        _watch.append(args[0])


def _opens_under(prefix: str, action: Callable[[], None]) -> list[str]:
    if not getattr(sys, "_skillmake_integrity_hook", False):
        sys.addaudithook(_hook)
        sys._skillmake_integrity_hook = True  # type: ignore[attr-defined]
    _watch[:] = [prefix]
    try:
        action()
        return _watch[1:]
    finally:
        _watch.clear()


def test_a_tree_lost_between_plan_and_checkout_is_not_called_never_kept(p: Project) -> None:
    import shutil

    from skillmake.engine.plan import plan_spec
    from skillmake.engine.report import cells_of
    from skillmake.results.checkout import checkout
    from skillmake.run.project import Project as Opened

    project = Opened.open(str(p.root))
    plan = plan_spec(project, project.specs[0])
    cells = cells_of(project, plan)  # the records, read while the tree was there
    trial = orjson.loads((_view(p) / "trial.json").read_bytes())
    _object(p, trial["workspace"]).unlink()
    shutil.rmtree(_view(p))
    checkout(project, cells)
    note = (_view(p) / "workspace.txt").read_text()
    assert f"workspace tree {trial['workspace'][:19]}… is missing or corrupt" in note, note
    assert p.run().agent_calls == 1  # and the next run draws it again


def test_a_lost_index_folder_costs_no_checkout_of_intact_views_and_still_catches_an_edit(p: Project) -> None:
    import shutil

    view = _view(p)
    before = (view / "trial.json").stat().st_ino
    shutil.rmtree(p.root / ".skillmake" / "index")  # the plan's index and the views' stat, both lost
    (_view(p, "two") / "output.txt").write_text("edited by hand\n")
    run = p.run()
    assert (run.code, run.agent_calls) == (0, 0)
    assert (view / "trial.json").stat().st_ino == before  # intact: kept as it was, not written again
    assert (_view(p, "two") / "output.txt").read_text() == "HELLO SECOND WORDS\n"  # edited: checked out again
    assert (p.root / ".skillmake" / "index" / "t.views.json").is_file()
