"""argparse for skillmake's own commands, with skillmake's way of refusing a command line: one line, the usage as
the hint, a did-you-mean for a mistyped option, and exit 3 (a UsageError) instead of argparse's exit 2. Light on
purpose: `skillmake validate` (the editor-save path) imports it."""

from __future__ import annotations

import argparse
from typing import Any

from skillmake.core.errors import UsageError, did_you_mean


class Parser(argparse.ArgumentParser):
    """argparse that raises a UsageError instead of printing and exiting 2. `usage_line`: the hint (default: the
    parser's own usage line)."""

    def __init__(self, *args: Any, usage_line: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.usage_line = usage_line

    def error(self, message: str) -> Any:  # argparse's hook; never returns
        if message.startswith("unrecognized arguments: "):
            word = message.split(": ", 1)[1].split()[0]
            options = [o for o in self._option_string_actions if o.startswith("--")]
            message = f"unknown option {word}{did_you_mean(word.split('=', 1)[0], options, quote=False)}"
        raise UsageError(message, hint=self.usage_line or " ".join(self.format_usage().split()))  # one line


def parsed(parser: argparse.ArgumentParser, args: list[str]) -> argparse.Namespace | int:
    """The parsed command line, or the exit code when argparse ended it: 0 after --help, 3 otherwise (a parser
    that is not a Parser printed its own usage line and error)."""
    from skillmake.core.errors import EXIT_OK, EXIT_USAGE

    try:
        return parser.parse_args(args)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
