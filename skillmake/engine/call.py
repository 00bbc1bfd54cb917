"""The Python action of skillmake's own tasks: doit's PythonAction, called with the arguments it was given.

doit's PythonAction looks at its callable's signature at every execution (inspect.signature, bind_partial) to pass
the arguments doit fills in by name (task, targets, dependencies, changed, the task's params): ~5% of a first run's
time under the GIL. The callables of skillmake's tasks take none of those, and its tasks have no params, so there is
nothing to fill in; a task whose callable asks for one is refused when it is made, not silently left without it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from doit.action import PythonAction
from doit.exceptions import InvalidTask

_FILLED = frozenset({"task", "targets", "dependencies", "changed"})  # what doit passes by name (action.py)
_CHECKED: set[Callable[..., Any]] = set()  # callables found to take none of them


class Call(PythonAction):
    """PythonAction(py_callable, args, kwargs) that passes exactly `args` and `kwargs` (shared: never changed)."""

    def __init__(self, py_callable: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any] | None = None
                 ) -> None:
        super().__init__(py_callable, args, kwargs)
        if py_callable not in _CHECKED:
            parameters = inspect.signature(py_callable).parameters
            asked = sorted(_FILLED & parameters.keys())
            if asked or any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
                raise InvalidTask(f"{py_callable.__qualname__} takes {', '.join(asked) or '**kwargs'}, which "
                                  "doit would fill in: make its task's action a plain tuple")
            _CHECKED.add(py_callable)

    def _prepare_kwargs(self) -> dict[str, Any]:
        if self.task is not None and (self.task.options or self.task.pos_arg is not None):
            return super()._prepare_kwargs()  # params: doit fills them in
        return self.kwargs
