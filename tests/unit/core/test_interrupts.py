"""skillmake.core.interrupts: what the handlers leave behind when a run unwinds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# A stop signal at an unsafe point sets a retry timer; a second one at a safe point unwinds the run. The retry must
# not outlive that: the exit restores SIGALRM's default action, and a timer firing late in the interpreter's
# finalization ended a Ctrl-C'd run by SIGALRM (exit status -14, seen in the batch-judging test) instead of 130.
SCRIPT = """
import signal, sys, time
from skillmake.core import interrupts
interrupts.install("skillmake")
interrupts.arm()
def unsafe():  # this script's own code is no safe point
    interrupts._on_signal(signal.SIGINT, sys._getframe())
unsafe()
assert signal.getitimer(signal.ITIMER_REAL)[0] > 0, "a retry is set"
try:
    interrupts._on_signal(signal.SIGINT, None)  # a safe point: the run unwinds
except KeyboardInterrupt:
    pass
print(signal.getitimer(signal.ITIMER_REAL)[0])
class Slow:  # keeps the interpreter's finalization busy past the retry's moment
    def __del__(self, time=time):
        t = time.monotonic()
        while time.monotonic() - t < 0.1:
            pass
keep = Slow()
sys.exit(130)
"""


def test_unwinding_cancels_a_pending_retry_so_the_exit_status_stays_130() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (130, "0.0"), done.stderr


# A stop signal at an unsafe point sets a retry; the run then noticed the interrupt by itself (a trial's thread
# read the wakeup pipe, the trials ended, main() returned 130) and exited before the retry fired. The retry then
# fired inside an exit function waiting on a supervisor (supervisors.close_all, at a safe point) and raised
# KeyboardInterrupt there: 'Exception ignored in atexit callback … KeyboardInterrupt' on a SIGTERM'd run's stderr
# (seen in test_interrupt under a loaded full suite).
LEAVING = """
import atexit, signal, sys, threading
from skillmake.core import interrupts
interrupts.install("skillmake")
interrupts.arm()
atexit.register(lambda: threading.Event().wait(0.2))  # an exit function that waits, as close_all does
def unsafe():
    interrupts._on_signal(signal.SIGTERM, sys._getframe())
unsafe()
assert signal.getitimer(signal.ITIMER_REAL)[0] > 0, "a retry is set"
sys.exit(130)  # main() saw interrupted() and returns on its own
"""


def test_a_run_leaving_on_its_own_is_not_interrupted_again_by_a_pending_retry() -> None:
    done = subprocess.run([sys.executable, "-c", LEAVING], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr


# A run that finished (or noticed its interrupt by itself) is in its exit functions: process._at_exit sweeping what
# its trials left. A stop signal then (a process group's SIGTERM crossing a run's end) must stop what runs and raise
# nowhere: plain doit's SystemExit(130) inside the sweep printed 'Exception ignored in atexit callback … SystemExit:
# 130' and left the sweep half done (test_interrupt's repeated SIGTERMs, in a full suite).
EXITING = """
import atexit, signal, sys
from skillmake.core import interrupts
from skillmake.run import process, reaper
interrupts.install("doit")
reaper.become_subreaper()
looks = reaper.orphans
def orphans(keep=()):
    interrupts._on_signal(signal.SIGTERM, None)  # arrives at a safe point while the sweep looks
    print("swept", interrupts.interrupted())
    return looks(keep)
reaper.orphans = orphans
atexit.register(process._at_exit)
interrupts.arm()
sys.exit(0)  # the run finished
"""


def test_a_stop_signal_during_the_exit_sweep_raises_nowhere_and_the_sweep_finishes() -> None:
    done = subprocess.run([sys.executable, "-c", EXITING], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.stdout.strip() == "swept True"  # marked interrupted (its trials' supervisors told to stop)
    assert done.returncode == 0
