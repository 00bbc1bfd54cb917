"""core/pid.py: this process's id, right in a forked child."""

from __future__ import annotations

import os

from skillmake.core import pid


def test_pid_is_this_process_and_a_forked_childs_own() -> None:
    assert pid.pid() == os.getpid()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        os._exit(0 if pid.pid() == os.getpid() else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
