"""Layer 4, the build engine (not build output): specs → doit tasks, the plan, the reporter, the report task.

The only part of skillmake that imports doit. It drives the execution layer below it — trial.py, grade.py,
checkout.py (cell views), the store — and is driven by the entry layer (cli.py, dodo.py).
"""
