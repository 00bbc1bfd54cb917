"""The content-addressed store: immutable objects by sha256, and the action cache (key → record)."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

import orjson

from skillmake.core import atomic, redact
from skillmake.core.canonical import canonical_json, digest_bytes, hex_of
from skillmake.core.errors import RecordError
from skillmake.spec.schema import validate_record
from skillmake.store.locks import LOCK_STRIPES, stripe
from skillmake.store.syncer import SYNCER, worth_syncing

TRIAL_SCHEMA = "trial-record.schema.json"
GRADE_SCHEMA = "grade-record.schema.json"


class Remote(Protocol):
    """What the store asks of its shared remote (store/remote.py's Remote, which builds on this module): read
    through on a miss, hold a key's lease while it runs, write a finished record back, and send what is queued."""

    def fetch(self, key: str, store: Store, *, schema: str) -> bool: ...

    def lease(self, key: str) -> AbstractContextManager[None]: ...

    def write_back(self, record: dict[str, Any], store: Store) -> None: ...

    def drain(self, store: Store) -> int: ...


def store_root(project_root: str) -> Path:
    """The store folder: $SKILLMAKE_STORE when set (a store shared by clones), else <root>/.skillmake."""
    shared = os.environ.get("SKILLMAKE_STORE")
    return Path(shared).expanduser().resolve() if shared else Path(project_root) / ".skillmake"


class Store:
    """objects/<2 hex>/<62 hex> and actions/<2 hex>/<key hex>.json, written atomically.

    Objects are verified on read; a corrupt object or action entry is moved to quarantine/ and
    treated as a miss, so a damaged store costs a re-run, never a wrong result or a crash.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.objects = self.root / "objects"
        self._objects = str(self.objects)
        self.actions = self.root / "actions"
        self._actions = str(self.actions)
        self.quarantine_dir = self.root / "quarantine"
        self._locks = str(self.root / "locks")
        # Digests this process put here (written, or found stored): a trial puts the same key parts and often the
        # same outputs as the last, and each put was a stat; put_action's check that a record's objects were put
        # first (a guard against a bug in skillmake) asks here before it stats. One found lost or corrupt (get,
        # get_action) is dropped from here; one lost unseen meanwhile makes a record naming it a miss when read
        # (get_action verifies, and drops it), never a wrong result.
        self._put: set[str] = set()
        # Records this process read and found valid: key → (their file's stat signature, schema, bytes). _unchanged.
        self._seen: dict[str, tuple[tuple[int, int, int, int], str, bytes]] = {}
        # Records this process wrote, or read and found valid: key → their file's (inode, size, mtime_ns) then
        # (written_as, same_record).
        self._written: dict[str, tuple[int, int, int]] = {}
        # A shared remote store (remote.py): asked on a local miss of an action key, sent each record written.
        self.remote: Remote | None = None

    # --- objects ---------------------------------------------------------------

    def object_path(self, digest: str) -> Path:
        h = hex_of(digest)
        return self.objects / h[:2] / h[2:]

    def _object_file(self, digest: str) -> str:
        """object_path as a string: the path a read or a `has` opens (many per trial; no Path built)."""
        h = hex_of(digest)
        return f"{self._objects}/{h[:2]}/{h[2:]}"

    def put(self, data: bytes) -> str:
        digest = digest_bytes(data)
        self.put_known(digest, data)
        return digest

    def put_known(self, digest: str, data: bytes) -> None:
        """put() of `data` whose digest the caller has (a key part: hashed once when the key was made, not per
        trial). A wrong digest makes a corrupt object, which get() finds and quarantines like any other."""
        if digest in self._put:  # this store has it: put (or found) by this process already
            return
        path = self._object_file(digest)
        if not os.path.exists(path):
            atomic.write_bytes(path, data, mode=0o444)
        if len(self._put) >= _PUT_MAX:
            self._put.clear()
        self._put.add(digest)

    def put_json(self, value: Any) -> str:
        return self.put(canonical_json(value))

    def get(self, digest: str) -> bytes | None:
        """The object's bytes, or None when missing or corrupt (a corrupt one is quarantined)."""
        try:
            data = atomic.read_bytes(self._object_file(digest))
        except OSError:
            self._put.discard(digest)  # lost: the next put of its content writes it again
            return None
        if digest_bytes(data) != digest:
            self._put.discard(digest)  # put again (whole) by the next put of its content
            self._quarantine(self.object_path(digest))
            return None
        return data

    def get_json(self, digest: str) -> Any:
        data = self.get(digest)
        if data is None:
            return None
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            return None

    def has(self, digest: str) -> bool:
        return os.path.exists(self._object_file(digest))

    # --- the action cache -------------------------------------------------------

    def action_path(self, key: str) -> Path:
        h = hex_of(key)
        return self.actions / h[:2] / f"{h}.json"

    def _action_file(self, key: str) -> str:
        """action_path as a string (read and written several times a trial; no Path built)."""
        h = hex_of(key)
        return f"{self._actions}/{h[:2]}/{h}.json"

    def has_action(self, key: str) -> bool:
        return self.action_path(key).exists()

    def put_action(self, record: dict[str, Any], *, schema: str, push: bool = True) -> dict[str, Any]:
        """Write the record for record['key'] after checking it; the objects it names must already exist. Every
        text in it is redacted of this process's credentials first (redact.py: defence in depth). With a remote,
        the record and its objects go up too (`push`: False for a record that came from there). Returns the record
        as written (redacted): what a caller hands on (a grade, a view) is what a later read would give."""
        record = redact.redact_data(record, redact.environment_secrets())
        validate_record(schema, record, what=f"{record.get('kind', 'record')} {record.get('key')}")
        missing = [d for d in named_objects(record) if d not in self._put and not self.has(d)]
        if missing:
            raise RecordError(f"record names objects that are not stored: {missing[:3]}",
                              hint="objects must be written before the action entry (a bug in skillmake)")
        data = orjson.dumps(record, option=orjson.OPT_INDENT_2)
        path = self._action_file(record["key"])
        # Its objects are durable already (put: fsync'd); the record itself is made durable by SYNCER (syncer.py),
        # off this worker's path, when it is worth it (worth_syncing: not an instant, free one). Until then a power
        # loss can leave it empty or torn: a reader takes that as a miss (get_action quarantines it) and the trial
        # runs again, never a wrong result.
        st = atomic.write_bytes(path, data, durable=False, stat=True)
        assert st is not None
        self._note(record["key"], (st.st_ino, st.st_size, st.st_mtime_ns))
        if worth_syncing(record):
            SYNCER.add(path)
        _known_valid(schema, data)
        if push and self.remote is not None:
            self.remote.write_back(record, self)
        return record

    def get_action(self, key: str, *, schema: str, verify: bool = True) -> dict[str, Any] | None:
        """The cached record for `key`, or None: missing, unreadable, invalid, or naming a lost object."""
        path = self._action_file(key)
        seen = self._unchanged(key, path, schema) if verify else None
        known = seen is not None
        data = seen[2] if seen is not None else None
        if data is None:
            try:
                data, st = atomic.read_stat(path)
            except OSError:
                # A local miss asks the remote, which writes the record and its objects here when it has them.
                if self.remote is None or not self.remote.fetch(key, self, schema=schema):
                    return None
                try:
                    data, st = atomic.read_stat(path)
                except OSError:
                    return None
        try:
            record = orjson.loads(data)
            if verify and not known and not _known_valid(schema, data, add=False):
                validate_record(schema, record, what=f"action {key}")
                _known_valid(schema, data)
            if record.get("key") != key:
                raise RecordError("key mismatch")
        except (orjson.JSONDecodeError, RecordError):
            self._quarantine(Path(path))
            return None
        if verify and not all(self.has(d) for d in named_objects(record)):
            self._put.difference_update(named_objects(record))  # a lost one is written again by its next put
            self._seen.pop(key, None)
            self._quarantine(Path(path))
            return None
        if verify and not known:
            if len(self._seen) >= _SEEN_MAX:
                self._seen.clear()
            self._seen[key] = ((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns), schema, data)
        if verify:
            self._note(key, seen[0][:3] if seen is not None else (st.st_ino, st.st_size, st.st_mtime_ns))
        return dict(record)

    def written_as(self, key: str) -> tuple[int, int, int] | None:
        """The (inode, size, mtime_ns) of the record file of `key` this process last wrote, or read and found
        valid (None: neither, lately). A record is replaced whole, by a rename, never edited in place: while its
        file still has them (same_record), it holds those bytes."""
        return self._written.get(key)

    def same_record(self, key: str, signature: tuple[int, int, int] | None) -> bool:
        """Whether the record file of `key` is still the one `signature` (written_as) noted: one stat."""
        if signature is None:
            return False
        try:
            st = os.stat(self._action_file(key))
        except OSError:
            return False
        return (st.st_ino, st.st_size, st.st_mtime_ns) == signature

    def _note(self, key: str, signature: tuple[int, int, int]) -> None:
        if len(self._written) >= _WRITTEN_MAX:
            self._written.clear()
        self._written[key] = signature

    def _unchanged(self, key: str, path: str, schema: str
                   ) -> tuple[tuple[int, int, int, int], str, bytes] | None:
        """What _seen notes of the record of `key` this process read and found valid against `schema` (its stat
        signature, schema and bytes), when the file is
        still that one (its inode, size and times: a record is replaced whole, by a rename, never edited in place);
        one stat instead of reading and hashing it again (a run reads a grade record shared by many trials, and
        every trial's record again for its report)."""
        seen = self._seen.get(key)
        if seen is None or seen[1] != schema:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        return seen if (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) == seen[0] else None

    def quarantine_action(self, key: str) -> None:
        """Set aside the record of `key` (it names an object that is missing or corrupt): a miss from now on."""
        path = self.action_path(key)
        if path.exists():
            self._quarantine(path)

    def verify(self, digest: str) -> bool:
        """Whether the object is there with the content its name says (a corrupt one is quarantined)."""
        return self.get(digest) is not None

    # --- the last attempt of a key that has no cacheable result ----------------

    def attempt_path(self, key: str) -> Path:
        h = hex_of(key)
        return self.root / "attempts" / h[:2] / f"{h}.json"

    def put_attempt(self, record: dict[str, Any], *, schema: str) -> dict[str, Any]:
        """Keep an error-class record (error, timeout, judge_error) to show why a cell has no result.

        Never read as a result: a key with an attempt and no action entry is still stale. Redacted, and returned,
        as put_action's."""
        record = redact.redact_data(record, redact.environment_secrets())
        validate_record(schema, record, what=f"{record.get('kind', 'record')} {record.get('key')}")
        atomic.write_bytes(self.attempt_path(record["key"]), orjson.dumps(record, option=orjson.OPT_INDENT_2),
                           durable=False)
        return record

    def get_attempt(self, key: str, *, schema: str) -> dict[str, Any] | None:
        try:
            h = hex_of(key)
            record = orjson.loads(atomic.read_bytes(f"{self.root}/attempts/{h[:2]}/{h}.json"))
            validate_record(schema, record, what=f"attempt {key}")
        except (OSError, orjson.JSONDecodeError, RecordError):
            return None
        return dict(record) if record.get("key") == key else None

    def clear_attempt(self, key: str) -> None:
        h = hex_of(key)
        with contextlib.suppress(OSError):
            os.unlink(f"{self.root}/attempts/{h[:2]}/{h}.json")

    # --- one execution per key at a time, across runs and projects sharing this store ----

    @contextlib.contextmanager
    def key_lock(self, key: str) -> Iterator[None]:
        """Hold the lock of `key` and, with a remote, its lease there (lease.py): a clone on another machine running
        the same key waits, then reuses the record.

        The lock is one of locks.LOCK_STRIPES stripes under locks/ (by the key's first two hex digits): a byte of one
        file on Linux, else a file each, made once and kept: a file made and removed per key cost a trial two inode
        operations, the dearest thing it does on this disk. Two keys of one stripe wait for each other (a few ms at
        most, rarely: 4 workers, 256 stripes); a thread may hold one stripe twice (nested keys), and holds at most one
        lock per key, so no two waiters can each hold what the other wants unless a caller nests keys in both orders,
        which none does."""
        with stripe(self._locks, int(hex_of(key)[:2], 16) % LOCK_STRIPES):
            if self.remote is None:
                yield
                return
            with self.remote.lease(key):
                yield

    # --- temp files that killed writers left --------------------------------------------------------------

    def begin_run(self, *, min_age: float = 2.0) -> int:
        """Mark this process as a writer of the store for the rest of its life (a flock'd file under running/,
        removed at exit). When a writer marked before died without ending (SIGKILL, a power loss), or the store
        predates these marks, sweep the temp files such writers leave; returns how many were removed.

        Safe beside live writers in other runs and projects sharing the store: every writer holds a flock on
        its temp file until it renames it (atomic.write_bytes), and a file that is held, or younger than
        `min_age` seconds (created, not yet locked), is left alone."""
        folder = self.root / "running"
        if self.remote is not None:
            self.remote.drain(self)  # what a killed run (or a remote that was down) left to send
        if str(folder) in _running:
            return 0
        # No marks yet: a store written before them (or a new one), swept once.
        dead: list[Path | None] = [] if folder.is_dir() else [None]
        try:
            names = [n for n in os.listdir(folder) if not n.startswith(".")]
        except OSError:
            names = []
        for name in names:
            fd = _try_lock(folder / name)
            if fd is not None:  # its writer is gone
                dead.append(folder / name)
                os.close(fd)
        name = f"{os.getpid()}-{secrets.token_hex(4)}"
        folder.mkdir(parents=True, exist_ok=True)
        # Locked before it gets its name, so another run never sees it unlocked and takes it for a dead one.
        fd = os.open(folder / f".{name}", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.replace(folder / f".{name}", folder / name)
        _running[str(folder)] = (fd, str(folder / name))
        removed = self.sweep_temp(min_age=min_age) if dead else 0
        for path in dead:
            if path is not None:
                with contextlib.suppress(OSError):
                    os.unlink(path)
        return removed

    def sweep_temp(self, *, min_age: float = 2.0) -> int:
        """Remove the temp files of writes that never finished (objects/, actions/, attempts/, replaced/,
        index/ and the store's own folder), except those a live writer holds; returns how many."""
        removed = 0
        now = time.time()
        for dirpath, filenames in self._temp_folders():
            for name in filenames:
                if not (name.startswith(".") and name.endswith(atomic.TEMP_SUFFIX)):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    if now - os.stat(path).st_mtime < min_age:
                        continue
                except OSError:
                    continue
                fd = _try_lock(Path(path))
                if fd is None:  # a live writer holds it
                    continue
                try:
                    os.unlink(path)
                    removed += 1
                except OSError:
                    pass
                finally:
                    os.close(fd)
        return removed

    def _temp_folders(self) -> Iterator[tuple[str, list[str]]]:
        yield str(self.root), _files(self.root)
        for sub in ("objects", "actions", "attempts", "replaced", "index"):
            for dirpath, _, filenames in os.walk(self.root / sub):
                yield dirpath, filenames

    def _quarantine(self, path: Path) -> None:
        """Move a damaged file aside (kept for inspection) so it is never trusted again."""
        target = self.quarantine_dir / f"{path.parent.name}{path.name}.{int(time.time() * 1000)}"
        with contextlib.suppress(OSError):
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)


_running: dict[str, tuple[int, str]] = {}  # running/ folder → (fd, path) of this process's mark
_PUT_MAX = 100_000  # Store._put's bound: emptied when it grows past it
_SEEN_MAX = 4_096  # Store._seen's bound (a few MiB of records)
_WRITTEN_MAX = 65_536  # Store._written's bound (~200 bytes an entry)

# schema → sha256 of record files this process wrote or read and found valid: the same bytes read again are not
# validated again (a trial's record is read back by its grade, its view and the report; validation was a fifth
# of a first run's CPU). Bounded: emptied when it grows past _VALID_MAX.
_VALID: dict[str, set[bytes]] = {}
_VALID_MAX = 200_000


def _known_valid(schema: str, data: bytes, *, add: bool = True) -> bool:
    """Whether `data` (a record file's bytes) was found valid against `schema` before; with `add`, note it is."""
    mark = hashlib.sha256(data).digest()
    seen = _VALID.setdefault(schema, set())
    if not add:
        return mark in seen
    if len(seen) >= _VALID_MAX:
        seen.clear()
    seen.add(mark)
    return True


@atexit.register
def _end_runs() -> None:
    """A writer that ends normally removes its mark: only a killed one leaves it for the next run to sweep after."""
    for fd, path in _running.values():
        with contextlib.suppress(OSError):
            os.unlink(path)
        with contextlib.suppress(OSError):
            os.close(fd)
    _running.clear()


def _try_lock(path: Path) -> int | None:
    """An fd holding an exclusive flock on `path`, or None when another holder has it (or it is gone)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _files(folder: Path) -> list[str]:
    try:
        return [e.name for e in os.scandir(folder) if e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def named_objects(record: dict[str, Any]) -> list[str]:
    """Every object a trial record names itself: its outputs and its kept workspace tree (the tree's own files
    are named inside the tree)."""
    out = _digests(record.get("outputs", {}))
    tree = record.get("workspace")
    if isinstance(tree, str) and tree.startswith("sha256:"):
        out.append(tree)
    return out


def _digests(outputs: dict[str, Any]) -> list[str]:
    out = []
    for name, value in outputs.items():
        if name == "files":
            out.extend(value.values())
        elif isinstance(value, str):
            out.append(value)
    return out
