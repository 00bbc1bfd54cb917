"""`skillmake push` and `skillmake pull [SPEC…]`: explicit syncing with the remote store (remote.py).

A run already reads through the remote and writes back what it finishes; these are for the rest: `push` sends
every result the local store holds that the remote lacks (results of runs made offline, or before the remote was
set), `pull` fetches every result the project's specs name now — trials, then the grades of their outputs — so a
laptop can go offline with them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import orjson

from skillmake.commands.argparser import Parser, parsed
from skillmake.core.console import write_line
from skillmake.core.errors import EXIT_FAILED, EXIT_NO_SPECS, EXIT_OK, UsageError
from skillmake.run.project import Project
from skillmake.store.objects import GRADE_SCHEMA, TRIAL_SCHEMA, Store
from skillmake.store.remote import Remote, remote_of

BATCH = 256  # records per push batch: every object of a batch goes up before any of its entries


def push_main(args: Sequence[str]) -> int:
    parser = Parser(prog="skillmake push",
                     description="Send every result in the local store that the remote store lacks (objects "
                                 "first, then each entry); the specs need not be there. Exit 0; 1 the remote "
                                 "could not be reached (the rest stay local); 3 with no remote set; 5 when the "
                                 "local store holds no result to send.")
    given = parsed(parser, list(args))
    if isinstance(given, int):  # --help
        return given
    store, remote = _local_store()
    remote.drain(store)  # what runs left in the outbox (killed mid-upload, or the remote was down)
    records = list(_local_records(store))
    if not records:  # the wrong folder, or nothing has run here: not "pushed 0 of 0", as `report` says it
        write_line(sys.stderr, f"skillmake: push: nothing to push: no result is stored in {store.root} (no run has "
                               "stored one here)\n  hint: run `skillmake` first, or push another project with "
                               "`skillmake --root DIR push`")
        return EXIT_NO_SPECS
    sent = 0
    for i in range(0, len(records), BATCH):
        sent += remote.push(records[i:i + BATCH], store, skip_present=True)
        _progress("push", min(i + BATCH, len(records)), len(records))
    _say_notes(remote)
    if remote.down:  # not "the rest were there already": they were not sent, and the job must say so
        left = len(records) - sent
        write_line(sys.stderr, f"skillmake: push: pushed {sent} of {len(records)} results to {remote.shown}; "
                               f"{left} result{' stays' if left == 1 else 's stay'} local (the remote could not be "
                               "reached: check its URL and credentials, then push again)")
        return EXIT_FAILED
    write_line(sys.stdout, f"skillmake: pushed {sent} of {len(records)} results to {remote.shown} "
                           f"({_size(remote.stats.uploaded_bytes)} sent; the rest were there already)")
    return EXIT_OK


def pull_main(args: Sequence[str]) -> int:
    parser = Parser(prog="skillmake pull",
                     description="Fetch from the remote store every trial and grade the specs name now (only "
                                 "what the local store lacks; every object verified by hash). Exit 0, 3 with no "
                                 "remote set.")
    parser.add_argument("specs", nargs="*", metavar="SPEC", help="spec names (default: every spec)")
    opts = parsed(parser, list(args))
    if isinstance(opts, int):  # --help
        return opts
    project, remote = _open()
    specs = [s for s in project.specs if not opts.specs or s.name in opts.specs]
    unknown = sorted(set(opts.specs) - {s.name for s in project.specs})
    if unknown:
        raise UsageError(f"pull: no spec named {', '.join(unknown)}",
                         hint=f"the specs: {', '.join(s.name for s in project.specs)}")
    from skillmake.engine.plan import plan_spec

    before = remote.stats.fetched_records
    store: Store = project.store
    plans = [plan_spec(project, spec) for spec in specs]
    trials = {i.tkey.key for plan in plans for i in plan.items} | {t.tkey.key for plan in plans for t in plan.triggers}
    _fetch_all(remote, store, sorted(k for k in trials if not store.has_action(k)), TRIAL_SCHEMA, "pull trials")
    # The grade keys follow from the trials' outputs: plan again now that the trials are here.
    grades = {item.grade_key for spec in specs for item in plan_spec(project, spec).items if item.grade_key}
    _fetch_all(remote, store, sorted(k for k in grades if not store.has_action(k)), GRADE_SCHEMA, "pull grades")
    have = sum(1 for key in (*trials, *grades) if store.action_path(key).exists())
    _say_notes(remote)
    write_line(sys.stdout, f"skillmake: pulled {remote.stats.fetched_records - before} results from {remote.shown} "
                           f"({_size(remote.stats.downloaded_bytes)}); {have} of {len(trials) + len(grades)} "
                           "trials and grades the specs name are stored here now")
    return EXIT_OK


def _fetch_all(remote: Remote, store: Store, keys: list[str], schema: str, what: str) -> None:
    """Fetch the records of `keys` the remote holds, in batches (one listing of the remote says which: prefetch)."""
    for i in range(0, len(keys), BATCH):
        remote.prefetch(keys[i:i + BATCH], store, schema=schema)
        _progress(what, min(i + BATCH, len(keys)), len(keys))


def _progress(what: str, done: int, total: int) -> None:
    """`push 512/1200` on one line of a terminal (nothing when stderr is a file or a pipe)."""
    if sys.stderr.isatty():
        sys.stderr.write(f"\r{what} {done}/{total}" + ("\n" if done >= total else ""))
        sys.stderr.flush()


def _open() -> tuple[Project, Remote]:
    """The project (its specs: pull fetches what they name) and its remote."""
    from skillmake.commands.specs import project_root

    project = Project.open(project_root())
    return project, _remote_or_refuse(remote_of(project.store))


def _local_store() -> tuple[Store, Remote]:
    """The project's store and its remote, from its configuration alone: push sends what is stored, whatever the
    specs are now (deleted, renamed, or never there: a store copied from another machine)."""
    from skillmake.commands.specs import project_root
    from skillmake.spec.config import load_config
    from skillmake.store.remote import open_remote

    config = load_config(project_root())  # a broken configuration is its errors and their exit code
    store = Store(config.content_store)
    store.remote = open_remote(config.remote)
    return store, _remote_or_refuse(remote_of(store))


def _remote_or_refuse(remote: Remote | None) -> Remote:
    if remote is None:
        offline = os.environ.get("SKILLMAKE_OFFLINE", "") not in ("", "0")
        if offline:  # the remote may well be set: offline is what hides it
            raise UsageError("no remote store (--offline / SKILLMAKE_OFFLINE is set)",
                             hint="push and pull talk to the remote: drop --offline (or unset SKILLMAKE_OFFLINE)")
        raise UsageError("no remote store", hint="say where: remote = \"s3://bucket/prefix\" in the config, "
                                                  "SKILLMAKE_REMOTE, or --remote URL")
    return remote


def _local_records(store: Store) -> Any:
    """Every action entry of the local store, oldest folder first (unreadable ones skipped: a run re-makes them)."""
    actions = store.actions
    for sub in sorted(os.listdir(actions)) if actions.is_dir() else []:
        folder = actions / sub
        for name in sorted(os.listdir(folder)) if folder.is_dir() else []:
            if not name.endswith(".json") or name.startswith("."):
                continue
            try:
                record = orjson.loads((folder / name).read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue
            if isinstance(record, dict) and isinstance(record.get("key"), str):
                yield record


def _say_notes(remote: Remote) -> None:
    for note in remote.stats.notes:
        write_line(sys.stderr, f"skillmake: {note}")


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.1f} kB" if n >= 1e3 else f"{n} B"
