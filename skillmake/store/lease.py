"""Leases in the remote store: one execution of a key at a time across every clone and machine sharing the remote.

The local key lock (objects.Store.key_lock) serialises the threads and runs of one machine; a lease does the same
across machines. A lease of `key` is a small file `leases/<key hex>/<generation>` in the remote, made with a
create-if-absent write (S3's `If-None-Match: *` PUT through s3fs; O_EXCL on a shared folder), so of two clones
that want the same key, exactly one makes it and runs the trial. The other waits until the record appears in the
remote (then it is fetched and reused: 0 calls) or the lease is released without one (an error or a timeout is
never cached: the waiter runs it itself).

A holder that crashed leaves its lease behind. Its holder rewrites the file every ttl/4 seconds (a heartbeat);
a waiter that sees the same bytes for `ttl` seconds of its own clock (never a comparison of two machines' clocks),
or whose holder was a process of this machine that is gone (a run killed here), takes the lease over by creating
the next generation — again create-if-absent, so of several waiters one wins.
The dead generations stay until that holder lets go, so a newcomer (whose first try is generation 0) waits too.

On a remote whose file system has no create-if-absent (fsspec's generic fallback checks, then writes) two clones
may both run a key in a narrow race: the cost is a duplicate trial, never a wrong result.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from typing import Protocol

import orjson

from skillmake.core.canonical import hex_of

TTL_VAR = "SKILLMAKE_LEASE_TTL"  # seconds a silent lease is trusted (tests and slow links); default below
DEFAULT_TTL = 60.0


def ttl() -> float:
    try:
        value = float(os.environ.get(TTL_VAR) or DEFAULT_TTL)
    except ValueError:
        return DEFAULT_TTL
    return value if value > 0 else DEFAULT_TTL


class Remote(Protocol):
    """What a lease needs of the remote (store/remote.py's Remote, which holds the leases): a few file
    operations under its lease folder, whether a key's record is there, and a way to say a problem once."""

    shown: str

    def note(self, text: str) -> None: ...

    def forget_absent(self, key: str) -> None: ...

    def lease_folder(self) -> str: ...

    def has_entry(self, key: str) -> bool: ...

    def generations(self, folder: str) -> list[int]: ...

    def read(self, path: str) -> bytes | None: ...

    def create(self, path: str, data: bytes) -> bool: ...

    def overwrite(self, path: str, data: bytes) -> None: ...

    def remove(self, path: str) -> None: ...


class Leases:
    """The leases one process holds in one remote, and the heartbeat that keeps them alive."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self.holder = f"{socket.gethostname()}:{os.getpid()}"
        self._held: dict[str, int] = {}  # lease path → beats written
        self._lock = threading.Lock()  # a beat and a release of one lease never interleave
        self._beating = False
        self.waited = 0  # keys this process waited for and then found made by another holder (tests, the bench)

    # --- holding ---------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def hold(self, key: str) -> Iterator[None]:
        """Hold the lease of `key`, or wait until another holder's record of it is in the remote. Either way,
        the caller then asks the store again: it finds that record (fetched from the remote), or runs the key.
        A remote that fails here costs the guarantee for this key, never the run (noted once)."""
        path = None
        try:
            path = self._acquire(key)
        except Exception as exc:  # the network, permissions: run without a lease rather than not at all
            self.remote.note(f"remote {self.remote.shown}: no lease ({type(exc).__name__}); a trial another "
                             "clone runs at the same time may run here too")
        self.remote.forget_absent(key)  # the record may be there now: the caller's next look asks the remote
        try:
            yield
        finally:
            if path is not None:
                self._release(path)

    def _acquire(self, key: str) -> str | None:
        """The path of the lease made, or None: the key's record is in the remote (another holder made it)."""
        remote = self.remote
        folder = f"{remote.lease_folder()}/{hex_of(key)}"
        first = f"{folder}/{0:010d}"
        if remote.create(first, self._content(0)):  # the common case, one request: nobody holds the key
            return self._holding(first)
        limit = ttl()
        poll = min(1.0, limit / 8)
        seen: dict[str, tuple[bytes, float]] = {}  # lease path → (its bytes, when this process first saw them)
        while True:
            if remote.has_entry(key):
                with self._lock:
                    self.waited += 1
                return None
            generations = remote.generations(folder)
            if generations:
                top = f"{folder}/{generations[-1]:010d}"
                data = remote.read(top)
                if data is None:  # released just now: look again
                    continue
                now = time.monotonic()
                saw = seen.get(top)
                if saw is None or saw[0] != data:
                    seen[top] = saw = (data, now)
                if now - saw[1] < limit and not self._dead_here(data):  # alive, or not silent for long enough yet
                    time.sleep(poll)
                    continue
            # Free, or its holder silent for `ttl`: the next generation. The dead ones stay until this holder lets
            # go (so a newcomer's first create fails and it waits), then go with it.
            path = f"{folder}/{generations[-1] + 1 if generations else 0:010d}"
            if remote.create(path, self._content(0)):
                return self._holding(path)

    def _dead_here(self, data: bytes) -> bool:
        """Whether the lease's holder was a process of this machine that is gone (a run killed here): taken over
        at once, without waiting out its ttl. Another machine's holder is judged by its silence only."""
        try:
            host, _, pid = str(orjson.loads(data)["holder"]).rpartition(":")
            number = int(pid)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return False
        if host != self.holder.rpartition(":")[0] or number == os.getpid() or number <= 0:
            return False
        try:
            os.kill(number, 0)
        except ProcessLookupError:
            return True
        except OSError:  # alive, someone else's
            return False
        return False

    def _holding(self, path: str) -> str:
        with self._lock:
            self._held[path] = 0
        self._start_beating()
        return path

    def _content(self, beat: int) -> bytes:
        return orjson.dumps({"holder": self.holder, "beat": beat, "token": secrets.token_hex(4)})

    def _release(self, path: str) -> None:
        """Let go: the dead generations below this one first, this one last (a newcomer meanwhile waits a poll)."""
        folder, number = path.rsplit("/", 1)
        with self._lock:
            self._held.pop(path, None)
            with contextlib.suppress(Exception):  # a lease left behind expires: a waiter takes it over
                for dead in range(int(number)):
                    self.remote.remove(f"{folder}/{dead:010d}")
                self.remote.remove(path)

    # --- the heartbeat ---------------------------------------------------------------------------------------

    def _start_beating(self) -> None:
        with self._lock:
            if self._beating:
                return
            self._beating = True
        threading.Thread(target=self._beat, name="skillmake-lease", daemon=True).start()

    def _beat(self) -> None:
        while True:
            time.sleep(ttl() / 4)
            with self._lock:
                for path, beats in list(self._held.items()):
                    self._held[path] = beats + 1
                    with contextlib.suppress(Exception):  # a missed beat: the next one may land
                        self.remote.overwrite(path, self._content(beats + 1))

