"""skillmake: a Make-style build tool for evals of agent skills.

Layers, one folder each (a module imports only from the layers below it; docs/layers.md, checked by the
import-linter contracts in pyproject.toml): core → spec → store → run → results → triggers → engine →
compare | view → commands. Only `dodo` (a user's `from skillmake.dodo import *`) and `__main__` sit here.
"""

import time as _time

__version__ = "0.1.0"
STARTED = _time.monotonic()  # when this process began loading skillmake: the run's wall time starts here
