"""Run the bundled examples: `doit` (offline, no keys: the examples use the command agent)."""
from skillmake.dodo import *  # noqa: F403
