"""`skillmake` as doit with a built-in loader (the way Nikola embeds doit): no dodo.py needed."""

from __future__ import annotations

import os
import sys
import types
from typing import Any

from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain

from skillmake.core import console
from skillmake.core.errors import EXIT_CAPPED, EXIT_FAILED, EXIT_INTERNAL, EXIT_INVALID, EXIT_NO_SPECS
from skillmake.engine.config import scan_entry_points_once


class _Main(DoitMain):
    """doit's commands, with a `clean` that says one line instead of one per trial view (build/clean.py) and an
    `info` that exits 0 for a stale task (build/info.py)."""

    def get_cmds(self) -> Any:
        from skillmake.engine.clean import Clean
        from skillmake.engine.info import Info

        cmds = super().get_cmds()
        cmds["clean"] = Clean
        cmds["info"] = Info  # a stale task is not a failed verdict: exit 0
        return cmds


def _module() -> dict[str, Any]:
    from skillmake.engine import creators

    return creators.namespace()


scan_entry_points_once()  # before the first DoitMain: it and the option table below look plugins up


def doit_options() -> dict[str, list[tuple[str, str, bool, str]]]:
    """Every doit command and its options as (short, long, takes a value, help), read from doit itself so the
    front end checks a command line against exactly what doit would accept."""
    main = DoitMain(ModuleTaskLoader(types.ModuleType("skillmake_options")))
    commands = main.get_cmds()
    out: dict[str, list[tuple[str, str, bool, str]]] = {}
    for name in commands:
        command = commands.get_plugin(name)(task_loader=main.task_loader, config={}, bin_name="skillmake",
                                            cmds=commands)
        out[name] = [(o.short or "", o.long or "", o.type is not bool, (o.help or "").split("\n")[0])
                     for o in command.get_options()]
    return out


def doit_help(command: str) -> int:
    """doit's own help for one of its commands (`skillmake list --help`)."""
    stdout = sys.stdout
    sys.stdout = console.PipeSafe(stdout)
    try:
        code: Any = DoitMain(ModuleTaskLoader(_module())).run(["help", command])
    finally:
        sys.stdout = stdout
    return int(code or 0)


def run_doit(args: list[str], *, full_graph: bool = False) -> int:
    """Run doit over the built-in loader; `full_graph` creates up-to-date tasks too (for `-v`'s lines)."""
    from skillmake.engine import heap, reporter, scope, tasks
    from skillmake.run import process

    heap.start()  # before planning: what it builds lives for the whole run (heap.py)
    try:
        # Called without the front end (which installs them first, and then this does nothing): an interrupted
        # run stops its trials' processes and exits 130 with one line, as plain doit does.
        process.install_interrupt_handlers()

        tasks.FULL_GRAPH = full_graph or scope.needs_full_graph(args)
        tasks.COMMAND = list(args) or ["run"]
        words = [a for a in args if not a.startswith("-")]
        if not words or words[0] not in ("dumpdb", "tabcompletion", "help"):
            # Load the project before doit does: a project that cannot be loaded (no spec, a broken configuration)
            # raises a SkillmakeError the front end prints in one line with its exit code, where doit would print a
            # traceback. The project is cached, so doit's loader does not load it again.
            tasks.project_at(tasks.current_root())
        loader = ModuleTaskLoader(_module())
        stdout = sys.stdout
        sys.stdout = console.PipeSafe(stdout)  # doit's commands print with no guard
        try:
            code = int(_Main(loader).run(args) or 0)  # `doit clean` and a few others return None for success
        finally:
            sys.stdout = stdout
    finally:
        heap.release()  # the reporter released it if the tasks ran; a listing or a load error did not
    return exit_code(code, reporter.LAST_RUN, runs=scope.runs(args))


def exit_code(doit_code: int, run: dict[str, bool], *, runs: bool) -> int:
    """doit's codes (1 task failed, 2 error inside a task, 3 before any task) → skillmake's table (errors.py)."""
    if doit_code == 2:
        return EXIT_INTERNAL
    if doit_code == EXIT_FAILED and run.get("invalid"):
        return EXIT_INVALID
    if doit_code == EXIT_FAILED and run.get("capped"):
        return EXIT_CAPPED
    if doit_code == 0 and runs and run.get("no_specs"):
        return EXIT_NO_SPECS
    if doit_code == 0 and runs and run.get("errors") and shard_of_matrix():
        # A shard checks no threshold (shard.py), so trials that could not run fail its job: CI re-runs it.
        return EXIT_FAILED
    return doit_code


def shard_of_matrix() -> bool:
    from skillmake.engine.shard import SHARD_VAR

    return bool(os.environ.get(SHARD_VAR, "").strip())


if __name__ == "__main__":
    sys.exit(run_doit(sys.argv[1:]))
