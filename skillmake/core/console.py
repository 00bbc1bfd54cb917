"""Writing lines to a terminal or pipe: going away quietly (`skillmake | head`), colour, quiet and verbose."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import TextIO


@dataclass(frozen=True, slots=True, kw_only=True)
class Style:
    """How much to print and whether to colour it. `color=None`: colour only a terminal, and not under NO_COLOR."""

    quiet: bool = False
    verbose: bool = False
    color: bool | None = None
    configured: bool = False  # set by the `skillmake` front end; plain doit reads its own command line


_style = Style()

# Outcome → ANSI colour: pass green, fail red, the error class yellow (they are retried, not judged).
_COLORS = {"pass": "32", "fail": "31", "failed": "31", "FAILED": "31", "error": "33", "timeout": "33",
           "judge_error": "33", "cheat": "31"}


def configure(*, quiet: bool = False, verbose: bool = False, color: bool | None = None) -> None:
    """Set the style for this process (the front end calls it once, before doit starts)."""
    global _style
    _style = Style(quiet=quiet, verbose=verbose, color=color, configured=True)


def style() -> Style:
    return _style


def use_color(stream: TextIO) -> bool:
    """--color / --no-color win; else NO_COLOR (any non-empty value, https://no-color.org) turns it off; else
    colour only when the stream is a terminal (never in a pipe, a file or CI logs)."""
    if _style.color is not None:
        return _style.color
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def paint(text: str, outcome: str, stream: TextIO) -> str:
    code = _COLORS.get(outcome)
    if code is None or not use_color(stream):
        return text
    return f"\x1b[{code}m{text}\x1b[0m"


def write_line(stream: TextIO, text: str) -> bool:
    """Write one line; False once the reader has gone (`skillmake | head`). The run goes on — its results are
    in the store and the report files — and the stream is pointed at /dev/null so nothing fails later."""
    try:
        stream.write(text + "\n")
        stream.flush()
        return True
    except BrokenPipeError:
        silence(stream)
        return False


def silence(stream: TextIO) -> None:
    """Point a stream whose reader has gone at /dev/null, so the interpreter's last flush does not print
    `BrokenPipeError` on the way out (Python's documented recipe for SIGPIPE)."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


class PipeSafe:
    """A text stream that stops writing, silently, once its reader has gone: for code that is not ours (doit's
    `list`, `info`, its help) and would otherwise print a BrokenPipeError traceback for `skillmake list | head`."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.gone = False

    @property
    def stream(self) -> TextIO:
        """The stream this one guards."""
        return self._stream

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._leave()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._leave()

    def _leave(self) -> None:
        self.gone = True
        silence(self._stream)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 trial', '2 trials' ('many': the plural where it is not word + 's')."""
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"
