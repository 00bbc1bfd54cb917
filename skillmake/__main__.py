"""`python -m skillmake`."""

import sys

# first: the handlers are in place before the front end imports anything else
from skillmake.core import interrupts  # first: the handlers are in place before the front end imports anything else

interrupts.install("skillmake")

from skillmake.commands.cli import main  # noqa: E402

sys.exit(main())
