"""`python -m skillmake`."""

import sys

try:  # first: the handlers are in place before the front end imports anything else
    from skillmake.core import interrupts

    interrupts.install("skillmake")
except KeyboardInterrupt:  # Ctrl-C while the handlers themselves load: nothing has started, nothing to stop
    sys.stderr.write("skillmake: interrupted; finished trials are kept in the store\n")  # interrupts.MESSAGE
    sys.exit(130)

from skillmake.commands.cli import main

sys.exit(main())
