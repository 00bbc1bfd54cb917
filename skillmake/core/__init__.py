"""Layer 1, core: what every other layer stands on and that knows nothing of specs or runs — the one error root
(errors), canonical JSON and digests, atomic writes, paths and their containment, walking and removing trees
(fstree, oswalk), the rule of what belongs to a skill folder (skillscope), run locks, signal handling
(interrupts), redaction, prices and statistics. Imports nothing of skillmake's above it."""
