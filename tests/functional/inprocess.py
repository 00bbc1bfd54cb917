"""Running a plain skillmake command (compare, rejudge, …) in the test process, as `Project.run` runs it in a child.

A child pays for its interpreter and for importing the provider SDK (the anthropic one alone takes seconds) on every
command; a judge-heavy test makes dozens. `skillmake.commands.cli.main` is called instead, with the command's
environment, working folder and output captured, and the state a command leaves in its process put back afterwards,
so the next command starts as a fresh process would:

- os.environ, whole (commands set SKILLMAKE_RUN_ID and the command-line settings in it);
- the run lock (held "for the life of the process": released here, or the next command would wait for this one);
- the command-line settings (overrides), the console style, the memos a fresh process would not have;
- the working folder.

Kept, as in one long process: the imported modules and the judges' SDK clients (one per endpoint and environment).

Never for doit runs (doit's loader, its process pool and its own caches are not meant to run twice in a process), and
never where signals matter: a command installs SIGINT/SIGTERM handlers for its trials' processes, which in here would
be pytest's; that step is skipped, and the Ctrl-C tests keep a real child.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

import pytest

from .project import Project, Run, assert_views_match_reports, summary_counts


class InProcess:
    """`skillmake ARGS` in this process: what `Project.run` returns, from `cli.main`."""

    def __init__(self, capfd: pytest.CaptureFixture[str]) -> None:
        self.capfd = capfd  # fd-level, as a child's pipes: a terminal's width or colour never leaks in

    def run(self, project: Project, *args: str, env: dict[str, str] | None = None, check_views: bool = True) -> Run:
        """As `project.run(*args, env=env)`: the exit code, what it printed, and the agent calls it caused."""
        from skillmake.commands import cli

        before = len(project.calls())
        self.capfd.readouterr()  # what the test printed so far is not the command's
        with command_state(env), contextlib.chdir(project.root):
            code = cli.main(list(args))
        out, err = self.capfd.readouterr()
        trials, grades = summary_counts(out)
        if check_views and code in (0, 1):
            assert_views_match_reports(project.root)
        return Run(code=code, out=out, err=err, agent_calls=len(project.calls()) - before, trials=trials,
                   grades=grades)


@contextlib.contextmanager
def command_state(env: dict[str, str] | None = None) -> Iterator[None]:
    """Commands called in this process within: they start as in a fresh process (with `env` added to os.environ),
    and what they leave in the process is put back afterwards."""
    with _process_state(), _environment(env or {}):
        yield


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    """os.environ with `env` added, and exactly as it was afterwards (whatever the command set)."""
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _process_state() -> Iterator[None]:
    from skillmake.compare import pairs
    from skillmake.core import console, runlock
    from skillmake.engine import select
    from skillmake.run import process
    from skillmake.run.agents import cli_common
    from skillmake.spec import overrides, skillfiles

    # Memos a fresh process starts without: file digests by (path, inode, size, mtime) — a rewrite of the same size
    # within one mtime tick would read as unchanged — and CLI versions (the compare judge's by provider only).
    for memo in (skillfiles._memo, cli_common._versions, pairs._CLI_VERSIONS):
        memo.clear()
    held = dict(runlock._held)
    settings = dict(overrides._command_line)
    style, selected = console.style(), select._command_line
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(process, "install_interrupt_handlers", lambda **_: None)
        try:
            yield
        finally:
            for path in set(runlock._held) - set(held):
                os.close(runlock._held.pop(path))  # closing the descriptor releases the flock
            overrides._command_line.clear()
            overrides._command_line.update(settings)
            console._style = style
            select._command_line = selected
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers, \
        "a command in this process changed the signal handlers"
