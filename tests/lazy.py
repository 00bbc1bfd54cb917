"""A module imported where a test first uses one of its names, not when pytest collects the test file.

Every xdist worker collects every test file, so a module-level `import anthropic` costs each worker the SDK's import
(~4 CPU-s on the 2-core CI machine) even when another worker runs the file's tests. `anthropic = lazy("anthropic")`
keeps the spelling `anthropic.Anthropic(...)`; the import happens (thread-safely, through Python's module locks) at
the first such name. Names starting with an underscore never import: pytest looks for fixture and setup markers
(`_pytestfixturefunction`, `__wrapped__`) on everything in a test module while it collects."""

from __future__ import annotations

import importlib
import types
from typing import Any


class LazyModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(importlib.import_module(self.__name__), name)


def lazy(name: str) -> Any:
    """The module `name`, imported at the first public name a test reads from it."""
    return LazyModule(name)
