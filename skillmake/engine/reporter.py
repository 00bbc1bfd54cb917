"""Our doit reporter: one line per task that ran, progress, a line for a slow task, and a one-line summary.

doit's own reporters capture and mix output under threads; this one writes whole lines under a lock.
`-q` keeps only failures and the closing line; `-v` adds a line for every up-to-date task. Outcomes are
coloured on a terminal (console.use_color decides). Each failure is printed once, when it happens, with its
message; the closing line names the failed tasks again, so a long run's failures are not lost in scroll-back.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable
from typing import Any, TextIO

from skillmake import STARTED
from skillmake.core import console, interrupts
from skillmake.core.console import plural, write_line
from skillmake.engine import cell, heap, tasks

# After this many seconds without finishing, a task gets a line saying it is still running (a real agent
# takes minutes; without it nothing would be printed until the first trial ends).
SLOW_AFTER = 2.0

# What the last run in this process saw, for the front end's exit code (errors.py's table).
LAST_RUN: dict[str, bool] = {}


class SkillmakeReporter:
    desc = "skillmake: what ran, why it failed, progress and a closing summary"

    def __init__(self, outstream: TextIO, options: dict[str, Any]) -> None:
        self.out = outstream or sys.stdout
        self.err = sys.stderr
        if not console.style().configured:  # plain doit: its -v 0 / -v 2, for the report summaries too
            derived = _style_from_argv(sys.argv[1:])
            console.configure(quiet=derived.quiet, verbose=derived.verbose)
        self.style = console.style()
        self.lock = threading.Lock()
        # Running totals, so a progress line costs the same at the 30,000th task as at the first: the tasks
        # still running (start time; a finished task leaves), those of them the ticker has not announced yet,
        # how many of them the counter counts, and the trials' durations as a sum and a count.
        self.running: dict[str, float] = {}
        self.unannounced: dict[str, float] = {}
        self.running_counted = 0
        self.t0 = STARTED  # loading specs and planning count too
        self.to_run: set[str] = set()  # trial and grade tasks selected and not up to date: the counter's total
        self.merged = 0  # of them, merged cells (cell.py): each is two steps, its trial and its grade
        self.done = 0
        self.unsaid = False  # a not-needed adaptive task left the total after the counter was last printed
        self.ran: dict[str, int] = {}
        self.uptodate: dict[str, int] = {}
        self.failures: list[str] = []
        self.duration_sum = 0.0
        self.duration_count = 0
        self.tally: dict[str, float] = {}  # summed from the tasks' values: ran, agent/judge calls, tokens, cost
        self.closed = False
        self.stop = threading.Event()
        self.ticker: threading.Thread | None = None
        LAST_RUN.clear()

    # --- doit's reporter interface ------------------------------------------------

    def initialize(self, tasks: dict[str, Any], selected_tasks: list[str]) -> None:
        interrupts.arm()  # tasks run from now on: an interrupt unwinds the run so doit saves what finished
        heap.hold()  # what planning built lives until the end: full collections stop walking it (heap.py)
        self.to_run = {name for name in _closure(tasks, selected_tasks)
                       if _kind(name) in COUNTED and not _known_uptodate(tasks[name])}
        # A merged cell (cell.py) is two steps of the counter: its trial and its grade.
        self.merged = sum(1 for name in self.to_run if cell.merged(tasks[name]))
        LAST_RUN["no_specs"] = not any(name.startswith("validate:") for name in tasks)
        self.ticker = threading.Thread(target=self._tick, name="skillmake-reporter", daemon=True)
        self.ticker.start()

    def get_status(self, task: Any) -> None:
        pass

    def execute_task(self, task: Any) -> None:
        kind = _kind(task.name)
        with self.lock:
            now = time.monotonic()
            if kind in COUNTED:
                self.to_run.add(task.name)  # `-a`, or an uptodate check that said no after all
                if task.name not in self.running:
                    self.running_counted += 1
            self.running[task.name] = now
            if kind in (*COUNTED, "report"):
                self.unannounced[task.name] = now
            if kind == "report":  # before the spec's summary, which the report task prints
                self._say_unneeded()

    def add_success(self, task: Any) -> None:
        kind = _kind(task.name)
        if kind is None:
            return
        with self.lock:
            started = self._finish(task.name, kind)
            values = getattr(task, "values", None) or {}
            if kind == "trial" and "grade" in values:  # a merged cell (cell.py): its trial's line, then its grade's
                self._success(task.name, "trial", values["trial"], None)
                self._success(f"grade:{task.name[6:]}", "grade", values["grade"], None)
            else:
                self._success(task.name, kind, values, started)
            _forget(task)

    def _success(self, name: str, kind: str, values: dict[str, Any], started: float | None) -> None:
        """One finished trial, grade, trigger or other task: counted, and its line. `started`: when its task
        started; None for half of a merged cell, which says its own seconds."""
        self.ran[kind] = self.ran.get(kind, 0) + 1
        if kind in COUNTED and values.get("unneeded"):
            # Adaptive trials: a trial an earlier look made unnecessary is no trial. It leaves the total instead
            # of taking a step, so the counter never jumps over it.
            self.unsaid = self.unsaid or name in self.to_run
            self.to_run.discard(name)
            self._count(kind, values)
            if self.style.verbose and not self.style.quiet:
                why = values.get("why")
                self._line(f"{name}  not needed" + (f"  ({why})" if why else ""))
            return
        if kind in COUNTED:
            elapsed = (time.monotonic() - started if started is not None
                       else float(values.get("seconds") or 0.0))
            self.done += 1
            if kind in ("trial", "trigger"):
                self.duration_sum += elapsed
                self.duration_count += 1
            self._count(kind, values)
            if self.style.quiet:
                return
            outcome = str(values.get("outcome", ""))
            why = values.get("why")
            self._line(f"{self._progress()} {name}  {console.paint(outcome, outcome, self.out)}  "
                       f"{elapsed:.1f}s" + (f"  ({why})" if why else ""))
            for passed, text, evidence in values.get("verdicts") or ():  # -v: the judges' reasoning
                self._line(f"    {'✓' if passed else '✗'} {text} — {evidence}")
        elif self.style.verbose:
            self._line(f"{name}  done")

    def add_failure(self, task: Any, exception: Any) -> None:
        with self.lock:
            kind = _kind(task.name)
            self._finish(task.name, kind)
            self._fail(task.name, kind, exception, merged=cell.merged(task))

    def _fail(self, name: str, kind: str | None, exception: Any, *, merged: bool) -> None:
        """A failed task, said once with its message; a merged cell's failure is its trial's or its grade's."""
        if merged and isinstance(exception, cell.GradeFailed):  # the trial ran: its line, then the grade's failure
            self._success(name, "trial", exception.trial, None)
            name, kind = f"grade:{name[6:]}", "grade"
        elif merged:  # the trial failed: its grade never starts, and leaves the counter's total
            self.merged -= 1
        if kind == "validate":
            LAST_RUN["invalid"] = True
        if kind in COUNTED:
            self.done += 1
        message = exception.get_msg() if hasattr(exception, "get_msg") else str(exception)
        self.failures.append(name)
        head = f"{self._progress()} {name}" if kind in COUNTED else name
        failed = console.paint("FAILED", "FAILED", self.err)
        self._line(f"{head}  {failed}\n{_indent(message.strip())}" if message.strip() else f"{head}  {failed}",
                   err=True)

    def skip_uptodate(self, task: Any) -> None:
        kind = _kind(task.name)
        if kind is None:
            return
        with self.lock:
            self.uptodate[kind] = self.uptodate.get(kind, 0) + 1
            if self.style.verbose and not self.style.quiet:
                self._line(f"{task.name}  up to date  ({_why_uptodate(kind)})")

    def skip_ignore(self, task: Any) -> None:
        if self.style.verbose and _kind(task.name):
            self._line(f"{task.name}  ignored  (doit ignore)")

    def cleanup_error(self, exception: Any) -> None:
        self._line(f"cleanup error: {exception.get_msg()}", err=True)

    def runtime_error(self, msg: str) -> None:
        self._line(f"skillmake: {msg}", err=True)

    def teardown_task(self, task: Any) -> None:
        pass

    def complete_run(self) -> None:
        heap.release()
        self.stop.set()
        if self.ticker is not None:
            self.ticker.join()
        self._say_unneeded()
        if LAST_RUN.get("no_specs"):
            self._line("skillmake: no spec found (*.eval.yaml, *.eval.yml, *.eval.json) under the project root\n"
                       "  hint: write one (see examples/), or point at the project with --root DIR", err=True)
            return
        self._say_remote()
        elapsed = time.monotonic() - self.t0
        tally = self.tally
        # A task doit ran may still have been served by the store (another trial with identical inputs).
        trials_ran = int(tally.get("trial_ran", 0))
        grades_ran = int(tally.get("grade_ran", 0))
        # ... by a record another cell of this run made (identical inputs): shared within the run, not reused.
        shared_trials, shared_grades = int(tally.get("trial_shared", 0)), int(tally.get("grade_shared", 0))
        reused_trials = (self.ran.get("trial", 0) - trials_ran - int(tally.get("trial_capped", 0))
                         - int(tally.get("trial_unneeded", 0)) - shared_trials)
        reused_grades = (self.ran.get("grade", 0) - grades_ran - int(tally.get("grade_capped", 0))
                         - int(tally.get("grade_unneeded", 0)) - shared_grades)
        trials_ok, grades_ok = self.uptodate.get("trial", 0), self.uptodate.get("grade", 0)
        trials_ok += tasks.COLLAPSED["trial"]
        grades_ok += tasks.COLLAPSED["grade"]
        triggers_ran = int(tally.get("trigger_ran", 0))
        triggers_ok = self.uptodate.get("trigger", 0) + tasks.COLLAPSED["trigger"]
        triggers_ok += self.ran.get("trigger", 0) - triggers_ran - int(tally.get("trigger_capped", 0))
        quiet = not any(self.ran.get(kind) for kind in (*COUNTED, "report"))
        if quiet and not self.failures:
            if trials_ok or grades_ok or triggers_ok:
                what = f"{plural(trials_ok, 'trial')} and {plural(grades_ok, 'grade')}"
                if triggers_ok:
                    what = what.replace(" and ", ", ") + f" and {plural(triggers_ok, 'trigger trial')}"
                self._line(f"skillmake: nothing stale — {what} up to date ({elapsed:.2f}s)")
            return
        parts = [f"ran {plural(trials_ran, 'trial')}{self._requests('trial')} and {plural(grades_ran, 'grade')}"
                 f"{self._requests('grade')}"]
        if triggers_ran or triggers_ok:
            parts[0] += f" and {plural(triggers_ran, 'trigger trial')}{self._requests('trigger')}"
        reused = f"reused {plural(trials_ok + reused_trials, 'trial')} and {plural(grades_ok + reused_grades, 'grade')}"
        if triggers_ran or triggers_ok:
            reused += f" and {plural(triggers_ok, 'trigger trial')}"
        parts.append(f"{reused} from the store")
        if shared_trials or shared_grades:
            shared = [plural(n, what) for n, what in ((shared_trials, "trial"), (shared_grades, "grade")) if n]
            parts.append(f"{' and '.join(shared)} shared within the run (identical inputs)")
        spent = []
        if tally.get("tokens"):
            spent.append(f"{int(tally['tokens']):,} tokens")
        if tally.get("cost_usd"):
            spent.append(f"${tally['cost_usd']:.4f}")
        if tally.get("cache_saved_usd"):  # what the cached prompt prefixes saved, against the list input price
            spent.append(f"(cache saved ${tally['cache_saved_usd']:.4f})")
        if spent:
            parts.append("spent " + " ".join(spent))
        errors = int(sum(tally.get(f"{kind}_{outcome}", 0) for kind in ("trial", "trigger")
                         for outcome in ("error", "timeout")))
        if errors:
            parts.append(f"{plural(errors, 'trial')} ended in error/timeout (retried next run)")
            LAST_RUN["errors"] = True  # a shard of a CI matrix fails on them (main.exit_code)
        capped = int(tally.get("trial_capped", 0) + tally.get("trigger_capped", 0))
        if capped:
            parts.append(f"{plural(capped, 'trial')} not run: spending cap")
        if self.failures:
            shown = ", ".join(self.failures[:5]) + (f" and {len(self.failures) - 5} more" if len(self.failures) > 5
                                                    else "")
            parts.append(console.paint(f"{len(self.failures)} failed: {shown}", "fail", self.out))
        self._line(f"skillmake: {'; '.join(parts)} in {elapsed:.1f}s")

    # --- helpers --------------------------------------------------------------------

    def _say_remote(self) -> None:
        """What the remote store moved in this run (remote.py), and each of its notes once."""
        from skillmake.store import remote

        for r in remote.active():
            s = r.stats
            if s.fetched_records or s.pushed_records:
                self._line(f"skillmake: remote {r.shown}: fetched {s.fetched_records} results "
                           f"({s.downloaded_bytes:,} bytes), sent {s.pushed_records} ({s.uploaded_bytes:,} bytes)")
            for note in s.notes:
                self._line(f"skillmake: {note}", err=True)
            s.notes.clear()

    def _tick(self) -> None:
        """Say which task is still running once it has taken SLOW_AFTER seconds (once per task)."""
        while not self.stop.wait(0.25):
            self._announce_slow(time.monotonic())

    def _announce_slow(self, now: float) -> None:
        with self.lock:  # only the tasks running now and not yet announced: at most the jobs' number
            slow = [(name, t) for name, t in self.unannounced.items() if now - t >= SLOW_AFTER]
            for name, t in slow:
                del self.unannounced[name]
                if not self.style.quiet:
                    clock = time.strftime("%H:%M:%S", time.localtime(time.time() - (now - t)))
                    self._line(f"{self._progress()} … running {name} (started {clock})")

    def _count(self, kind: str, values: dict[str, Any]) -> None:
        if values.get("unneeded"):  # adaptive trials: an earlier look decided its cell (engine/adaptive.py)
            self.tally[f"{kind}_unneeded"] = self.tally.get(f"{kind}_unneeded", 0) + 1
        if values.get("capped"):  # the spending cap kept it from starting (budget.py): the run exits 6
            LAST_RUN["capped"] = True
            self.tally[f"{kind}_capped"] = self.tally.get(f"{kind}_capped", 0) + 1
        if values.get("shared"):
            self.tally[f"{kind}_shared"] = self.tally.get(f"{kind}_shared", 0) + 1
        if values.get("ran"):
            self.tally[f"{kind}_ran"] = self.tally.get(f"{kind}_ran", 0) + 1
            if kind in ("trial", "trigger") and values.get("outcome") in ("error", "timeout"):
                key = f"{kind}_{values['outcome']}"
                self.tally[key] = self.tally.get(key, 0) + 1
        if values.get("ran"):
            # Requests as the agent or judge reported them; a model agent that could not tell is counted apart.
            agent = kind in ("trial", "trigger")
            requests = values.get("requests" if agent else "judge_calls")
            if agent and values.get("model"):
                self.tally[f"{kind}_model"] = self.tally.get(f"{kind}_model", 0) + 1
            if requests is not None:
                self.tally[f"{kind}_requests"] = self.tally.get(f"{kind}_requests", 0) + requests
            elif agent and values.get("model"):
                self.tally[f"{kind}_requests_unknown"] = self.tally.get(f"{kind}_requests_unknown", 0) + 1
        for name in ("tokens", "cost_usd", "cache_saved_usd", "batched"):
            if values.get(name):
                self.tally[name] = self.tally.get(name, 0) + values[name]

    def _requests(self, kind: str) -> str:
        """' (9 model requests)' after what ran, from what the agents and judges reported."""
        count = int(self.tally.get(f"{kind}_requests", 0))
        unknown = int(self.tally.get(f"{kind}_requests_unknown", 0))
        batched = int(self.tally.get("batched", 0)) if kind == "grade" else 0
        if not count and not unknown and not batched and not self.tally.get(f"{kind}_model"):
            return ""
        what = "judge requests" if kind == "grade" else "model requests"
        text = f"{count} {what}"
        if batched:  # answered by the run's batch (engine/batching.py)
            text += f", {batched} answered in a batch at half price"
        if unknown:
            text += f", unknown for {unknown}"
        return f" ({text})"

    def _finish(self, name: str, kind: str | None) -> float | None:
        """Forget a finished task's start (what it kept); its start time, if it was seen starting."""
        started = self.running.pop(name, None)
        self.unannounced.pop(name, None)
        if started is not None and kind in COUNTED:
            self.running_counted -= 1
        return started

    def _say_unneeded(self) -> None:
        """Once the last counter line printed still counted adaptive trials that turned out not needed (they end a
        run: each waits for the look before it), one more counter line, so the run's count and total end agreeing."""
        if self.unsaid and not self.style.quiet:
            n = int(self.tally.get("trial_unneeded", 0))
            self._line(f"{self._progress()} adaptive: {n} trial{'s' if n != 1 else ''} not needed, nor "
                       f"{'their grades' if n != 1 else 'its grade'} (a look before them decided their case, or "
                       "it waits for an earlier trial's verdict)")

    def _progress(self) -> str:
        self.unsaid = False  # the total printed now has left them out
        total = max(len(self.to_run) + self.merged, self.done)
        width = len(str(total))
        running = self.running_counted
        eta = ""
        if self.duration_count and total > self.done:
            remaining = total - self.done
            per = self.duration_sum / self.duration_count
            eta = f" eta {remaining * per / max(1, running):.0f}s"
        busy = f" {running} running" if running > 1 else ""
        return f"[{self.done:>{width}}/{total}{busy}{eta}]"

    def _line(self, text: str, *, err: bool = False) -> None:
        if self.closed:
            return
        if not write_line(self.err if err else self.out, text):
            self.closed = True


