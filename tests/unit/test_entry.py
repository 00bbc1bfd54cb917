"""`python -m skillmake` (skillmake/__main__.py): a Ctrl-C that lands while the interrupt handlers themselves are
being imported still ends in the one line and exit 130, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from skillmake.core import interrupts

ROOT = Path(__file__).resolve().parents[2]

# An import hook that raises KeyboardInterrupt when skillmake.core.interrupts is imported: what a SIGINT does when it
# arrives in that window (the interpreter's own handler is already in place, ours not yet).
EARLY_CTRL_C = """
import runpy, sys
class Hook:
    def find_spec(self, name, path=None, target=None):
        if name == "skillmake.core.interrupts":
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, Hook())
runpy.run_module("skillmake", run_name="__main__", alter_sys=True)
"""


def test_a_ctrl_c_while_the_handlers_load_exits_130_in_one_line() -> None:
    done = subprocess.run([sys.executable, "-c", EARLY_CTRL_C, "--version"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stderr == f"skillmake: {interrupts.MESSAGE}\n"


def test_the_early_message_is_the_runs_message() -> None:
    assert f'"skillmake: {interrupts.MESSAGE}\\n"' in (ROOT / "skillmake" / "__main__.py").read_text()
