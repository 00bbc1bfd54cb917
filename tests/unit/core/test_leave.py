"""core/leave.py: the console script ends as Python's exit would (threads joined, atexit functions run, streams
flushed, the code kept), less the finalization of its heap."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _child(body: str) -> subprocess.CompletedProcess[str]:
    code = "import atexit, sys, threading, time\nfrom skillmake.core.leave import leave\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_the_code_is_kept_and_buffered_output_reaches_the_pipe() -> None:
    done = _child("""
        sys.stdout.write("no newline, still in the buffer")
        sys.stderr.write("and on stderr")
        leave(3)
    """)
    assert (done.returncode, done.stdout, done.stderr) == (3, "no newline, still in the buffer", "and on stderr")


def test_threads_that_are_not_daemons_end_first_then_the_atexit_functions_run_last_registered_first() -> None:
    done = _child("""
        atexit.register(lambda: print("registered first, runs last", flush=True))
        atexit.register(lambda: print("registered last, runs first"))
        def late():
            time.sleep(0.3)
            print("thread done")
        threading.Thread(target=late).start()
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()  # a daemon is not waited for
        leave(0)
    """)
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["thread done", "registered last, runs first", "registered first, runs last"]


def test_an_atexit_function_that_fails_or_is_interrupted_does_not_stop_the_others_or_change_the_code() -> None:
    done = _child("""
        atexit.register(lambda: print("still ran", flush=True))
        def interrupted():
            raise KeyboardInterrupt
        atexit.register(interrupted)
        atexit.register(lambda: 1 / 0)
        leave(1)
    """)
    assert done.returncode == 1 and done.stdout == "still ran\n"
    assert "ZeroDivisionError" in done.stderr  # printed as Python's exit prints it


def test_a_reader_gone_is_not_an_error() -> None:
    code = ("import sys\nfrom skillmake.core.leave import leave\n"
            "sys.stdout.write('x' * 200_000)\nleave(0)\n")
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
        assert child.stdout is not None and child.stderr is not None
        child.stdout.read(10)
        child.stdout.close()  # `| head`: the rest cannot be written
        assert child.wait(timeout=60) == 0
        assert b"Traceback" not in child.stderr.read()


def test_an_executor_never_shut_down_does_not_hold_the_exit() -> None:
    """Its idle workers are not daemons and wait on its queue: Python's exit wakes them (threading's own exit
    functions) before joining them, and so must leave(), or the process would hang after its work."""
    done = _child("""
        from concurrent.futures import ThreadPoolExecutor
        pool = ThreadPoolExecutor(max_workers=2)
        print(pool.submit(lambda: "worked").result(), flush=True)
        leave(4)
    """)
    assert (done.returncode, done.stdout) == (4, "worked\n")


def test_a_ctrl_c_while_the_threads_are_joined_still_runs_the_atexit_functions() -> None:
    """They stop the trials' supervisors and sweep: at Python's own exit an interrupted join does not skip them,
    and neither may leave()."""
    done = _child("""
        import os, signal
        atexit.register(lambda: print("atexit ran", flush=True))
        def interrupt_then_finish():
            time.sleep(0.2)  # the main thread is joining this one by then
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.3)
        threading.Thread(target=interrupt_then_finish).start()
        leave(5)
    """)
    assert (done.returncode, done.stdout) == (5, "atexit ran\n")
