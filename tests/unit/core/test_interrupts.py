"""skillmake.core.interrupts: what the handlers leave behind when a run unwinds."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

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


# A `-P process` worker that gets its stop signal where it cannot leave (a trial's code of skillmake's own, or doit's
# worker set-up before its loop's try) must leave once it waits for work: the run's process stops sending any, and
# joined such a worker for the whole 5 s grace before killing it (test_interrupt's SIGTERM under -P process took 5.1 s
# in 1 of 20 loaded runs, the worker's stack in the job queue's get). And it must never raise where doit's loop cannot
# catch it: a KeyboardInterrupt out of MReporter.__init__ was printed as the worker's traceback (test_interrupt's
# doit-process-1.0 under load). The worker here is doit's own (MRunner.execute_task_subprocess), forked.
WORKER = """
import multiprocessing, multiprocessing.util, os, signal, sys, time
import doit.runner
from doit.reporter import ConsoleReporter
from doit.runner import JobTask, MRunner
from doit.task import Task
from skillmake.core import interrupts

WHERE = sys.argv[1]
interrupts.install("doit")
interrupts.arm()
if WHERE == "task":  # this script's code stands for skillmake's (a cell task past its last interrupt check)
    interrupts._PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


class Forked:
    pass


FORKED = Forked()
multiprocessing.util.register_after_fork(FORKED, lambda _: interrupts.forked())  # as process.prepare_run does


def action():
    interrupts._on_signal(signal.SIGTERM, sys._getframe())  # the stop signal comes while the task runs
    return True


class Reporter(doit.runner.MReporter):
    def __init__(self, *args, **kwargs):
        if WHERE == "reporter":  # the stop signal comes as the worker sets up, before its loop's try
            interrupts._on_signal(signal.SIGTERM, sys._getframe())
        super().__init__(*args, **kwargs)


doit.runner.MReporter = Reporter

if __name__ == "__main__":
    job_q, result_q = multiprocessing.Queue(), multiprocessing.Queue()
    runner = MRunner(None, ConsoleReporter(sys.stdout, {}), num_process=1)
    runner.tasks = {}
    if WHERE == "task":
        job_q.put(JobTask(Task("t", [action])))
    worker = multiprocessing.Process(target=runner.execute_task_subprocess, args=(job_q, result_q, ConsoleReporter))
    worker.start()
    seen = []
    while not seen or "exit" not in seen[-1]:  # the run sends no more work: the worker must say it leaves
        try:
            seen.append(result_q.get(timeout=5))
        except Exception:
            break
    worker.join(5)
    print(worker.is_alive(), worker.exitcode, [m.get("reporter") or m.get("exit", m.get("name")) for m in seen])
    if worker.is_alive():
        worker.kill()
"""


@pytest.mark.parametrize("where", ["task", "reporter"])
def test_a_worker_signalled_where_it_cannot_leave_leaves_when_it_waits_for_work(tmp_path: Path, where: str) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    done = subprocess.run([sys.executable, str(script), where], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    tail = ["execute_task", "t"] if where == "task" else []  # the task ran to its end, and was reported
    assert done.stdout.strip() == f"False 0 {[*tail, KeyboardInterrupt]!r}", done.stderr


# A stop signal in the interpreter's last moments, after every exit function (a process group's Ctrl-C crossing the
# end of a run that had finished): the interpreter had restored the signal's default action, and the run ended by
# the signal (exit status -2 or -15, nothing printed) instead of its own status (test_interrupt's repeated
# interrupts of `doit -P process`, 2 of 30 loaded runs whose signal came as the run ended; the dodo.py's own last
# exit function had run). Now its status stands.
FINALIZING = """
import os, signal, sys, time
from skillmake.core import interrupts
interrupts.install("doit")
interrupts.arm()
class Late:  # finalized with this module, after the exit functions
    def __del__(self, os=os, time=time, signum=int(sys.argv[1])):
        os.kill(os.getpid(), signum)
        time.sleep(0.05)
keep = Late()
sys.exit(0)  # the run finished
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_after_the_exit_functions_keeps_the_runs_exit_status(signum: int) -> None:
    done = subprocess.run([sys.executable, "-c", FINALIZING, str(int(signum))], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
