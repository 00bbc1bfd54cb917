"""Layer 7, engine: specs → doit tasks (tasks, creators), the plan and its index, selection, the reporter, the
report task and `watch`. The only layer that imports doit. It drives the layers below it — run (trials, grades),
results (reports, cell views), triggers — and is driven by commands/ and dodo.py.
"""
