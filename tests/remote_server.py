"""A real S3-protocol server on 127.0.0.1 for the remote store's tests: moto's server mode, one process per
test module, started here and stopped by its PID. Nothing reaches AWS: the credentials are dummies and every
client is pointed at the loopback endpoint (AWS_ENDPOINT_URL)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    pid: int

    def env(self) -> dict[str, str]:
        """What a skillmake subprocess needs to reach this server, and nothing else."""
        return {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing-secret-never-logged",
                "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": self.endpoint,
                "AWS_EC2_METADATA_DISABLED": "true", "NO_PROXY": "127.0.0.1,localhost"}

    def make_bucket(self, name: str) -> str:
        """Create bucket `name` (a plain S3 PUT); its URL."""
        request = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        with _no_proxy().open(request, timeout=10) as response:
            assert response.status == 200
        return f"s3://{name}"


def _no_proxy() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def s3_server() -> Iterator[S3Server]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env=dict(os.environ, MOTO_ALLOW_NONEXISTENT_REGION="true"))
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto's server did not start on port {port}") from None
                time.sleep(0.1)
        yield S3Server(endpoint=endpoint, pid=proc.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module", name="s3")
def s3_fixture() -> Iterator[S3Server]:
    with s3_server() as server:
        yield server


@contextlib.contextmanager
def slow_proxy(endpoint: str, *, delay: float, seen: list[int] | None = None) -> Iterator[str]:
    """A loopback TCP proxy to `endpoint` that holds every chunk a client sends for `delay` seconds: uploads take
    long enough for a test to kill a run in the middle of them. Appends each chunk's size to `seen` (a count of
    what reached the remote). Yields the proxy's endpoint."""
    import threading

    host, port = endpoint.removeprefix("http://").split(":")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    listener.settimeout(0.2)
    stop = threading.Event()
    sockets: list[socket.socket] = []
    clients: set[socket.socket] = set()
    pumps: list[threading.Thread] = []

    def pump(src: socket.socket, dst: socket.socket, wait: float) -> None:
        with contextlib.suppress(OSError):
            while chunk := src.recv(65536):
                if seen is not None and src in clients:
                    seen.append(len(chunk))
                if wait:
                    time.sleep(wait)
                dst.sendall(chunk)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def serve() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                continue
            upstream = socket.create_connection((host, int(port)))
            sockets.extend((client, upstream))
            clients.add(client)
            for args in ((client, upstream, delay), (upstream, client, 0.0)):
                pumps.append(threading.Thread(target=pump, args=args, daemon=True))
                pumps[-1].start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        listener.close()
        for s in sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        for t in pumps:
            t.join(timeout=5)
        for s in sockets:
            s.close()
