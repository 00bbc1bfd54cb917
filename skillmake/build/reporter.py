"""Our doit reporter: one line per task that ran, progress with ETA, and a one-line summary.

doit's own reporters capture and mix output under threads; this one writes whole lines under a lock.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

from .. import STARTED
from ..console import write_line
from . import tasks


class SkillmakeReporter:
    desc = "skillmake: what ran, why it failed, progress and a closing summary"

    def __init__(self, outstream: TextIO, options: dict[str, Any]) -> None:
        self.out = outstream or sys.stdout
        self.err = sys.stderr
        self.lock = threading.Lock()
        self.started: dict[str, float] = {}
        self.t0 = STARTED  # loading specs and planning count too
        self.selected = 0
        self.done = 0
        self.ran: dict[str, int] = {}
        self.uptodate: dict[str, int] = {}
        self.failures: list[tuple[str, str]] = []
        self.durations: list[float] = []
        self.tally: dict[str, float] = {}  # summed from the tasks' values: ran, agent/judge calls, tokens, cost
        self.closed = False

    # --- doit's reporter interface ------------------------------------------------

    def initialize(self, tasks: dict[str, Any], selected_tasks: list[str]) -> None:
        self.selected = sum(1 for t in tasks.values() if _kind(t.name) in ("trial", "grade"))

    def get_status(self, task: Any) -> None:
        pass

    def execute_task(self, task: Any) -> None:
        with self.lock:
            self.started[task.name] = time.monotonic()

    def add_success(self, task: Any) -> None:
        kind = _kind(task.name)
        if kind is None:
            return
        with self.lock:
            self.ran[kind] = self.ran.get(kind, 0) + 1
            if kind in ("trial", "grade"):
                elapsed = time.monotonic() - self.started.get(task.name, time.monotonic())
                self.done += 1
                if kind == "trial":
                    self.durations.append(elapsed)
                values = getattr(task, "values", None) or {}
                self._count(kind, values)
                outcome = values.get("outcome", "")
                why = values.get("why")
                self._line(f"{self._progress()} {task.name}  {outcome}  {elapsed:.1f}s" + (f"  ({why})" if why else ""))

    def add_failure(self, task: Any, exception: Any) -> None:
        with self.lock:
            kind = _kind(task.name)
            if kind in ("trial", "grade"):
                self.done += 1
            message = exception.get_msg() if hasattr(exception, "get_msg") else str(exception)
            self.failures.append((task.name, message.strip()))
            if kind in ("trial", "grade"):
                self._line(f"{self._progress()} {task.name}  FAILED", err=True)

    def skip_uptodate(self, task: Any) -> None:
        kind = _kind(task.name)
        if kind is None:
            return
        with self.lock:
            self.uptodate[kind] = self.uptodate.get(kind, 0) + 1
            if kind in ("trial", "grade"):
                self.done += 1

    def skip_ignore(self, task: Any) -> None:
        pass

    def cleanup_error(self, exception: Any) -> None:
        self._line(f"cleanup error: {exception.get_msg()}", err=True)

    def runtime_error(self, msg: str) -> None:
        self._line(f"skillmake: {msg}", err=True)

    def teardown_task(self, task: Any) -> None:
        pass

    def complete_run(self) -> None:
        for name, message in self.failures:
            self._line(f"\n{name} failed:\n{_indent(message)}", err=True)
        elapsed = time.monotonic() - self.t0
        tally = self.tally
        # A task doit ran may still have been served by the store (another trial with identical inputs).
        trials_ran = int(tally.get("trial_ran", 0))
        grades_ran = int(tally.get("grade_ran", 0))
        reused_trials = self.ran.get("trial", 0) - trials_ran
        reused_grades = self.ran.get("grade", 0) - grades_ran
        trials_ok, grades_ok = self.uptodate.get("trial", 0), self.uptodate.get("grade", 0)
        trials_ok += tasks.COLLAPSED["trial"]
        grades_ok += tasks.COLLAPSED["grade"]
        if not self.ran.get("trial") and not self.ran.get("grade") and not self.failures and not self.ran.get("report"):
            if trials_ok or grades_ok:
                self._line(f"skillmake: nothing stale — {trials_ok} trials and {grades_ok} grades up to date "
                           f"({elapsed:.2f}s)")
            return
        parts = [f"ran {trials_ran} trials{self._requests('trial')} and {grades_ran} grades"
                 f"{self._requests('grade')}"]
        parts.append(f"reused {trials_ok + reused_trials} trials and {grades_ok + reused_grades} grades from the store")
        spent = []
        if tally.get("tokens"):
            spent.append(f"{int(tally['tokens']):,} tokens")
        if tally.get("cost_usd"):
            spent.append(f"${tally['cost_usd']:.4f}")
        if spent:
            parts.append("spent " + " ".join(spent))
        errors = int(tally.get("trial_error", 0) + tally.get("trial_timeout", 0))
        if errors:
            parts.append(f"{errors} trials ended in error/timeout (retried next run)")
        self._line(f"skillmake: {'; '.join(parts)} in {elapsed:.1f}s")

    # --- helpers --------------------------------------------------------------------

    def _count(self, kind: str, values: dict[str, Any]) -> None:
        if values.get("ran"):
            self.tally[f"{kind}_ran"] = self.tally.get(f"{kind}_ran", 0) + 1
            if kind == "trial" and values.get("outcome") in ("error", "timeout"):
                key = f"trial_{values['outcome']}"
                self.tally[key] = self.tally.get(key, 0) + 1
        if values.get("ran"):
            # Requests as the agent or judge reported them; a model agent that could not tell is counted apart.
            requests = values.get("requests" if kind == "trial" else "judge_calls")
            if kind == "trial" and values.get("model"):
                self.tally["trial_model"] = self.tally.get("trial_model", 0) + 1
            if requests is not None:
                self.tally[f"{kind}_requests"] = self.tally.get(f"{kind}_requests", 0) + requests
            elif kind == "trial" and values.get("model"):
                self.tally["trial_requests_unknown"] = self.tally.get("trial_requests_unknown", 0) + 1
        for name in ("tokens", "cost_usd"):
            if values.get(name):
                self.tally[name] = self.tally.get(name, 0) + values[name]

    def _requests(self, kind: str) -> str:
        """' (9 model requests)' after what ran, from what the agents and judges reported."""
        count = int(self.tally.get(f"{kind}_requests", 0))
        unknown = int(self.tally.get(f"{kind}_requests_unknown", 0))
        if not count and not unknown and not (kind == "trial" and self.tally.get("trial_model")):
            return ""
        what = "model requests" if kind == "trial" else "judge requests"
        text = f"{count} {what}"
        if unknown:
            text += f", unknown for {unknown}"
        return f" ({text})"

    def _progress(self) -> str:
        total = max(self.selected, self.done)
        width = len(str(total))
        running = len(self.started) - self.done if len(self.started) > self.done else 0
        eta = ""
        if self.durations and total > self.done:
            remaining = total - self.done
            per = sum(self.durations) / len(self.durations)
            eta = f" eta {remaining * per / max(1, running):.0f}s"
        busy = f" {running} running" if running > 1 else ""
        return f"[{self.done:>{width}}/{total}{busy}{eta}]"

    def _line(self, text: str, *, err: bool = False) -> None:
        if self.closed:
            return
        if not write_line(self.err if err else self.out, text):
            self.closed = True


def _kind(name: str) -> str | None:
    base = name.split(":", 1)[0]
    return base if base in ("trial", "grade", "report", "validate") and ":" in name else None


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
