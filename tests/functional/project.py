"""A throwaway skillmake project for functional tests, and a runner for the real CLI / doit."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

AGENT = '''\
import os, sys
from pathlib import Path
here = Path(__file__).resolve().parent
with open(here / "calls.log", "a") as log:
    env = os.environ
    log.write(env["SKILLMAKE_CASE"] + " " + env["SKILLMAKE_ARM"] + " " + env["SKILLMAKE_TRIAL"] + "\\n")
prompt = sys.stdin.read().strip()
skill = os.environ.get("SKILLMAKE_SKILL", "")
body = Path(skill, "SKILL.md").read_text() if skill else ""
for name in sorted(os.listdir(".")):
    if name.endswith(".txt"):
        prompt += " " + Path(name).read_text().strip()
tag = " [" + env["SKILLMAKE_ARM"] + " " + env["SKILLMAKE_TRIAL"] + "]"  # every trial's output is distinct
print((prompt.upper() + "!" if "UPPERCASE" in body else prompt) + tag)
'''

SPEC_A = '''\
skill: skills/alpha
agent: {kind: command, command: [python3, agent.py]}
trials: 2
baseline: true
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: ONE}]
  - id: two
    prompt: say two
    input_files: [fixtures/shared.txt]
    checks: [{type: contains, needle: TWO}]
  - id: three
    prompt: say three
    input_files: [fixtures/only3.txt]
    checks: [{type: regex, pattern: "THREE"}]
'''

SPEC_B = '''\
skill: skills/beta
agent: {kind: command, command: [python3, agent.py]}
trials: 2
baseline: true
variants:
  - name: alt
    agent: {model: small-1}
cases:
  - id: four
    prompt: say four
    input_files: [fixtures/shared.txt]
    checks: [{type: contains, needle: FOUR}]
  - id: five
    prompt: say five
    checks: [{type: contains, needle: FIVE}]
'''


@dataclass
class Run:
    code: int
    out: str
    err: str
    agent_calls: int
    trials: int
    grades: int


class Project:
    """A project folder with two skills, fixtures, two specs and an agent that logs every call."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.write("agent.py", AGENT)
        self.write("skills/alpha/SKILL.md", "---\nname: alpha\ndescription: shouts\n---\nAnswer in UPPERCASE.\n")
        self.write("skills/alpha/reference.md", "extra notes\n")
        self.write("skills/beta/SKILL.md", "---\nname: beta\ndescription: shouts too\n---\nUse UPPERCASE.\n")
        self.write("fixtures/shared.txt", "shared input\n")
        self.write("fixtures/only3.txt", "three's input\n")
        self.write("alpha.eval.yaml", SPEC_A)
        self.write("beta.eval.yaml", SPEC_B)

    @classmethod
    def empty(cls, root: Path, files: dict[str, str] | None = None) -> Project:
        """A project folder with only `files` (relative path → text), none of the default ones."""
        project = cls.__new__(cls)
        project.root = root
        for rel, text in (files or {}).items():
            project.write(rel, text)
        return project

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text()

    def replace(self, rel: str, old: str, new: str) -> None:
        text = self.read(rel)
        assert old in text, f"{old!r} not in {rel}"
        self.write(rel, text.replace(old, new))

    def calls(self) -> list[str]:
        log = self.root / "calls.log"
        return log.read_text().splitlines() if log.exists() else []

    def run(self, *args: str, env: dict[str, str] | None = None, cmd: list[str] | None = None,
            check_views: bool = True) -> Run:
        """Run `skillmake ARGS` (or `cmd`) in the project; count the agent calls it caused. After a run that
        finished, every cell folder must be a faithful view of what report.json says (assert_views_match)."""
        before = len(self.calls())
        full_env = dict(os.environ, **(env or {}))
        argv = cmd or [sys.executable, "-m", "skillmake", *args]
        proc = subprocess.run(argv, cwd=self.root, env=full_env, capture_output=True, text=True, timeout=300)
        trials, grades = summary_counts(proc.stdout)
        if check_views and proc.returncode in (0, 1):
            assert_views_match_reports(self.root)
        return Run(code=proc.returncode, out=proc.stdout, err=proc.stderr,
                   agent_calls=len(self.calls()) - before, trials=trials, grades=grades)


