"""TLS for the loopback fake: a throwaway CA and a server certificate for 127.0.0.1 made with the `openssl` CLI, and a
small CONNECT proxy that counts the tunnels it opens (and can refuse them, as a proxy wanting credentials does).

    certs = Certificates.make(tmp_path)          # certs.ca (PEM to trust), certs.server_context()
    with FakeAPI(tls=certs.server_context()) as api, ConnectProxy() as proxy:
        env HTTPS_PROXY=proxy.url, SSL_CERT_FILE=certs.ca; api.url is https://127.0.0.1:<port>
        proxy.tunnels                            # [("127.0.0.1", port), …] one per CONNECT it accepted
"""

from __future__ import annotations

import select
import socket
import ssl
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from socketserver import StreamRequestHandler, ThreadingTCPServer
from typing import Any

_EXT = "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n" \
       "extendedKeyUsage=serverAuth\n"


@dataclass(frozen=True, slots=True)
class Certificates:
    ca: Path  # the CA certificate (what SSL_CERT_FILE names to trust the server)
    cert: Path  # the server's certificate, for 127.0.0.1 and localhost, signed by the CA
    key: Path

    @classmethod
    def make(cls, folder: Path, *, name: str = "fakeapi") -> Certificates:
        """A new CA and server certificate in `folder` (EC keys: fast to make)."""
        folder.mkdir(parents=True, exist_ok=True)
        ca, ca_key = folder / f"{name}-ca.pem", folder / f"{name}-ca.key"
        cert, key, csr, ext = (folder / f"{name}.pem", folder / f"{name}.key", folder / f"{name}.csr",
                               folder / f"{name}.ext")
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        _openssl("req", "-x509", *ec, "-keyout", ca_key, "-out", ca, "-days", "2", "-subj", f"/CN={name} test CA",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        _openssl("req", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1")
        ext.write_text(_EXT)
        _openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
                 "-days", "2", "-extfile", ext)
        return cls(ca=ca, cert=cert, key=key)

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context


def _openssl(*args: Any) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True, timeout=30)


class ConnectProxy:
    """An HTTP proxy on 127.0.0.1 that speaks only CONNECT, to loopback targets; `refuse` (e.g. 407, 403) answers
    every CONNECT with that status instead. `tunnels` lists the (host, port) of each tunnel opened, `requests` the
    head of every request it got (its first line and headers)."""

    def __init__(self, *, refuse: int | None = None) -> None:
        self.refuse = refuse
        self.tunnels: list[tuple[str, int]] = []
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._server = _ProxyServer(("127.0.0.1", 0), _ProxyHandler)
        self._server.proxy = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fakeproxy", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        """Stop accepting, and end the tunnels still open (a client's kept-alive connection holds one)."""
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            open_now = list(self._open)
        for sock in open_now:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # its tunnel ended already
        self._thread.join(timeout=5)

    def __enter__(self) -> ConnectProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ProxyServer(ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False
    proxy: ConnectProxy


class _ProxyHandler(StreamRequestHandler):
    server: _ProxyServer

    def handle(self) -> None:
        proxy = self.server.proxy
        line = self.rfile.readline(65537).decode("latin-1").strip()
        headers: dict[str, str] = {}
        while (header := self.rfile.readline(65537).decode("latin-1").strip()):
            name, _, value = header.partition(":")
            headers[name.strip().lower()] = value.strip()
        with proxy._lock:
            proxy.requests.append((line, headers))
        method, _, rest = line.partition(" ")
        target = rest.rsplit(" ", 1)[0]
        host, _, port = target.rpartition(":")
        if method != "CONNECT" or host not in ("127.0.0.1", "localhost") or not port.isdigit():
            self._answer(405 if method != "CONNECT" else 403, "only CONNECT to 127.0.0.1")
            return
        if proxy.refuse is not None:
            self._answer(proxy.refuse, "refused by the test",
                         'Proxy-Authenticate: Basic realm="fakeproxy"\r\n' if proxy.refuse == 407 else "")
            return
        upstream = socket.create_connection((host, int(port)), timeout=10)
        with proxy._lock:
            proxy.tunnels.append((host, int(port)))
        self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        self.wfile.flush()
        with proxy._lock:
            proxy._open.add(self.connection)
        try:
            _relay(self.connection, upstream)
        finally:
            upstream.close()
            with proxy._lock:
                proxy._open.discard(self.connection)

    def _answer(self, status: int, reason: str, extra: str = "") -> None:
        self.wfile.write(f"HTTP/1.1 {status} {reason}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n"
                         .encode())
        self.wfile.flush()


def _relay(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes (the tunnel's life)."""
    peers = {a: b, b: a}
    while True:
        ready, _, _ = select.select(list(peers), [], [], 30)
        if not ready:
            return
        for sock in ready:
            try:
                data = sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            peers[sock].sendall(data)
