"""What the viewer's pages show, read from the store as it is: each spec's report.json and history, the cell
views under runs/ (trial.json, grade.json), the case's eval_metadata.json, trigger views, and objects by digest.
Anything missing or unreadable is shown as missing, never a crash."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import orjson

from skillmake.core import atomic
from skillmake.core.errors import RecordError
from skillmake.results.files import REPORT
from skillmake.results.history import read_history
from skillmake.results.report import report_digest
from skillmake.run.project import Project, StateFolders
from skillmake.spec.model import Spec
from skillmake.spec.schema import validate_record
from skillmake.store.objects import Store
from skillmake.view import feedback

ARCHIVE = "archive"  # reports/<spec>/archive/<digest hex>.json: the report of each history row, to compare runs
ARCHIVE_KEEP = 100
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True, kw_only=True)
class Source(StateFolders):
    """Where the viewer reads: the project's state folder, its content store, and its specs when they loaded (for
    tags and case order; a store whose specs are gone or broken is still shown from its reports)."""

    state_dir: Path
    store: Store
    specs: Mapping[str, Spec] = field(default_factory=dict)
    only: tuple[str, ...] = ()  # spec names to show; empty: all
    live: frozenset[str] | None = None  # the specs the project has now (None: unknown, show every report)

    @classmethod
    def of(cls, project: Project, only: tuple[str, ...] = ()) -> Source:
        from skillmake.spec.loader import spec_name_of

        # A spec deleted since its last report is not shown (a run removes its folders too): its loaded specs,
        # and the broken ones by file name, are what the project has.
        live = frozenset({s.name for s in project.specs} | {spec_name_of(p) for p in project.spec_files})
        return cls(state_dir=project.state_dir, store=project.store, specs={s.name: s for s in project.specs},
                   only=only, live=live)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialView:
    """One cell's view as checked out: its trial and grade records (None when it has none yet)."""

    arm: str
    k: int
    record: dict[str, Any] | None
    grade: dict[str, Any] | None

    @property
    def outcome(self) -> str:
        """The grade's outcome; without one, the trial's error-class outcome, `ungraded`, or `missing`."""
        if self.grade is not None:
            return str(self.grade["outcome"])
        if self.record is None:
            return "missing"
        outcome = str(self.record.get("outcome"))
        return outcome if outcome in ("error", "timeout", "cheat") else "ungraded"


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryRun:
    ts: str
    digest: str
    passed: bool
    all_passed: bool
    archived: bool

    @property
    def short(self) -> str:
        return self.digest.removeprefix("sha256:")[:12]