COUNTED = ("trial", "grade", "trigger")  # the tasks the [n/N] counter counts


def _closure(tasks: dict[str, Any], selected: Iterable[str]) -> set[str]:
    """The selected tasks and every task they depend on (what doit will visit)."""
    seen: set[str] = set()
    todo = [name for name in selected if name in tasks]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        task = tasks[name]
        todo.extend(d for d in (*task.task_dep, *task.setup_tasks) if d in tasks and d not in seen)
    return seen


def _forget(task: Any) -> None:
    """Said and counted: drop what doit would hold of a finished task until the run ends. It keeps the action's
    returned dict as the task's result and a copy as its values, both in its dep db (and writes them there at the
    end), and the action objects on the task; nothing reads them again (no task of ours has a result_dep or
    getargs), so a long run does not hold every trial's and grade's values."""
    for held in (getattr(task, "values", None), getattr(task, "result", None)):
        if isinstance(held, dict):
            held.clear()
    if getattr(task, "_action_instances", None) is not None:  # doit makes them again if ever asked
        task._action_instances = None


def _known_uptodate(task: Any) -> bool:
    """Up to date by the task's own constant `uptodate` values (ours are booleans computed from the store)."""
    values = [value for value, _args, _kwargs in task.uptodate]
    return bool(values) and all(value is True for value in values) and not task.file_dep


def _why_uptodate(kind: str) -> str:
    return {"trial": "its key is in the store", "trigger": "its key is in the store",
            "grade": "its grade is in the store",
            "validate": "unchanged and valid", "report": "no new grades"}.get(kind, "unchanged")


def _style_from_argv(argv: list[str]) -> console.Style:
    """Plain doit: its `-v 0` means quiet and `-v 2` verbose (doit's verbosity levels)."""
    level = None
    for i, arg in enumerate(argv):
        if arg in ("-v", "--verbosity") and i + 1 < len(argv):
            level = argv[i + 1]
        elif arg.startswith("--verbosity="):
            level = arg.split("=", 1)[1]
        elif arg.startswith("-v") and arg[2:].isdigit():
            level = arg[2:]
    return console.Style(quiet=level == "0", verbose=level == "2")


def _kind(name: str) -> str | None:
    base = name.split(":", 1)[0]
    return base if base in (*COUNTED, "report", "validate") and ":" in name else None


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())

