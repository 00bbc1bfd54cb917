"""What `skillmake optimize-description` prints: a line per iteration (its scores, its description's first line,
the agent and improver calls made and reused), a transient progress line on a terminal, and the closing summary."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from skillmake.core.console import write_line
from skillmake.triggers.loop import Iteration
from skillmake.triggers.prompt import LIMIT


def first_line(text: str, limit: int = 100) -> str:
    """The first line of `text`, cut at `limit` characters; "…" says there was more."""
    lines = text.strip().splitlines() or [""]
    line = lines[0]
    return line[:limit] + "…" if len(line) > limit or len(lines) > 1 else line


def score(passed: int, total: int) -> str:
    """0.75 (3/4)"""
    return f"{passed / total:.2f} ({passed}/{total})" if total else "–"


def progress(number: int, done: int, total: int) -> None:
    """On a terminal, one line rewritten in place while an iteration's trials run (cleared when they are done)."""
    text = f"iteration {number}: {done}/{total} trigger trials" if done < total else ""
    sys.stderr.write(f"\r\033[K{text}")
    sys.stderr.flush()


def say_iteration(stream: TextIO, it: Iteration) -> None:
    """An iteration's line (scores, calls) and its description's first line; a note when the proposal made from it
    was over the length limit."""
    ev, p = it.evaluation, it.proposal
    test = f", test {score(it.test_passed, len(it.test))}" if it.test else ""
    improver = (f"improver {p.made} made, {p.calls if p.reused else 0} reused" if p else "improver 0 made, 0 reused")
    line = (f"iteration {it.number}: train {score(it.train_passed, len(it.train))}{test}; agent calls {ev.made} "
            f"made, {ev.reused} reused; {improver}")
    lines = [line, f'  "{first_line(it.description)}"']
    if p is not None and p.rewritten:
        lines.append(f"  the proposal was over {LIMIT} characters: asked once more for a shorter one"
                     + (f"; still over, so cut to {LIMIT}" if p.truncated else ""))
    for text in lines:
        write_line(stream, text)


def summary(d: dict[str, Any], *, written: str, applied: str | None) -> list[str]:
    """The closing lines, from the result document `d`: the best (by what), the calls in all, where it went."""
    by = d["best_by"]
    other = "train" if by == "test" else None
    best = f"best: iteration {d['best_iteration']}, {by} {score(d['best_passed'], d['best_total'])}"
    if other:
        best += f", train {score(d['best_train_passed'], d['best_train_total'])}"
    calls = d["calls"]
    return [best, f'  "{d["best_description"]}"',
            f"exit: {d['exit_reason']}; calls: agent {calls['agent']['made']} made, {calls['agent']['reused']} reused; "
            f"improver {calls['improver']['made']} made, {calls['improver']['reused']} reused",
            f"wrote {written}",
            applied or f"{d['skill_md']} not changed (--apply writes the best description into it)"]
