"""`python -m skillmake`."""

import sys

from . import interrupts  # first: the handlers are in place before the front end imports anything else

interrupts.install("skillmake")

from .cli import main  # noqa: E402

sys.exit(main())
