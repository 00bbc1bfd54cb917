"""A reviewer's notes per trial: skill-creator's feedback.json beside the spec's results, read, merged, written."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic
from skillmake.core.errors import RecordError, SkillmakeError
from skillmake.spec.schema import validate_record

SCHEMA = "feedback.schema.json"
FILE = "feedback.json"
MAX_NOTE = 20_000  # characters; the schema says the same


class FeedbackError(SkillmakeError):
    """A feedback request that cannot be saved (the server answers 400 with this message)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Feedback:
    """A spec's feedback.json as read: notes by run_id, the status, and why the file was not used if it was bad."""

    notes: dict[str, dict[str, str]] = field(default_factory=dict)  # run_id → {"feedback", "timestamp"}
    status: str = "in_progress"
    problem: str | None = None

    def note(self, run_id: str) -> str:
        return self.notes.get(run_id, {}).get("feedback", "")

    def document(self) -> dict[str, Any]:
        """The file's content: skill-creator's {"reviews": [...], "status"}, reviews in run_id order."""
        reviews = [{"run_id": rid, "feedback": n["feedback"], "timestamp": n["timestamp"]}
                   for rid, n in sorted(self.notes.items())]
        return {"reviews": reviews, "status": self.status}


def run_id(eval_id: int, arm: str, k: int, *, trials: int) -> str:
    """skill-creator's run id: the run folder's path in its workspace with '/' as '-' — `eval-<id>/<config>/` for
    one run, `eval-<id>/<config>/run-<n>/` (n from 1) for several (its aggregate_benchmark's layout)."""
    base = f"eval-{eval_id}-{arm}"
    return base if trials <= 1 else f"{base}-run-{k + 1}"


def path_of(reports_dir: Path, spec: str) -> Path:
    return reports_dir / spec / FILE


def read(path: Path) -> Feedback:
    """The feedback at `path`; a missing file is no feedback, a bad one is no feedback with the problem said."""
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return Feedback()
    except (OSError, orjson.JSONDecodeError) as exc:
        return Feedback(problem=f"{path.name} could not be read ({type(exc).__name__}); it was left as it is")
    return parse(data, what=str(path))


def parse(data: Any, *, what: str) -> Feedback:
    try:
        validate_record(SCHEMA, data, what=what)
    except RecordError as exc:
        return Feedback(problem=exc.message)
    notes = {r["run_id"]: {"feedback": r["feedback"], "timestamp": r["timestamp"]} for r in data["reviews"]}
    return Feedback(notes=notes, status=data["status"])


def now() -> str:
    """skill-creator's timestamp: UTC, to the second, with a Z."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def request(body: Mapping[str, Any], known: frozenset[str]) -> tuple[str | None, str | None, str | None]:
    """(run_id, note, status) of a save request `{"run_id", "feedback"}` and/or `{"status"}`; FeedbackError says
    what is wrong with it. `known`: the run ids the spec has now (a note for another run is refused)."""
    extra = set(body) - {"run_id", "feedback", "status", "spec", "token"}
    if extra:
        raise FeedbackError(f"unknown field(s) {', '.join(sorted(extra))}",
                            hint='send {"spec", "run_id", "feedback"} or {"spec", "status"}')
    rid, note, status = body.get("run_id"), body.get("feedback"), body.get("status")
    if rid is None and status is None:
        raise FeedbackError("nothing to save", hint='send {"spec", "run_id", "feedback"} or {"spec", "status"}')
    if rid is not None:
        if not isinstance(rid, str) or rid not in known:
            raise FeedbackError(f"run_id {str(rid)[:80]!r} is not a trial of this spec",
                                hint="reload the page: the spec's cases or trials may have changed")
        if not isinstance(note, str):
            raise FeedbackError("feedback must be a string", hint="send the note as text")
        if len(note) > MAX_NOTE:
            raise FeedbackError(f"feedback is {len(note):,} characters, more than {MAX_NOTE:,}",
                                hint="shorten the note")
    if status is not None and status not in ("in_progress", "complete"):
        raise FeedbackError(f"status {str(status)[:40]!r} is not in_progress or complete",
                            hint="send in_progress or complete")
    return rid, note if rid is not None else None, status


def merged(current: Feedback, *, rid: str | None, note: str | None, status: str | None,
           when: str) -> Feedback:
    """`current` with one note set (an empty note removes it, as skill-creator's viewer does while reviewing) and
    the status changed when one is given."""
    notes = dict(current.notes)
    if rid is not None and note is not None:
        if note.strip():
            notes[rid] = {"feedback": note, "timestamp": when}
        else:
            notes.pop(rid, None)
    return Feedback(notes=notes, status=status or current.status)


def write(path: Path, feedback: Feedback) -> None:
    """Validate, then write atomically (a reviewer's words are not rebuilt from records: fsync'd)."""
    doc = feedback.document()
    validate_record(SCHEMA, doc, what=str(path))
    atomic.write_bytes(path, orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
