"""Which tasks a doit invocation needs: the whole graph, or only the stale part of it.

A plain run (`doit`, `doit -n 8`, `doit trial`) needs only stale tasks: up-to-date trials and
grades are not created at all, which is what makes a no-op over thousands of trials fast (doit
spends ~0.13 ms per task just deciding it is up to date). Anything that names tasks or inspects
the graph (`list`, `info`, `forget`, `clean`, `doit trial:x/y/z/0`, `-a`) gets the whole graph.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Sequence

GROUPS = frozenset({"validate", "trial", "grade", "report"})
_VALUE_SHORT = frozenset("vonrPfd")
_VALUE_LONG = frozenset({"verbosity", "output-file", "process", "reporter", "parallel-type", "failure-verbosity",
                         "db-file", "backend", "check_file_uptodate", "file", "dir"})
_COMMANDS = frozenset({"run", "list", "info", "forget", "clean", "ignore", "auto", "dumpdb", "strace",
                       "tabcompletion", "help", "reset-dep", "explain", "report", "validate"})


def needs_full_graph(argv: Sequence[str]) -> bool:
    if os.environ.get("SKILLMAKE_FULL_GRAPH"):
        return True
    positional, always = _positional(argv)
    if always:
        return True
    # `doit validate` names the task group, not a command: a plain run of the validate tasks.
    if positional and positional[0] in _COMMANDS and positional[0] not in GROUPS and positional[0] != "run":
        return True
    targets = positional[1:] if positional and positional[0] == "run" else positional
    return any(t not in GROUPS for t in targets)


def targets(argv: Sequence[str]) -> list[str]:
    """The task names and globs a run names (`doit 'trial:x/*' report:y`; empty: every task)."""
    positional, _ = _positional(argv)
    return positional[1:] if positional and positional[0] == "run" else positional


def _positional(argv: Sequence[str]) -> tuple[list[str], bool]:
    """The words of a doit command line that are not options or their values, and whether it has -a."""
    positional: list[str] = []
    args = list(argv)
    always = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            positional.extend(args[i + 1:])
            break
        if arg.startswith("--"):
            name = arg[2:].split("=", 1)[0]
            if name == "always-execute":
                always = True
            if name in _VALUE_LONG and "=" not in arg:
                i += 1
        elif arg.startswith("-") and len(arg) > 1:
            if "a" in arg[1:] and not any(c in _VALUE_SHORT for c in arg[1:arg.index("a") + 1]):
                always = True
            if arg[-1] in _VALUE_SHORT and len(arg) == 2:
                i += 1
        else:
            positional.append(arg)
        i += 1
    return positional, always


_READ_ONLY = frozenset({"list", "info", "help", "dumpdb", "tabcompletion", "strace", "explain", "validate", "auto"})


def writes(argv: Sequence[str]) -> bool:
    """Whether this invocation may run trials or change what runs/ and reports/ hold (a run, `report`,
    `clean`, `forget`): such invocations take the project lock. Listing, explaining and validating never wait."""
    words = [a for a in argv if not a.startswith("-")]
    return not words or words[0] not in _READ_ONLY


def runs(argv: Sequence[str]) -> bool:
    """Whether this invocation runs tasks (a plain run, `run`, task names), rather than cleaning or forgetting."""
    words = [a for a in argv if not a.startswith("-")]
    return writes(argv) and (not words or words[0] not in {"clean", "forget", "ignore", "reset-dep", "report"})


def from_process() -> bool:
    """Decide from this process's command line (doit's, or skillmake's which passes the same words)."""
    return needs_full_graph(sys.argv[1:])


def named_without_gate(argv: Sequence[str]) -> bool:
    """Tasks named on a run's command line, none of them `thresholds` (`skillmake report:a`): each named report
    then gates on its own spec (tasks.report_tasks), where a plain run's gate is the thresholds task."""
    named = targets(argv) if runs(argv) else []
    return bool(named) and not any(fnmatch.fnmatchcase("thresholds", p) for p in named)


def names_report_group(argv: Sequence[str]) -> bool:
    """`doit report` (a dodo.py's doit, where `report` is the task group rather than skillmake's own command):
    the group gates the run as the thresholds task would, once every spec is reported (tasks.report_tasks)."""
    named = targets(argv)
    return "report" in named and not any(fnmatch.fnmatchcase("thresholds", p) for p in named)


def names_reports(argv: Sequence[str]) -> bool:
    """named_without_gate, with a report among the names: doit goes on past a failed report (config.doit_config),
    so that `skillmake 'report:*'` writes every named spec's report, not those before the first failing one."""
    return named_without_gate(argv) and any(p.split(":", 1)[0] == "report" for p in targets(argv))
