"""Running doit from a command line the front ends built: `skillmake` itself (cli.py) and the other tools' front
ends (`skillmake clauditor …`, `skillmake caliper run …`) hand their run options to the modules that read them and
start the run here, so those front ends never import cli."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from skillmake.commands import argv as cmdline
from skillmake.core import console

# The variables three run options travel in, named here as the modules that read them name them (a test checks they
# agree): importing those modules for their names cost every run the claude-code agent and the clauditor adapter
# (~5 ms), which a run of other agents and specs never uses.
CLAUDITOR_FLAGS_VAR = "SKILLMAKE_CLAUDITOR_FLAGS"  # spec/adapters/clauditor.FLAGS_VAR
NO_API_KEY_VAR = "SKILLMAKE_NO_API_KEY"  # run/agents/claude_code.NO_API_KEY_VAR
SHARD_VAR = "SKILLMAKE_SHARD"  # engine/shard.SHARD_VAR


def doit_commands() -> Mapping[str, tuple[cmdline.Opt, ...]]:
    from skillmake.engine.main import doit_options

    return {name: cmdline.doit_table(options) for name, options in doit_options().items()}


def set_run_options(inv: cmdline.Invocation, *, only: str | None = None) -> None:
    """Hand skillmake's own run options to the modules that read them (build.select, overrides, the clauditor
    adapter, the claude-code agent). `only`: "cases" or "triggers" (the clauditor front end's commands)."""
    from skillmake.engine import select

    select.set_command_line(k=inv.k, tags=inv.tags, failed=inv.failed, resample=inv.resample, specs=inv.specs,
                            only=only)
    from skillmake.spec import overrides

    overrides.set_command_line(dict(inv.overrides))
    # Through the environment, so doit's worker processes see them too.
    set_env(overrides.BASELINE_VAR, "1" if inv.baseline else None)  # caliper's --baseline (overrides.apply)
    if inv.adaptive:  # --adaptive (overrides.apply); without it, $SKILLMAKE_ADAPTIVE stays as the user set it
        set_env(overrides.ADAPTIVE_VAR, "1")
    set_env(CLAUDITOR_FLAGS_VAR, json.dumps(dict(inv.clauditor)) if inv.clauditor else None)
    set_env(NO_API_KEY_VAR, "1" if inv.no_api_key else None)
    set_env(SHARD_VAR, inv.shard)  # --shard I/N (engine/shard.py); None leaves $SKILLMAKE_SHARD as it was


def run_with(args: list[str], *, only: str | None = None) -> int:
    """A run, or `explain …`, from a command line another front end built (`skillmake clauditor`), narrowed by
    `only` to one kind of trial ("cases", "trials": the cases' trials without grading them, "triggers")."""
    inv = cmdline.parse(args, doit_commands=doit_commands)
    console.configure(quiet=inv.quiet, verbose=bool(inv.verbose), color=inv.color)
    set_run_options(inv, only=only)
    if inv.command == "explain":
        from skillmake.commands.specs import explain

        return explain(inv)
    return run_doit(list(inv.doit_args), verbose=bool(inv.verbose))


def set_env(var: str, value: str | None) -> None:
    """Set `var` for this run; a later run in this process (watch) without the flag takes away only what an
    earlier one set here (a user's own export stays)."""
    if value is not None:
        os.environ[var] = value
        _SET_HERE.add(var)
    elif var in _SET_HERE:
        os.environ.pop(var, None)
        _SET_HERE.discard(var)


_SET_HERE: set[str] = set()  # the variables set_run_options put into the environment


def run_doit(args: list[str], *, verbose: bool = False) -> int:
    from skillmake.run import process

    # SIGINT and SIGTERM stop every trial's processes at once, then raise KeyboardInterrupt so doit saves what
    # finished (its db is written only at the end) and main() exits 130.
    process.install_interrupt_handlers(raise_keyboard_interrupt=True)
    from skillmake.engine.main import run_doit

    return run_doit(args, full_graph=verbose)
