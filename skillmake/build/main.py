"""`skillmake` as doit with a built-in loader (the way Nikola embeds doit): no dodo.py needed."""

from __future__ import annotations

import sys
import types
from typing import Any

from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain


def _module() -> types.ModuleType:
    from .. import dodo

    return dodo


def run_doit(args: list[str]) -> int:
    from .. import process
    from . import scope, tasks

    # Called without the front end (which installs them first, and then this does nothing): an interrupted
    # run stops its trials' processes and exits 130 with one line, as plain doit does.
    process.install_interrupt_handlers()

    tasks.FULL_GRAPH = scope.needs_full_graph(args)
    tasks.COMMAND = list(args) or ["run"]
    loader = ModuleTaskLoader(_module())
    code: Any = DoitMain(loader).run(args)
    return int(code or 0)  # `doit clean` and a few other commands return None for success


if __name__ == "__main__":
    sys.exit(run_doit(sys.argv[1:]))
