"""This process's id without a system call per ask: glibc stopped caching getpid (2.25), and a trial asked ~8 times."""

from __future__ import annotations

import os

_PID = [os.getpid()]


def _forked() -> None:
    _PID[0] = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def pid() -> int:
    """os.getpid(), kept up to date across os.fork (multiprocessing's fork and forkserver start processes with it;
    spawn starts a new interpreter, which imports this module afresh)."""
    return _PID[0]
