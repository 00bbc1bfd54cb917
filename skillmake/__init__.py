"""skillmake: a Make-style build tool for evals of agent skills.

Layers (a module imports only from layers below it; design.md):
1. foundation — errors, canonical, atomic, fstree, runlock, interrupts, process/supervisor/reaper, paths, console
2. spec — source, yamlsyntax, yamltext, schema, draft7, config (the project root and [tool.skillmake]), rules, inline,
   spec, model, adapters/ (other tools' formats), discovery, validate, overrides (run settings), formats,
   skillfiles
3. execution — agents/, checks/, judges/, sdk, keys, store, workspace, trial, grade, checkout, results/
4. build — build/ (the only importer of doit)
5. entry — cli, commands/, dodo, watch, scaffold, captured (grade --output), importer, promote, __main__
"""

import time as _time

__version__ = "0.1.0"
STARTED = _time.monotonic()  # when this process began loading skillmake: the run's wall time starts here
