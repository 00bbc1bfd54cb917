"""`doit clean` without a line per trial: skillmake's views and reports are cleaned quietly, then summed up.

doit's Clean writes "<task> - executing 'Python: function _remove'" before every clean action, so cleaning
6,000 trials printed 6,000 lines. This command is doit's Clean with that line left out for skillmake's tasks
(they carry meta {"skillmake": ...}) and one closing line instead; any other task is cleaned exactly as doit
does. The `skillmake` front end uses it; plain doit uses it when the project's pyproject.toml says

    [tool.doit.plugins.command]
    clean = "skillmake.engine.clean:Clean"
"""

from __future__ import annotations

import io
import os
from collections import Counter
from typing import Any

from doit.cmd_clean import Clean as DoitClean

META = "skillmake"  # the task meta key that marks a task whose clean is summed up, not echoed


class Clean(DoitClean):
    name = "clean"

    def clean_tasks(self, tasks: list[Any], dryrun: bool, cleanforget: bool) -> None:
        """Run each task's clean once (as doit does); skillmake's tasks without doit's per-task line."""
        cleaned: set[str] = set()
        counts: Counter[str] = Counter()
        forget = cleanforget and not dryrun
        for task in tasks:
            if task.name in cleaned:
                continue
            cleaned.add(task.name)
            what = (task.meta or {}).get(META)
            if what and task.clean_actions and not dryrun:
                there = _anything_there(task)
                task.clean(io.StringIO(), dryrun)  # failures still reach stderr (doit writes them there)
                counts[what] += there  # a second `clean` cleans nothing, and says so
            else:
                task.clean(self.outstream, dryrun)  # a dry run lists what it would do, one line each
            if forget:
                self.dep_manager.remove(task.name)
        self.dep_manager.close()
        if +counts:
            done = ", ".join(f"{n} {what}{'s' if n != 1 else ''}" for what, n in sorted(counts.items()) if n)
            self.outstream.write(f"skillmake: cleaned {done}\n")
        elif counts:
            self.outstream.write("skillmake: nothing to clean (the views and reports are already gone)\n")


def _anything_there(task: Any) -> bool:
    """Whether any path a skillmake clean action would remove exists now (its last argument)."""
    for action in task.clean_actions:
        args = getattr(action, "args", None) or ()
        if args and isinstance(args[-1], str) and os.path.lexists(args[-1]):
            return True
    return False
