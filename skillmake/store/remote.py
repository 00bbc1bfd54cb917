"""The remote store: the local store's objects/ and actions/ mirrored through fsspec (S3, a shared folder, …).

The local store stays the fast path. The remote is read-through — a local miss of an action key asks the remote:
its entry, then every object the entry names (and the files of a kept workspace tree), each verified by its hash
and written locally before the entry is — and write-back: a finished record's objects go up first, only those the
remote lacks, then its entry, so a reader never finds an entry naming a missing object. On S3 a PUT is atomic per
object; on a folder (file://) every upload is written to a temp name and renamed. A corrupt remote object or entry
is a miss, reported once, never served. fsspec is imported here only, on the first remote request.

Failures are notes, never a failed trial: the remote is a cache, so losing it costs a re-run, nothing more.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from skillmake.core import atomic
from skillmake.core.canonical import digest_bytes, hex_of
from skillmake.core.errors import RecordError
from skillmake.spec.schema import validate_record
from skillmake.store.lease import Leases
from skillmake.store.objects import Store, named_objects

REMOTE_VAR = "SKILLMAKE_REMOTE"  # a remote for this run (`--remote URL` sets it); beats the config's `remote`
OFFLINE_VAR = "SKILLMAKE_OFFLINE"  # "1": ignore every remote (`--offline` sets it)
FEW = 32  # keys asked for one by one; past this, one listing of the remote says which it has
WORKERS = 8  # transfers at once: enough to hide a round trip, few enough for a rate-limited bucket


def configured(config_remote: str | None, environ: dict[str, str] | None = None) -> str | None:
    """The remote URL this run uses: none when offline, else $SKILLMAKE_REMOTE, else the config's `remote`."""
    env = os.environ if environ is None else environ
    if env.get(OFFLINE_VAR, "") not in ("", "0"):
        return None
    return (env.get(REMOTE_VAR) or "").strip() or config_remote or None


def shown(url: str) -> str:
    """`url` fit for a log line: no user, password or query (where credentials hide)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass(slots=True)
class Stats:
    """What moved: counts and bytes, for the run's closing line and the bench."""

    fetched_records: int = 0
    pushed_records: int = 0
    downloaded_bytes: int = 0
    uploaded_bytes: int = 0
    requests: int = 0
    notes: list[str] = field(default_factory=list)