def summary_counts(out: str) -> tuple[int, int]:
    """(trials ran, grades ran) from the closing line; (0, 0) for the nothing-stale line or no run."""
    m = re.search(r"ran (\d+) trials?\b.*? and (\d+) grades?\b", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def assert_views_match_reports(root: Path) -> int:
    """Every cell of every report.json has its own folder runs/<spec>/<case>/<arm>/trial-<k>/ whose trial.json
    and grade.json carry the report's keys for that cell and the cell's own labels; no other cell folder
    exists. Returns how many cells were checked."""
    import orjson

    state = root / ".skillmake"
    checked = 0
    for report_file in sorted((state / "reports").glob("*/report.json")):
        report = orjson.loads(report_file.read_bytes())
        spec = report["spec"]["name"]
        expected = set()
        for row in report["rows"]:
            cells = [state / "runs" / spec / row["case"] / row["arm"] / f"trial-{i}" for i in range(row["expected"])]
            expected.update(cells)
            if len(row["trial_keys"]) != row["expected"]:  # some trials have no grade: their folders still exist
                assert all(f.is_dir() for f in cells), cells
                continue
            for i, (tkey, gkey) in enumerate(zip(row["trial_keys"], row["grade_keys"], strict=True)):
                folder = cells[i]
                trial = orjson.loads((folder / "trial.json").read_bytes())
                grade = orjson.loads((folder / "grade.json").read_bytes())
                labels = {"spec": spec, "case": row["case"], "arm": row["arm"], "k": i}
                assert {k: trial["labels"][k] for k in labels} == labels, folder
                assert {k: grade["labels"][k] for k in labels} == labels, folder
                assert (trial["key"], grade["key"], grade["trial_key"]) == (tkey, gkey, tkey), folder
                for name in ("grading.json", "timing.json", "output.txt"):
                    assert (folder / name).is_file(), folder / name
                assert (folder / "workspace").is_dir(), folder
                checked += 1
        present = set((state / "runs" / spec).glob("*/*/trial-*"))
        assert present <= expected | {p for p in present if p.name.startswith(".")}, present - expected
    return checked


# -- populated projects, built once and copied --------------------------------------------------------------------
# A first run of the default project (24 trials and their grades) takes seconds; a test that only needs one to have
# happened starts from a copy of a project built once per test process instead. The store is inside the project
# (.skillmake/), so a copy is a complete, independent project.

_templates: dict[str, Path] = {}
_builders: dict[str, str] = {}  # template name → the build that made it (one name, one build)


def template(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Project]) -> Path:
    """The folder of the project `build(root)` makes (its runs included), built the first time `name` is asked
    for in this test process; give each test its own `copy_of` it, never the folder itself. A name always
    means the same build."""
    origin = f"{build.__module__}.{build.__qualname__}"
    if name in _builders and _builders[name] != origin:  # two modules of one worker shared a name, and the second
        raise AssertionError(f"template {name!r} is built by {_builders[name]}, not {origin}: name it apart")
    if name not in _templates:
        folder = factory.mktemp(name)
        with isolated(folder / "home"):
            _templates[name] = build(folder / "proj").root
        _builders[name] = origin
    return _templates[name]


def populated(factory: pytest.TempPathFactory) -> Path:
    """The default project after its first `skillmake` run (24 trials, all graded)."""
    def build(root: Path) -> Project:
        project = Project(root)
        first = project.run()
        assert first.code == 0 and first.agent_calls == 24, first.out + first.err
        return project
    return template(factory, "populated", build)


DODO = "from skillmake.dodo import *  # noqa: F403\n"


def populated_with_dodo(factory: pytest.TempPathFactory) -> Path:
    """The default project with the three-line dodo.py, after its first plain `doit` run."""
    def build(root: Path) -> Project:
        project = Project(root)
        project.write("dodo.py", DODO)
        first = project.run(cmd=[sys.executable, "-m", "doit"])
        assert first.code == 0 and first.agent_calls == 24, first.out + first.err
        return project
    return template(factory, "populated-dodo", build)


def copy_of(template: Path, dest: Path) -> Project:
    """A copy of a `template` project at `dest`, as if its runs had run there. doit's db names the files a task
    depends on by absolute path: those are moved to `dest` (or every spec would be validated again on the next
    run). The index of files the store has read knows them by inode, so the copy's first run reads them again —
    a miss, which is correct. Nothing else in a project may name its own folder; that is checked."""
    shutil.copytree(template, dest, symlinks=True)
    old, new = str(template), str(dest)
    db = dest / ".skillmake" / "doit.db"
    if db.exists():
        with contextlib.closing(sqlite3.connect(db)) as con, con:
            rows = con.execute("SELECT task_id, task_data FROM doit").fetchall()
            con.executemany("UPDATE doit SET task_data = ? WHERE task_id = ?",
                            [(data.replace(f'"{old}/', f'"{new}/'), task) for task, data in rows])
            left = [task for task, data in con.execute("SELECT task_id, task_data FROM doit") if old in data]
        assert not left, f"doit's db still names the template's folder {old} for {left}"
    # (doit.db's free pages may still hold the old rows' bytes: its rows were checked above.)
    naming = [p for p in dest.rglob("*") if p.is_file() and not p.is_symlink() and p != db
              and old.encode() in p.read_bytes()]
    assert not naming, f"these files name the template's folder {old}: {naming}"
    return Project.empty(dest)


@contextlib.contextmanager
def isolated(home: Path) -> Iterator[None]:
    """What the autouse fixture in tests/conftest.py does for a test's own runs, for runs made outside any one
    test (a template): HOME and the caches under `home`, no provider keys, proxies that lead nowhere."""
    home.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
        patch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "CODEX_API_KEY"):
            patch.delenv(var, raising=False)
        patch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
        patch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
        patch.setenv("NO_PROXY", "127.0.0.1,localhost")
        yield


# The smallest project: one spec (a.eval.yaml, one case) on skill `a`, run by the logging AGENT.
ONE_SKILL = "---\nname: a\ndescription: answers\n---\nAnswer in UPPERCASE.\n"
ONE_SPEC = """\
skill: skills/a
agent: {kind: command, command: [python3, agent.py]}
cases:
  - id: one
    prompt: say one
    checks: [{type: contains, needle: ONE}]
"""


def one_case(root: Path, **files: str) -> Project:
    """The one-spec project at `root`; `files` (relative path → text) are added, or replace its own."""
    return Project.empty(root, {"agent.py": AGENT, "skills/a/SKILL.md": ONE_SKILL, "a.eval.yaml": ONE_SPEC, **files})
