"""One JSON POST to a model API over the standard library: kept-alive connections per thread, the environment's
proxies, and no SDK.

A judge makes one request and reads one JSON reply; importing an SDK for that costs ~1.6 s of CPU per process
(anthropic 2.x, its types and httpx), which a run at -j 1 pays in its wall time. This is the whole of what the judges
need: the caller builds the headers (each provider's auth) and reads the status and body; retries, rate limits and
error messages stay with the caller (judges/retry.py, ratelimit.py).
"""

from __future__ import annotations

import atexit
import base64
import collections
import http.client
import os
import ssl
import threading
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    headers: Mapping[str, str]  # names in lower case
    body: bytes

    def get(self, name: str) -> str | None:
        return self.headers.get(name.lower())


class WireError(Exception):
    """No answer: the connection could not be made, was dropped, or timed out (`timed_out`)."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


# Idle kept-alive connections, by (pid, scheme, host, port, proxy), shared by the threads of the process: a thread
# takes one (or opens one), and puts it back when its reply has been read. Bounded, and closed at exit.
_idle: collections.OrderedDict[tuple[str, ...], list[http.client.HTTPConnection]] = collections.OrderedDict()
_idle_lock = threading.Lock()
MAX_IDLE_PER_KEY = 16
MAX_KEYS = 8  # a run talks to one or two endpoints; a test session to many short-lived fakes
_context: ssl.SSLContext | None = None
_context_lock = threading.Lock()


def post_json(url: str, body: Any, *, headers: Mapping[str, str], timeout: float) -> Response:
    """POST `body` as JSON to `url`; the status, headers and body of the reply, whatever the status. Raises WireError
    when there is no reply. A kept-alive connection the server has since closed is replaced once, transparently."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WireError(f"{url!r} is not an http(s) URL")
    data = orjson.dumps(body)
    sent = {"content-type": "application/json", "accept": "application/json", "content-length": str(len(data)),
            **{k.lower(): v for k, v in headers.items()}}
    for fresh in (False, True):
        conn, target, key, reused = _take(parts, timeout, fresh=fresh)
        try:
            conn.request("POST", target, body=data, headers=sent)
            reply = conn.getresponse()
            payload = reply.read()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as err:
            conn.close()
            if reused and not fresh:
                continue  # the server closed an idle kept-alive connection: once more on a new one
            raise WireError(f"the connection was dropped ({type(err).__name__}: {err})") from err
        except TimeoutError as err:  # socket.timeout
            conn.close()
            raise WireError(f"no answer within {timeout:g}s", timed_out=True) from err
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            raise WireError(f"{type(err).__name__}: {err}") from err
        if reply.will_close:
            conn.close()
        else:
            _give_back(key, conn)
        return Response(status=reply.status, headers={k.lower(): v for k, v in reply.getheaders()}, body=payload)
    raise AssertionError("unreachable")  # the second pass returns or raises


def read_json(response: Response) -> Any:
    """The body as JSON; raises ValueError when it is not."""
    return orjson.loads(response.body)


@atexit.register
def close_all() -> None:
    """Close the idle connections this process opened (at exit; a test's end)."""
    with _idle_lock:
        mine = [c for key, conns in _idle.items() if key[0] == str(os.getpid()) for c in conns]
        _idle.clear()
    for conn in mine:
        conn.close()