class Remote:
    """One remote store at `url` (`s3://bucket/prefix`, `file:///shared/folder`, any fsspec URL)."""

    def __init__(self, url: str, *, workers: int = WORKERS) -> None:
        self.url = url
        self.shown = shown(url)
        self.workers = workers
        self.stats = Stats()
        self._fs: Any = None
        self._root = ""
        self._lock = threading.Lock()
        self._absent: set[str] = set()  # keys the remote was asked for and lacked, in this process
        self._corrupt: set[str] = set()  # objects found corrupt there: uploaded again whenever this store has them
        self._down = False  # unreachable once: not asked again by this process (no timeout per trial)
        self._drained = False
        self._noted: set[str] = set()
        self._said_down = False
        self._listed: frozenset[str] | None = None  # the action entries' hexes, from one listing (prefetch)
        self._leases: Leases | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        """A worker process gets a fresh remote of the same URL (no lock, no client, no cache of this process)."""
        return (Remote, (self.url,), None)

    @property
    def down(self) -> bool:
        """Whether this process found the remote unreachable (and stopped asking it)."""
        return self._down

    # --- the file system ---------------------------------------------------------------------------------------

    @property
    def fs(self) -> Any:
        """The fsspec file system, made on first use (a warm local store never imports fsspec)."""
        with self._lock:
            if self._fs is None:
                try:
                    from fsspec.core import url_to_fs
                except ImportError:
                    raise RemoteUnavailable("the remote store needs fsspec (and s3fs for s3://): "
                                            "pip install 'skillmake[remote]'") from None
                fs, root = url_to_fs(self.url)
                self._fs, self._root = fs, root.rstrip("/")
            return self._fs

    def object_path(self, digest: str) -> str:
        h = hex_of(digest)
        return f"{self._base()}/objects/{h[:2]}/{h[2:]}"

    def action_path(self, key: str) -> str:
        h = hex_of(key)
        return f"{self._base()}/actions/{h[:2]}/{h}.json"

    def _base(self) -> str:
        _ = self.fs
        return self._root

    def _cat(self, path: str) -> bytes | None:
        """The bytes at `path`, or None when there is nothing there."""
        self._count()
        try:
            data = self.fs.cat_file(path)
        except FileNotFoundError:
            return None
        with self._lock:
            self.stats.downloaded_bytes += len(data)
        return bytes(data)

    def _exists(self, path: str) -> bool:
        self._count()
        return bool(self.fs.exists(path))

    def _write(self, path: str, data: bytes) -> None:
        """Put `data` at `path` whole or not at all: a PUT on an object store; a temp name renamed on a folder."""
        self._count()
        fs = self.fs
        parent = path.rsplit("/", 1)[0]
        if _is_local(fs):
            fs.makedirs(parent, exist_ok=True)
            temp = f"{parent}/.{path.rsplit('/', 1)[1]}.{secrets.token_hex(6)}.part"
            fs.pipe_file(temp, data)
            fs.mv(temp, path)
        else:
            fs.pipe_file(path, data)
        with self._lock:
            self.stats.uploaded_bytes += len(data)

    def _count(self) -> None:
        with self._lock:
            self.stats.requests += 1

    def note(self, text: str) -> None:
        """Say `text` once per process (a corrupt object, an unreachable bucket), with no credential in it."""
        with self._lock:
            if text in self._noted:
                return
            self._noted.add(text)
            self.stats.notes.append(text)

    def _unreachable(self, exc: BaseException, then: str = "running without it") -> None:
        """Stop asking the remote, and say so once per process: concurrent requests fail at once, each with
        its own error (a refused connection, a closed one), and one line is what a user needs."""
        with self._lock:
            first, self._said_down = not self._said_down, True
            self._down = True
        if first:
            self.note(f"remote {self.shown} unreachable ({type(exc).__name__}); {then}")

    # --- read-through ------------------------------------------------------------------------------------------

    def fetch(self, key: str, store: Store, *, schema: str) -> bool:
        """Copy the record of `key` and every object it names from the remote into `store`; whether it did.
        A record naming an object the remote lacks or holds corrupt is a miss (and is said once)."""
        if key in self._absent or self._down:
            return False
        try:
            return self._fetch(key, store, schema=schema)
        except RemoteUnavailable as exc:
            self.note(str(exc))
        except Exception as exc:  # the network, permissions, a throttled bucket: a miss, never a crash
            self._unreachable(exc)
        self._down = True
        return False

    def _fetch(self, key: str, store: Store, *, schema: str) -> bool:
        data = self._cat(self.action_path(key))
        if data is None:
            self._absent.add(key)
            return False
        try:
            record = orjson.loads(data)
            validate_record(schema, record, what=f"remote action {key}")
            if not isinstance(record, dict) or record.get("key") != key:
                raise RecordError("key mismatch")
        except (orjson.JSONDecodeError, RecordError):
            self.note(f"remote {self.shown}: the entry of {key[:19]}… is corrupt; not used (its trial runs again)")
            self._absent.add(key)
            return False
        if not self._pull(named_objects(record), store, key=key):
            return False
        tree = _tree_files(record, store)
        if tree is None or not self._pull(tree, store, key=key):
            return False
        self._pull(_other_digests(record), store, key=key, required=False)  # key parts, for `explain`
        store.put_action(record, schema=schema, push=False)
        with self._lock:
            self.stats.fetched_records += 1
        return True

    def _pull(self, digests: Iterable[str], store: Store, *, key: str, required: bool = True) -> bool:
        wanted = sorted({d for d in digests if not store.has(d)})

        def one(digest: str) -> str | None:
            data = self._cat(self.object_path(digest))
            if data is None:
                return "missing"
            if digest_bytes(data) != digest:
                with self._lock:
                    self._corrupt.add(digest)
                return "corrupt"
            store.put(data)
            return None

        problems = [(d, p) for d, p in zip(wanted, self.parallel(one, wanted), strict=True) if p is not None]
        if problems and required:
            digest, problem = problems[0]
            self.note(f"remote {self.shown}: object {digest[:19]}… named by {key[:19]}… is {problem}; "
                      "not used (its trial runs again)")
            self._absent.add(key)
        return not problems

    def prefetch(self, keys: list[str], store: Store, *, schema: str) -> list[str]:
        """Fetch the records of `keys` (and their objects) in one batch; the keys fetched. Past a few keys, one
        listing of the remote's entries says which it holds (one request per 1,000 entries, not one per key);
        the keys it lacks are not asked for again by this process."""
        if self._down or not keys:
            return []
        try:
            hits = keys
            if len(keys) > FEW:
                listed = self._listing()
                hits = [k for k in keys if hex_of(k) in listed]
                with self._lock:
                    self._absent.update(k for k in keys if hex_of(k) not in listed)
            got = self.parallel(lambda k: self.fetch(k, store, schema=schema), hits)
        except RemoteUnavailable as exc:
            self.note(str(exc))
        except Exception as exc:
            self._unreachable(exc)
        else:
            return [k for k, ok in zip(hits, got, strict=True) if ok]
        self._down = True
        return []

    def _listing(self) -> frozenset[str]:
        """The hexes of every action entry in the remote, listed once per process."""
        if self._listed is None:
            folder = f"{self._base()}/actions"
            self._count()
            try:
                paths = self.fs.find(folder)
            except FileNotFoundError:
                paths = []
            self.fs.invalidate_cache()  # a listing fills fsspec's cache; later looks must ask the remote
            names = (str(p).rsplit("/", 1)[-1] for p in paths)
            self._listed = frozenset(n[:-5] for n in names if n.endswith(".json") and not n.startswith("."))
        return self._listed

    # --- leases (lease.py): one execution of a key at a time across clones -----------------------------------

    @contextlib.contextmanager
    def lease(self, key: str) -> Iterator[None]:
        """Hold the remote lease of `key`, or wait for another holder's record of it (lease.py)."""
        if self._down:
            yield
            return
        with self._lock:
            if self._leases is None:
                self._leases = Leases(self)
            leases = self._leases
        with leases.hold(key):
            yield

    @property
    def waited(self) -> int:
        """Keys this process waited for and found made by another clone."""
        return self._leases.waited if self._leases is not None else 0

    def lease_folder(self) -> str:
        return f"{self._base()}/leases"

    def forget_absent(self, key: str) -> None:
        with self._lock:
            self._absent.discard(key)

    def send_objects(self, digests: Iterable[str], store: Store) -> list[str]:
        """Upload those of `digests` the remote lacks, from `store` (the files a cluster job reads: clusterjob.py);
        the digests that could not be sent (not in `store`, or the remote is down)."""
        wanted = sorted(set(digests))
        if self._down or not wanted:
            return wanted if self._down else []
        try:
            there = self.parallel(lambda d: self._exists(self.object_path(d)), wanted)

            def upload(digest: str) -> bool:
                data = store.get(digest)
                if data is None:
                    return False
                self._write(self.object_path(digest), data)
                return True

            missing = [d for d, ok in zip(wanted, there, strict=True) if not ok]
            sent = self.parallel(upload, missing)
        except Exception as exc:  # the network, permissions: said once; the job then fails to find its files
            self._unreachable(exc)
            return wanted
        return [d for d, ok in zip(missing, sent, strict=True) if not ok]

    def fetch_objects(self, digests: Iterable[str], store: Store) -> bool:
        """Copy those of `digests` `store` lacks from the remote, each verified by its hash; whether all came."""
        if self._down:
            return False
        try:
            return self._pull(digests, store, key="(cluster job files)", required=False)
        except Exception as exc:
            self._unreachable(exc)
            return False

    def has_entry(self, key: str) -> bool:
        """Whether the remote holds an entry for `key` now (never from a cached listing)."""
        path = self.action_path(key)
        self.fs.invalidate_cache(path)
        return self._exists(path)

    def generations(self, folder: str) -> list[int]:
        """The lease generations in `folder`, lowest first."""
        self._count()
        self.fs.invalidate_cache(folder)
        try:
            names = self.fs.ls(folder, detail=False)
        except FileNotFoundError:
            return []
        return sorted(int(n) for n in (str(p).rstrip("/").rsplit("/", 1)[-1] for p in names) if n.isdigit())

    def read(self, path: str) -> bytes | None:
        return self._cat(path)

    def create(self, path: str, data: bytes) -> bool:
        """Write `data` at `path` only if nothing is there (one winner among racing writers); whether it did."""
        self._count()
        fs = self.fs
        if _is_local(fs):
            fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            return True
        try:
            fs.pipe_file(path, data, mode="create")
        except FileExistsError:
            return False
        return True

    def overwrite(self, path: str, data: bytes) -> None:
        self._write(path, data)

    def remove(self, path: str) -> None:
        self._count()
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(path)

    # --- write-back --------------------------------------------------------------------------------------------

    def write_back(self, record: dict[str, Any], store: Store) -> None:
        """Send a record just written locally. Its key waits in the store's outbox/ until it is up, so a run killed
        mid-upload (or a remote that was down) sends it at the start of the next run with this remote."""
        marker = _outbox(store) / hex_of(record["key"])
        atomic.write_bytes(marker, b"", durable=False)
        if self.push([record], store):
            with contextlib.suppress(OSError):
                os.unlink(marker)

    def drain(self, store: Store) -> int:
        """Send what the outbox holds (once per process; one listdir when it is empty). Returns how many went up."""
        if self._drained:
            return 0
        self._drained = True
        folder = _outbox(store)
        try:
            names = [n for n in os.listdir(folder) if not n.startswith(".")]
        except OSError:
            return 0
        records = []
        for name in names:
            try:
                records.append(orjson.loads(store.action_path(f"sha256:{name}").read_bytes()))
            except (OSError, orjson.JSONDecodeError):
                with contextlib.suppress(OSError):  # no entry (set aside, or never written): nothing to send
                    os.unlink(folder / name)
        sent = self.push(records, store) if records else 0
        if sent == len(records):
            for record in records:
                with contextlib.suppress(OSError):
                    os.unlink(folder / hex_of(record["key"]))
        return sent

    def push(self, records: list[dict[str, Any]], store: Store, *, skip_present: bool = False) -> int:
        """Upload `records` and every object they name that the remote lacks — all objects first, then the
        entries (only those whose objects all went up; with `skip_present`, only those the remote lacks).
        Returns how many entries were uploaded."""
        if self._down:
            return 0
        try:
            return self._push(records, store, skip_present=skip_present)
        except RemoteUnavailable as exc:
            self.note(str(exc))
        except Exception as exc:  # the result stays local; `skillmake push` sends it later
            self._unreachable(exc, "results stay local (`skillmake push` sends them later)")
        self._down = True
        return 0

    def _push(self, records: list[dict[str, Any]], store: Store, *, skip_present: bool) -> int:
        if skip_present:
            keys = [r["key"] for r in records]
            present = self.parallel(lambda k: self._exists(self.action_path(k)), keys)
            records = [r for r, there in zip(records, present, strict=True) if not there]

        needed: dict[str, list[str]] = {}  # key → the objects it needs remote
        for record in records:
            tree = _tree_files(record, store) or []
            parts = [d for d in _other_digests(record) if store.has(d)]  # optional: sent when this store has them
            needed[record["key"]] = sorted({*named_objects(record), *tree, *parts})
        digests = sorted({d for ds in needed.values() for d in ds})
        there = dict(zip(digests, self.parallel(lambda d: self._exists(self.object_path(d)), digests), strict=True))
        with self._lock:
            there.update((d, False) for d in self._corrupt if d in there)  # replaced by this store's good copy

        def upload(digest: str) -> bool:
            data = store.get(digest)  # verified: a damaged local object never goes up
            if data is None:
                return False
            self._write(self.object_path(digest), data)
            return True

        missing = [d for d in digests if not there[d]]
        there.update(zip(missing, self.parallel(upload, missing), strict=True))
        with self._lock:
            self._corrupt.difference_update(d for d in missing if there[d])
        ready = [r for r in records if all(there[d] for d in needed[r["key"]])]
        self.parallel(lambda r: self._write(self.action_path(r["key"]), orjson.dumps(r, option=orjson.OPT_INDENT_2)),
                  ready)
        with self._lock:
            self.stats.pushed_records += len(ready)
        for record in records:
            self._absent.discard(record["key"])
        return len(ready)

    def parallel(self, fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
        if len(items) <= 1:
            return [fn(i) for i in items]
        from concurrent.futures import ThreadPoolExecutor  # ~6 ms: only when something moves

        with ThreadPoolExecutor(max_workers=min(self.workers, len(items)),
                                thread_name_prefix="skillmake-remote") as pool:
            return list(pool.map(fn, items))


class RemoteUnavailable(Exception):
    """The remote cannot be used at all (its library is not installed)."""


def _outbox(store: Store) -> Path:
    return store.root / "outbox"


def _is_local(fs: Any) -> bool:
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return protocol in ("file", "local")


def _tree_files(record: dict[str, Any], store: Store) -> list[str] | None:
    """The files of the record's kept workspace tree (the tree object itself must be local by now); None when the
    tree is named but unreadable."""
    tree_digest = record.get("workspace")
    if not (isinstance(tree_digest, str) and tree_digest.startswith("sha256:")):
        return []
    tree = store.get_json(tree_digest)
    if not isinstance(tree, dict):
        return None
    return [node["file"] for node in tree.values() if isinstance(node, dict) and isinstance(node.get("file"), str)]


def _other_digests(record: dict[str, Any]) -> list[str]:
    """The key parts a record names (inputs: the run fragment, the agent config, …) that are objects here."""
    inputs = record.get("inputs")
    if not isinstance(inputs, dict):
        return []
    return [v for v in inputs.values() if isinstance(v, str) and v.startswith("sha256:") and len(v) == 71]


_remotes: dict[str, Remote] = {}
_remotes_lock = threading.Lock()


def remote_of(store: Store) -> Remote | None:
    """The store's remote as the whole Remote (push, prefetch, send and fetch objects). The store itself knows it
    only by what it asks of it (objects.Remote), so that module never imports this one."""
    remote = store.remote
    return remote if isinstance(remote, Remote) else None


def open_remote(config_remote: str | None) -> Remote | None:
    """The remote of this run (one per URL per process), or None when there is none or the run is offline."""
    url = configured(config_remote)
    if url is None:
        return None
    with _remotes_lock:
        if url not in _remotes:
            _remotes[url] = Remote(url)
        return _remotes[url]


def active() -> list[Remote]:
    """Every remote this process has opened (the reporter prints their stats and notes)."""
    with _remotes_lock:
        return list(_remotes.values())
