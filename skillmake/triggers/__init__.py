"""Layer 6, triggers: trigger (activation) trials — their keys, the stand-in skills they install, running them —
and the description optimiser. Below the engine, which plans trigger trials as tasks; imports results and below.

A trigger trial asks one thing: offered this skill (by name and description) among distractors, does the agent
pick it for this query? Only the name and description can decide that, so a trial installs stand-ins holding just
those, and its key holds just those: editing the SKILL.md body re-runs no trigger trial; editing the description
re-runs them all.

keys.py, stub.py, run.py and views.py are the trials; split.py, evaluate.py, improve.py (with prompt.py), loop.py,
result.py, display.py and apply.py are skill-creator's description loop, whose command is
skillmake/commands/optimize_description.py (the entry layer).
"""
