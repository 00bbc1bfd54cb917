"""engine/creators.py: importing the task creators (as the front end and a dodo.py do) leaves glibc's malloc one
arena, so the run's threads share freed memory; MALLOC_ARENA_MAX set by the user wins."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAM = """\
import ctypes, sys, threading
if sys.argv[1] == "import":
    import skillmake.engine.creators
def work():
    junk = [bytearray(100_000) for _ in range(50)]  # past pymalloc's 512 bytes: malloc, in this thread's arena
    del junk
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
ctypes.CDLL(None).malloc_stats()  # one "Arena N:" block per arena, on stderr
"""


def arenas(how: str, **env: str) -> int:
    run = subprocess.run([sys.executable, "-c", PROGRAM, how], capture_output=True, text=True, timeout=60,
                         env={k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | env)
    assert run.returncode == 0, run.stderr
    return sum(line.startswith("Arena ") for line in run.stderr.splitlines())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_the_run_keeps_one_malloc_arena_unless_the_user_chose() -> None:
    assert arenas("plain") > 1  # threads that allocate get arenas of their own
    assert arenas("import") == 1
    assert arenas("import", MALLOC_ARENA_MAX="4") > 1