def _after_fork_in_child() -> None:
    """A forked worker opens connections of its own (the parent's sockets stay the parent's; a lock held by one of
    its threads at the fork would never be released here)."""
    global _idle_lock, _context_lock
    _idle_lock = threading.Lock()
    _context_lock = threading.Lock()
    inherited = [conn for conns in _idle.values() for conn in conns]
    _idle.clear()
    for conn in inherited:  # the child's copies of the descriptors: the parent's connections stay open
        conn.close()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _take(parts: urllib.parse.SplitResult, timeout: float, *,
          fresh: bool) -> tuple[http.client.HTTPConnection, str, tuple[str, ...], bool]:
    """(connection, request target, pool key, reused) for `parts`, through the environment's proxy for it, if any."""
    proxy = _proxy(parts)
    key = _key(parts, proxy)
    target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    if proxy is not None and parts.scheme == "http":
        target = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path or "/", parts.query, ""))
    conn = None
    if not fresh:
        with _idle_lock:
            conns = _idle.get(key)
            if conns:
                conn = conns.pop()
    if conn is not None:
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn, target, key, True
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname or ""
    if proxy is None:
        conn = (http.client.HTTPSConnection(host, port, timeout=timeout, context=_ssl_context())
                if parts.scheme == "https" else http.client.HTTPConnection(host, port, timeout=timeout))
    else:
        conn = _through_proxy(proxy, parts.scheme, host, port, timeout)
    return conn, target, key, False


def _give_back(key: tuple[str, ...], conn: http.client.HTTPConnection) -> None:
    closing: list[http.client.HTTPConnection] = []
    with _idle_lock:
        conns = _idle.setdefault(key, [])
        _idle.move_to_end(key)
        if len(conns) < MAX_IDLE_PER_KEY:
            conns.append(conn)
        else:
            closing.append(conn)
        while len(_idle) > MAX_KEYS:
            closing.extend(_idle.popitem(last=False)[1])
    for old in closing:
        old.close()


def _through_proxy(proxy: str, scheme: str, host: str, port: int, timeout: float) -> http.client.HTTPConnection:
    p = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    auth = {}
    if p.username:
        pair = f"{urllib.parse.unquote(p.username)}:{urllib.parse.unquote(p.password or '')}"
        auth = {"Proxy-Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
    proxy_port = p.port or (443 if p.scheme == "https" else 80)
    conn: http.client.HTTPConnection
    if scheme == "https":  # a CONNECT tunnel; TLS to the API inside it
        conn = http.client.HTTPSConnection(p.hostname or "", proxy_port, timeout=timeout, context=_ssl_context())
        conn.set_tunnel(host, port, headers=auth)
    else:
        conn = http.client.HTTPConnection(p.hostname or "", proxy_port, timeout=timeout)
        if auth:
            conn.putheader = _with_headers(conn.putheader, auth)  # type: ignore[method-assign]
    return conn


def _with_headers(putheader: Any, extra: Mapping[str, str]) -> Any:
    sent = False

    def put(header: str, *values: Any) -> None:
        nonlocal sent
        if not sent:
            sent = True
            for name, value in extra.items():
                putheader(name, value)
        putheader(header, *values)

    return put


def _proxy(parts: urllib.parse.SplitResult) -> str | None:
    """The proxy the environment names for this URL (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY; NO_PROXY), as httpx and
    urllib read them; None for none."""
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy:
        return None
    host = parts.hostname or ""
    if urllib.request.proxy_bypass(f"{host}:{parts.port}" if parts.port else host):
        return None
    return proxy


def _key(parts: urllib.parse.SplitResult, proxy: str | None) -> tuple[str, ...]:
    # The process id too: a worker forked while a connection was open must not share its socket with the parent.
    return (str(os.getpid()), parts.scheme, parts.hostname or "", str(parts.port or ""), proxy or "")


def _ssl_context() -> ssl.SSLContext:
    """The verifying TLS context, made once per process: $SSL_CERT_FILE, else certifi's bundle when installed (as the
    SDKs use), else the system's."""
    global _context
    with _context_lock:
        if _context is None:
            cafile = os.environ.get("SSL_CERT_FILE") or None
            if cafile is None:
                try:
                    import certifi

                    cafile = certifi.where()
                except ImportError:
                    cafile = None
            _context = ssl.create_default_context(cafile=cafile)
        return _context


__all__ = ["Response", "WireError", "close_all", "post_json", "read_json"]
