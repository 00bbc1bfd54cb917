"""`python -m skillmake`."""

import sys

try:  # first: the handlers are in place before the front end imports anything else
    from skillmake.core import interrupts

    interrupts.install("skillmake")
except KeyboardInterrupt:  # Ctrl-C while the handlers themselves load: nothing has started, nothing to stop
    sys.stderr.write("skillmake: interrupted; finished trials are kept in the store\n")  # interrupts.MESSAGE
    sys.exit(130)

# Before any of skillmake's dataclasses is defined: their methods' code from the cache beside the bytecode, not
# compiled again at every start (~35 ms of a run's CPU; core/dataclass_code.py). Here and in dodo.py, skillmake's
# own processes, not at `import skillmake`: a program that imports skillmake keeps its dataclasses module as it was.
from skillmake.core import dataclass_code

dataclass_code.install()

from skillmake.commands.cli import main  # noqa: E402
from skillmake.core.leave import leave  # noqa: E402

leave(main())  # Python's exit less the finalization of a heap that holds the whole plan (core/leave.py)
