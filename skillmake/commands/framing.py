"""The frame of a plain command (compare, optimize-description): parse, run, and turn errors into one line and the
documented exit code — a usage error 3 with its hint, a spec or project error its own code — never a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TypeVar

from skillmake.core.console import write_line
from skillmake.core.errors import EXIT_INVALID, EXIT_OK, EXIT_USAGE, SkillmakeError, UsageError, did_you_mean
from skillmake.run.project import Project
from skillmake.spec.model import Spec

Opts = TypeVar("Opts")


def run_command(name: str, args: list[str], *, parse: Callable[[list[str]], Opts | None],
                run: Callable[[Opts], int], help_text: str) -> int:
    """`parse(args)` (None: --help, print `help_text`), then `run(options)`; errors as `skillmake NAME: …` lines."""
    try:
        opts = parse(args)
        if opts is None:
            write_line(sys.stdout, help_text)
            return EXIT_OK
        return run(opts)
    except UsageError as exc:
        say(name, exc.message + (f"\n  hint: {exc.hint}" if exc.hint else ""))
        return EXIT_USAGE
    except SkillmakeError as exc:
        say(name, exc.render())
        return int(getattr(exc, "exit_code", EXIT_INVALID))


def say(name: str, text: str) -> None:
    """One message of command `name` on stderr."""
    write_line(sys.stderr, f"skillmake {name}: {text}")


def named_spec(name: str, project: Project, given: str) -> Spec | None:
    """The spec named (or at the path) `given`. None after printing the errors of a spec that is invalid; a
    UsageError, with the closest name, when there is no such spec."""
    specs = {s.name: s for s in project.specs}
    if given in specs:
        return specs[given]
    path = os.path.abspath(given)
    for spec in project.specs:
        if spec.path == path:
            return spec
    for broken, errors in project.broken.items():
        if os.path.abspath(broken) == path or os.path.basename(broken).split(".")[0] == given:
            write_line(sys.stderr, "\n".join(e.render() for e in errors))
            say(name, f"spec {given} is invalid; fix it first (`skillmake validate {os.path.relpath(broken)}`)")
            return None
    raise UsageError(f"no spec named {given!r}{did_you_mean(given, specs)}", hint=f"specs: {', '.join(sorted(specs))}")
