"""`doit info` that exits 0 for a stale task: its status line says stale; exit 1 is skillmake's failed verdict.

doit's Info returns 1 when the task is not up to date (as `make -q` does), which skillmake's exit-code table
(errors.py) reserves for a spec whose verdict failed: `skillmake info trial:…` on a stale trial looked like a
failed eval. The `skillmake` front end uses this command; plain doit does when the project's pyproject.toml says

    [tool.doit.plugins.command]
    info = "skillmake.engine.info:Info"
"""

from __future__ import annotations

from typing import Any

from doit.cmd_info import Info as DoitInfo
from doit.exceptions import InvalidCommand


class Info(DoitInfo):
    name = "info"

    def _execute(self, pos_args: Any, hide_status: bool = False) -> int:
        _refuse_unknown(self, pos_args)
        code = super()._execute(pos_args, hide_status=hide_status)
        return 0 if code == 1 else int(code or 0)  # 1 only ever means "not up to date" here


def _refuse_unknown(command: DoitInfo, pos_args: Any) -> None:
    names = [t.name for t in command.task_list]
    if len(pos_args) == 1 and pos_args[0] not in names:  # doit would raise KeyError: a traceback
        from skillmake.core.errors import did_you_mean

        raise InvalidCommand(f"no task named {pos_args[0]!r}{did_you_mean(pos_args[0], names)}\n"
                             "`skillmake list --all` lists the tasks")


def guard(command: object) -> None:
    """Plain doit's own `info` (no plugin configured): a name that is no task gets the line skillmake's gives, not
    doit's KeyError traceback; its exit codes stay doit's (1 for a stale task)."""
    if not isinstance(command, DoitInfo) or isinstance(command, Info):
        return
    execute = command._execute

    def checked(pos_args: Any, hide_status: bool = False) -> int:
        _refuse_unknown(command, pos_args)
        return int(execute(pos_args, hide_status=hide_status) or 0)

    command._execute = checked
