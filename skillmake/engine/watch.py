"""`skillmake watch`: re-run what went stale whenever a spec, a skill file or a fixture is saved."""

from __future__ import annotations

import fnmatch
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from types import FrameType

from skillmake.core import oswalk
from skillmake.core.errors import EXIT_OK, EXIT_USAGE, SkillmakeError
from skillmake.spec.loader import SPEC_SUFFIXES
from skillmake.spec.model import AgentConfig

POLL_S = 0.1  # how often the watched files are stat'ed
QUIET_S = 0.3  # a burst of saves is one change once nothing more changed for this long
STOP_GRACE_S = 10.0  # how long a run may take to stop its trials after being interrupted
# Never watched: the store (every run writes there), VCS folders, and the names editors save through
# (vim's swap files and its `4913` write probe, emacs lock files and backups).
_IGNORED_DIRS = frozenset({".skillmake", ".git", ".hg", ".svn", "__pycache__", "node_modules"})
_IGNORED_FILES = ("*.swp", "*.swx", "*.swo", "*~", ".#*", "#*#", "4913", ".DS_Store")

HELP = """usage: skillmake watch [run options…] [TASK…]

Run what is stale, then again after every save of a spec, a skill file or a fixture
(bursts of saves are coalesced). Every option is passed to the run (e.g. -n 4).
Ctrl-C stops the run in progress and its trials, and exits.
"""

Snapshot = dict[str, tuple[int, int]]  # path → (mtime_ns, size)


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.modified)

    def describe(self, root: str, limit: int = 3) -> str:
        """One line: what changed, the first few paths of each kind, relative to the project root."""
        parts = []
        for verb, paths in (("changed", self.modified), ("added", self.added), ("removed", self.removed)):
            if not paths:
                continue
            shown = [os.path.relpath(p, root) for p in sorted(paths)[:limit]]
            more = f" and {len(paths) - limit} more" if len(paths) > limit else ""
            parts.append(f"{verb} {', '.join(shown)}{more}")
        return "; ".join(parts)


def ignored(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in _IGNORED_FILES)


@dataclass(frozen=True, slots=True, kw_only=True)
class Targets:
    """What is watched: single files, and folders whose whole tree is (a skill folder, a fixture folder)."""

    files: tuple[str, ...] = ()
    trees: tuple[str, ...] = ()


def targets(root: str) -> Targets:
    """The files a run depends on: the project's configuration, every spec, and for each valid one its skill
    (the whole folder), its fixtures and the AGENTS.md files the system prompt may come from. A broken spec
    contributes itself only (fixing it re-reads what it names)."""
    from skillmake.spec.config import CONFIG_FILE, PYPROJECT
    from skillmake.spec.validate import validate_files

    result = validate_files(None, root=root)
    files = set(result.files)
    trees = set()
    files.update(os.path.join(root, name) for name in (CONFIG_FILE, PYPROJECT, "AGENTS.md"))
    for spec in result.specs:
        skill = spec.skill
        if skill.kind == "folder":
            trees.add(skill.path)
        else:
            files.add(skill.path)
            files.add(os.path.join(os.path.dirname(skill.path), "AGENTS.md"))
        for case in spec.cases:
            for item in case.input_files:
                (trees if os.path.isdir(item.source) else files).add(item.source)
            # The files the grade key reads: a check's script and its schema file.
            files.update(os.path.join(spec.folder, str(c.raw[key])) for c in case.checks
                         for key in ("script", "schema_file") if key in c.raw)
        # The files the trial keys read: each arm's agent program (a script beside the spec), and the trigger
        # agent's; and the distractors whose names and descriptions the trigger keys hold.
        agents = [arm.agent for arm in spec.arms]
        if spec.trigger_tests is not None:
            agents.append(spec.trigger_tests.agent)
            files.update(d.source for d in spec.trigger_tests.distractors if d.source)
        for agent in agents:
            files.update(command_files(agent, spec.folder))
    return Targets(files=tuple(sorted(files)), trees=tuple(sorted(trees)))


def command_files(agent: AgentConfig, folder: str) -> list[str]:
    """The agent's program files beside the spec, as the trial key finds them (keys.command_files)."""
    from skillmake.run.keys import command_files as digests

    return [os.path.join(folder, arg) for arg in digests(agent, folder)]


def _walk(folder: str) -> list[str]:
    found: list[str] = []
    for parent, dirs, names in oswalk.walk(folder):
        dirs[:] = [d for d in dirs if d not in _IGNORED_DIRS]
        found.extend(os.path.join(parent, n) for n in names if not ignored(n))
    return found


