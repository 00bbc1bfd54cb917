"""Writing lines to a terminal or pipe that may go away (`skillmake | head`) without failing the run."""

from __future__ import annotations

import contextlib
import os
from typing import TextIO


def write_line(stream: TextIO, text: str) -> bool:
    """Write one line; False once the reader has gone (`skillmake | head`). The run goes on — its results are
    in the store and the report files — and the stream is pointed at /dev/null so nothing fails later."""
    try:
        stream.write(text + "\n")
        stream.flush()
        return True
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        return False