def read_json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def read_json_bytes(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def spec_names(source: Source) -> list[str]:
    """The specs that have a report, sorted by name (limited to `source.only` when set)."""
    try:
        names = sorted(p.name for p in source.reports_dir.iterdir() if (p / "report.json").is_file())
    except OSError:
        return []
    return [n for n in names if (not source.only or n in source.only) and (source.live is None or n in source.live)]


def valid_report(data: Any, what: str) -> dict[str, Any] | None:
    """A report.json checked against its schema. The optional `triggers` block (trigger evals) is read loosely
    by the pages, so a report that has it is shown whether or not this checkout's schema knows it yet."""
    if not isinstance(data, dict):
        return None
    try:
        validate_record(REPORT, {k: v for k, v in data.items() if k != "triggers"}, what=what)
    except RecordError:
        return None
    return data


def report_of(source: Source, name: str) -> dict[str, Any] | None:
    path = source.reports_dir / name / "report.json"
    return valid_report(read_json(path), str(path))


def triggers_of(report: Mapping[str, Any]) -> dict[str, Any] | None:
    value = report.get("triggers")
    return value if isinstance(value, dict) and isinstance(value.get("queries", []), list) else None


def _hex(digest: str) -> str:
    return digest.removeprefix("sha256:")


def is_digest(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and value.startswith("sha256:") and len(value) == 71 and set(value[7:]) <= _HEX


def archive(source: Source, name: str, report: Mapping[str, Any]) -> str:
    """Keep a copy of the report under its digest (history.jsonl names reports only by digest), so two runs from
    history can be compared later; the oldest copies past ARCHIVE_KEEP go. Returns the digest."""
    digest = report_digest(report)
    folder = source.reports_dir / name / ARCHIVE
    path = folder / f"{_hex(digest)}.json"
    if not path.exists():
        atomic.write_bytes(path, orjson.dumps(report), durable=False)
        copies = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for old in copies[:-ARCHIVE_KEEP]:
            old.unlink(missing_ok=True)
    return digest


def archived(source: Source, name: str, digest: str) -> dict[str, Any] | None:
    if not is_digest(digest):
        return None
    path = source.reports_dir / name / ARCHIVE / f"{_hex(digest)}.json"
    return valid_report(read_json(path), str(path))


def history(source: Source, name: str) -> list[HistoryRun]:
    """The spec's runs that changed a result, newest first, each saying whether its report was archived."""
    try:
        rows = read_history((source.reports_dir / name / "history.jsonl").read_bytes())
    except OSError:
        return []
    folder = source.reports_dir / name / ARCHIVE
    out = []
    for row in reversed(rows):
        digest = row.get("digest")
        if not is_digest(digest):
            continue
        out.append(HistoryRun(ts=str(row.get("ts", "")), digest=digest, passed=bool(row.get("gates_passed")),
                              all_passed=bool(row.get("all_passed")),
                              archived=(folder / f"{_hex(digest)}.json").exists()))
    return out


def previous(source: Source, name: str, report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report of the last run before this one that changed a result (from the archive), or None."""
    current = report_digest(report)
    for run in history(source, name):
        if run.digest != current and run.archived:
            return archived(source, name, run.digest)
    return None


def case_meta(source: Source, spec: str, case: str) -> dict[str, Any]:
    """The case's eval_metadata.json (its prompt and eval_id), or {}."""
    data = read_json(source.runs_dir / spec / case / "eval_metadata.json")
    return data if isinstance(data, dict) else {}


def eval_id(source: Source, report: Mapping[str, Any], case: str) -> int:
    meta = case_meta(source, report["spec"]["name"], case)
    value = meta.get("eval_id")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    cases = list(report["spec"]["cases"])
    return cases.index(case) if case in cases else 0


def trial_view(source: Source, spec: str, case: str, arm: str, k: int) -> TrialView:
    folder = source.runs_dir / spec / case / arm / f"trial-{k}"
    record, grade = read_json(folder / "trial.json"), read_json(folder / "grade.json")
    return TrialView(arm=arm, k=k, record=record if isinstance(record, dict) else None,
                     grade=grade if isinstance(grade, dict) else None)


def outcomes(source: Source, spec: str, case: str, arm: str, trials: int) -> list[str]:
    """Each trial's outcome, read from its grade.json alone (the spec page shows thousands of them)."""
    out = []
    for k in range(trials):
        folder = source.runs_dir / spec / case / arm / f"trial-{k}"
        grade = read_json(folder / "grade.json")
        if isinstance(grade, dict) and isinstance(grade.get("outcome"), str):
            out.append(grade["outcome"])
        else:
            out.append(trial_view(source, spec, case, arm, k).outcome)
    return out


def run_ids(source: Source, report: Mapping[str, Any]) -> dict[str, tuple[str, str, int]]:
    """Every feedback run id of the spec → (case, arm, k)."""
    trials = int(report["spec"]["trials"])
    out = {}
    for case in report["spec"]["cases"]:
        ident = eval_id(source, report, case)
        for arm in report["spec"]["arms"]:
            for k in range(trials):
                out[feedback.run_id(ident, arm, k, trials=trials)] = (case, arm, k)
    return out


def feedback_of(source: Source, spec: str) -> feedback.Feedback:
    return feedback.read(feedback.path_of(source.reports_dir, spec))


def staged_inputs(source: Source, record: Mapping[str, Any] | None) -> dict[str, str]:
    """The input files staged into the trial's workspace (name → content digest), from its run fragment."""
    if record is None:
        return {}
    fragment = source.store.get_json(str(record.get("inputs", {}).get("run", "")))
    files = fragment.get("input_files") if isinstance(fragment, dict) else None
    return {str(k): str(v) for k, v in files.items() if is_digest(v)} if isinstance(files, dict) else {}


def workspace_files(source: Source, record: Mapping[str, Any] | None) -> dict[str, str]:
    """Files the trial left in its workspace (path → digest) from its kept tree; links are left out."""
    tree_digest = record.get("workspace") if record else None
    tree = source.store.get_json(tree_digest) if is_digest(tree_digest) else None
    if not isinstance(tree, dict):
        return {}
    return {str(p): str(n["file"]) for p, n in tree.items() if isinstance(n, dict) and is_digest(n.get("file"))}


def blob(source: Source, digest: Any) -> bytes | None:
    return source.store.get(digest) if is_digest(digest) else None


def record_bytes(source: Source, key: str) -> bytes | None:
    """A record as the store holds it: the action cache entry of `key`, else its last attempt, else a trigger
    trial's view that names it."""
    if not is_digest(key):
        return None
    for path in (source.store.action_path(key), source.store.attempt_path(key)):
        try:
            return path.read_bytes()
        except OSError:
            continue
    return None


def trigger_views(source: Source, spec: str, query: str) -> list[dict[str, Any]]:
    """The trial.json of each trigger trial of one query (`.skillmake/triggers/<spec>/<query>/trial-<k>/`)."""
    folder = source.triggers_dir / spec / query
    out = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in names:
        data = read_json(folder / name / "trial.json")
        if name.startswith("trial-") and isinstance(data, dict):
            out.append(data)
    return out