def snapshot(watched: Targets, root: str) -> Snapshot:
    """mtime and size of every watched file that exists: the listed files, every file of the watched trees
    (walked again each time, so a new file is seen) and every spec file (a new spec is a change too)."""
    out: Snapshot = {}
    paths = {*watched.files, *_specs(root)}
    for tree in watched.trees:
        paths.update(_walk(tree))
    for path in paths:
        if ignored(os.path.basename(path)):
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        out[path] = (st.st_mtime_ns, st.st_size)
    return out


def _specs(root: str) -> list[str]:
    from skillmake.spec.discovery import discover

    try:
        return discover(root)
    except SkillmakeError:  # a broken configuration: the run says what is wrong; its file is watched
        return []


def diff(before: Snapshot, after: Snapshot) -> Change:
    return Change(added=tuple(sorted(after.keys() - before.keys())),
                  removed=tuple(sorted(before.keys() - after.keys())),
                  modified=tuple(sorted(p for p in before.keys() & after.keys() if before[p] != after[p])))


class _Stop(Exception):
    """SIGINT or SIGTERM arrived: stop the run in progress and leave the loop."""


class Watcher:
    """The polling loop: snapshot, wait for a settled change, run the child, repeat."""

    def __init__(self, root: str, args: list[str]) -> None:
        self.root = root
        self.args = args
        self.child: subprocess.Popen[bytes] | None = None

    def loop(self) -> int:
        watched = targets(self.root)
        before = snapshot(watched, self.root)
        if self.cycle("first run") == EXIT_USAGE:
            return EXIT_USAGE  # the options are wrong: no save will fix that
        while True:
            say("watching for changes (Ctrl-C to stop)")
            change, after = self.wait_for_change(watched, before)
            if any(p.endswith((*SPEC_SUFFIXES, ".toml")) for p in (*change.added, *change.modified, *change.removed)):
                watched = targets(self.root)  # a spec changed: what it names may have too
                after = snapshot(watched, self.root)
            before = after
            self.cycle(change.describe(self.root))
            # What was saved while the run ran is compared with `before`, taken before it started.

    def wait_for_change(self, watched: Targets, before: Snapshot) -> tuple[Change, Snapshot]:
        """Block until the watched files differ from `before` and then stay unchanged for QUIET_S."""
        while True:
            time.sleep(POLL_S)
            now = snapshot(watched, self.root)
            if diff(before, now):
                break
        settled = time.monotonic() + QUIET_S
        while time.monotonic() < settled:
            time.sleep(POLL_S)
            later = snapshot(watched, self.root)
            if later != now:
                now, settled = later, time.monotonic() + QUIET_S
        return diff(before, now), now

    def cycle(self, why: str) -> int:
        say(f"{why} — running skillmake {' '.join(self.args)}".rstrip())
        # A session of its own: Ctrl-C in the terminal reaches this loop only, which then stops the run the
        # way a Ctrl-C would (SIGINT: the run stops its trials and keeps what finished).
        self.child = subprocess.Popen([sys.executable, "-m", "skillmake", *self.args], cwd=os.getcwd(),
                                      start_new_session=True)
        code = self.child.wait()
        self.child = None
        say(f"exit {code}")
        return code

    def stop_child(self) -> None:
        child = self.child
        if child is None or child.poll() is not None:
            return
        child.send_signal(signal.SIGINT)
        try:
            child.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)  # it would not stop: nothing it started may outlive the watch
            child.wait()


def say(line: str) -> None:
    print(f"skillmake watch: {line}", flush=True)


def main(args: list[str]) -> int:
    if "-h" in args or "--help" in args:
        print(HELP, end="")
        return EXIT_OK
    root = _root()
    if not os.path.isdir(root):
        print(f"skillmake watch: no such folder: {root}", file=sys.stderr)
        return EXIT_USAGE
    watcher = Watcher(root, args)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        raise _Stop

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return watcher.loop()
    except (_Stop, KeyboardInterrupt):
        # Further signals must not cut the clean-up short.
        for s in previous:
            signal.signal(s, signal.SIG_IGN)
        watcher.stop_child()
        say("stopped")
        return EXIT_OK
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _root() -> str:
    """The project root the run will use: `--root` (SKILLMAKE_ROOT), else found upward from here."""
    from skillmake.spec.config import find_root

    return find_root()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
