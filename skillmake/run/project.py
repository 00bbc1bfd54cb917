"""A project: its root and configuration, the store, the kept-runs folder, the loaded specs (with this run's
settings applied) and their errors."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic
from skillmake.core.errors import SpecError
from skillmake.run.keys import KeyMaker
from skillmake.spec import overrides
from skillmake.spec.config import Config, load_config
from skillmake.spec.discovery import Head
from skillmake.spec.model import Spec
from skillmake.store.objects import Store


class StateFolders:
    """The folders under a project's state folder (`.skillmake/`) that hold what a run checks out and writes: the
    cells' views, the reports and the trigger trials' views (the viewer reads them through the same names)."""

    __slots__ = ()
    state_dir: Path

    @property
    def runs_dir(self) -> Path:
        return self.state_dir / "runs"

    @property
    def reports_dir(self) -> Path:
        return self.state_dir / "reports"

    @property
    def triggers_dir(self) -> Path:
        return self.state_dir / "triggers"


@dataclass(slots=True)
class Project(StateFolders):
    root: str
    store: Store
    state_dir: Path  # <root>/.skillmake: doit's db, kept runs, reports
    keys: KeyMaker
    specs: list[Spec] = field(default_factory=list)
    broken: dict[str, list[SpecError]] = field(default_factory=dict)  # spec path → its errors
    spec_files: list[str] = field(default_factory=list)
    config: Config | None = None
    skipped: list[Head] = field(default_factory=list)  # files in other tools' formats, left alone
    # spec name → its run settings and where each came from (`skillmake explain`: "trials: 5 (command line)")
    settings: dict[str, dict[str, overrides.Setting]] = field(default_factory=dict)
    # Per-load caches of the layers above, which this module may not import (triggers.keys.trigger_keys).
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def work_dir(self) -> Path:
        """Where trials execute (one folder per key and run), outside every project tree (hermetic.py); emptied
        when a run starts."""
        from skillmake.run.hermetic import work_root

        return work_root(self.state_dir, self.root)

    @classmethod
    def open(cls, root: str, *, files: list[str] | None = None) -> Project:
        """Load the project at `root`. Raise ConfigErrors for a broken configuration, NoSpecs when the project
        has no spec (and then create nothing: no .skillmake/ where there is nothing to run)."""
        from skillmake.spec.parsecache import ParseCache
        from skillmake.spec.validate import validate_files

        root = os.path.abspath(root)
        config = load_config(root)
        state = Path(config.state_dir)
        cache = _SchemaCache(state / "schema-valid.json")
        parsed = ParseCache(state / "parsed")  # written below, once the state folder may be made
        result = validate_files(files, root=root, schema_valid=cache.digests, config=config, parsed=parsed)
        if result.no_specs is not None:
            raise result.no_specs
        overrides.check()  # a bad $SKILLMAKE_TRIALS is a usage error before anything is created
        from skillmake.run import ratelimit

        ratelimit.configure(max_connections=overrides.resolve("max_connections", project=config.max_connections).value,
                            adaptive=config.adaptive_connections)  # this process's requests, for every run of it
        state.mkdir(parents=True, exist_ok=True)
        _ignore_file(state)
        cache.save()
        parsed.save()
        project = cls(root=root, store=Store(config.content_store), state_dir=state, keys=KeyMaker(root),
                      config=config, skipped=result.skipped, spec_files=result.files)
        from skillmake.store.remote import open_remote

        project.store.remote = open_remote(config.remote)  # None offline or unset; made lazily (no fsspec import)
        for spec in result.specs:
            # What the spec writes (a seed's translation: clauditor's variance.n_runs is its `trials`).
            settings = overrides.spec_settings(spec, config, declared=spec.declared)
            project.settings[spec.name] = settings
            project.specs.append(overrides.apply(spec, settings, config))
        for error in result.errors:
            path = error.loc.path if error.loc else "?"
            project.broken.setdefault(path, []).append(error)
        return project


def current_run_id() -> str:
    """This run's id, shared by every thread and worker process of it (through the environment)."""
    return os.environ.get("SKILLMAKE_RUN_ID") or new_run_id()


def new_run_id() -> str:
    """Start a run: a fresh id (never one inherited from whatever started this process)."""
    now = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    run_id = os.environ["SKILLMAKE_RUN_ID"] = f"{now}-{os.getpid()}-{os.urandom(3).hex()}"
    return run_id


class _SchemaCache:
    """Digests of spec texts that passed the schema, so an unchanged spec is not schema-checked again."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.digests: set[str] = set(orjson.loads(path.read_bytes()))
        except (OSError, orjson.JSONDecodeError, TypeError):
            self.digests = set()
        self.loaded = set(self.digests)

    def save(self) -> None:
        if self.digests != self.loaded:
            atomic.write_bytes(self.path, orjson.dumps(sorted(self.digests)[-10000:]))


def _ignore_file(state: Path) -> None:
    """.skillmake/ ignores itself, so nobody commits the store by accident."""
    marker = state / ".gitignore"
    if not marker.exists():
        marker.write_text("*\n")
