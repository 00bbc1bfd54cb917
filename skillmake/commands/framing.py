"""The frame of a plain command (compare, optimize-description): parse, run, and turn errors into one line and the
documented exit code — a usage error 3 with its hint, a spec or project error its own code — never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

from ..console import write_line
from ..errors import EXIT_INVALID, EXIT_OK, EXIT_USAGE, SkillmakeError, UsageError

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
