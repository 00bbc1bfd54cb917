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
import ipaddress
import os
import re
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
    """No answer: the connection could not be made, was dropped, or timed out (`timed_out`). `settled`: asking again
    cannot help (a certificate not trusted, a proxy that refused the tunnel, a CA file that cannot be read); the
    message then ends with the fix."""

    def __init__(self, message: str, *, timed_out: bool = False, settled: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        self.settled = settled


# Idle kept-alive connections, by (pid, scheme, host, port, proxy), shared by the threads of the process: a thread
# takes one (or opens one), and puts it back when its reply has been read. Bounded, and closed at exit.
_idle: collections.OrderedDict[tuple[str, ...], list[http.client.HTTPConnection]] = collections.OrderedDict()
_idle_lock = threading.Lock()
MAX_IDLE_PER_KEY = 16
MAX_KEYS = 8  # a run talks to one or two endpoints; a test session to many short-lived fakes
_context: ssl.SSLContext | None = None
_context_for: dict[str, str | None] = {}  # the _roots() it was made for
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
    proxy = _proxy(parts)
    via = f" (through the proxy {_shown(proxy.url)} of ${proxy.variable})" if proxy else ""
    for fresh in (False, True):
        conn, target, key, reused = _take(parts, proxy, timeout, fresh=fresh)
        try:
            conn.request("POST", target, body=data, headers=sent)
            reply = conn.getresponse()
            payload = reply.read()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as err:
            conn.close()
            if reused and not fresh:
                continue  # the server closed an idle kept-alive connection: once more on a new one
            raise WireError(f"the connection was dropped ({type(err).__name__}: {err}){via}") from err
        except TimeoutError as err:  # socket.timeout
            conn.close()
            raise WireError(f"no answer within {timeout:g}s{via}", timed_out=True) from err
        except ssl.SSLCertVerificationError as err:
            conn.close()
            raise WireError(_untrusted(parts, err, via), settled=True) from err
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            if proxy is not None and str(err).startswith("Tunnel connection failed"):  # http.client's CONNECT
                raise WireError(_refused(parts, proxy, str(err)), settled=True) from err
            raise WireError(f"{type(err).__name__}: {err}{via}") from err
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


def _take(parts: urllib.parse.SplitResult, proxy: Proxy | None, timeout: float, *,
          fresh: bool) -> tuple[http.client.HTTPConnection, str, tuple[str, ...], bool]:
    """(connection, request target, pool key, reused) for `parts`, through `proxy` if any."""
    key = _key(parts, proxy.url if proxy else None)
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
        conn = _through_proxy(proxy.url, parts.scheme, host, port, timeout)
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
    if scheme == "https":  # a CONNECT tunnel (asked in plain HTTP); TLS to the API inside it
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


@dataclass(frozen=True, slots=True)
class Proxy:
    url: str
    variable: str  # where it was named (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY), for messages


def _proxy(parts: urllib.parse.SplitResult) -> Proxy | None:
    """The proxy the environment names for this URL (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY; NO_PROXY), as urllib reads
    them (httpx reads the same variables through the same function; docs/judges.md says where the two differ); None
    for none. Raises WireError for a proxy this client cannot speak to (socks, or TLS to the proxy itself)."""
    proxies = urllib.request.getproxies()
    scheme = parts.scheme if proxies.get(parts.scheme) else "all"
    url = proxies.get(scheme)
    if not url:
        return None
    host = parts.hostname or ""
    if urllib.request.proxy_bypass(f"{host}:{parts.port}" if parts.port else host):
        return None
    if _in_network(host, proxies.get("no", "")):
        return None
    proxy = Proxy(url=url, variable=f"{scheme.upper()}_PROXY")
    kind = url.split("://", 1)[0].lower() if "://" in url else "http"
    if kind != "http":
        raise WireError(f"${proxy.variable} names a {kind}:// proxy ({_shown(url)}); the judges' client speaks to "
                        "http:// proxies only (a CONNECT tunnel for https): name an http:// proxy, or the API host "
                        "in NO_PROXY", settled=True)
    return proxy


def _in_network(host: str, no_proxy: str) -> bool:
    """Whether `host` is an IP address inside a network NO_PROXY names (`10.0.0.0/8`, `fd00::/8`): httpx2 bypasses
    those, urllib's proxy_bypass does not know them."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    for entry in no_proxy.split(","):
        if "/" in entry:
            try:
                if address in ipaddress.ip_network(entry.strip().strip("[]"), strict=False):
                    return True
            except ValueError:
                continue  # as httpx2, curl and Go do: an entry that cannot be parsed is ignored
    return False


def _shown(url: str) -> str:
    """A proxy's URL without its credentials."""
    p = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    return f"{p.scheme}://{p.hostname}" + (f":{p.port}" if p.port else "")


def _untrusted(parts: urllib.parse.SplitResult, err: ssl.SSLCertVerificationError, via: str) -> str:
    where = f"{parts.hostname}:{parts.port or 443}"
    reason = err.verify_message or err.reason or str(err)
    trusted = ", ".join(f"{name}={value}" for name, value in _roots().items() if value) or "Python's default CAs"
    return (f"the TLS certificate of {where} is not trusted ({reason}; checked against {trusted}){via}; set "
            "SSL_CERT_FILE to the CA bundle that signed it (a TLS-inspecting proxy's own CA, for one)")


def _refused(parts: urllib.parse.SplitResult, proxy: Proxy, said: str) -> str:
    status = said.removeprefix("Tunnel connection failed:").strip()
    where = f"{parts.hostname}:{parts.port or 443}"
    fix = ("give the proxy's credentials in the URL (http://user:password@host:port)"
           if status.startswith("407") else "ask the proxy's administrator to allow it")
    return (f"the proxy {_shown(proxy.url)} of ${proxy.variable} refused a tunnel to {where} ({status or said}); "
            f"{fix}, or name {parts.hostname} in NO_PROXY to connect directly")


def _key(parts: urllib.parse.SplitResult, proxy: str | None) -> tuple[str, ...]:
    # The process id too: a worker forked while a connection was open must not share its socket with the parent.
    # And the CA settings: a connection verified against other roots is not one these settings would have made.
    roots = f"{os.environ.get('SSL_CERT_FILE', '')}|{os.environ.get('SSL_CERT_DIR', '')}" \
        if parts.scheme == "https" else ""
    return (str(os.getpid()), parts.scheme, parts.hostname or "", str(parts.port or ""), proxy or "", roots)


def _roots() -> dict[str, str | None]:
    """Where the trusted CAs come from, in the order the SDKs' httpx2 looks: $SSL_CERT_FILE, else $SSL_CERT_DIR, else
    the system's bundle (OpenSSL's compiled-in file, or folder of hashed certificates) — where an administrator
    installs a company CA — else certifi's bundle when installed, else Python's default (all None)."""
    found: dict[str, str | None] = {"SSL_CERT_FILE": os.environ.get("SSL_CERT_FILE") or None, "SSL_CERT_DIR": None,
                                    "the system's bundle": None, "the system's folder": None, "certifi": None}
    if found["SSL_CERT_FILE"]:
        return found
    found["SSL_CERT_DIR"] = os.environ.get("SSL_CERT_DIR") or None
    if found["SSL_CERT_DIR"]:
        return found
    paths = ssl.get_default_verify_paths()
    if paths.openssl_cafile and os.path.isfile(paths.openssl_cafile):
        found["the system's bundle"] = paths.openssl_cafile
    elif paths.openssl_capath and os.path.isdir(paths.openssl_capath) and any(
            re.fullmatch(r"[0-9a-fA-F]{8}\.\d+", name) for name in os.listdir(paths.openssl_capath)):
        found["the system's folder"] = paths.openssl_capath
    else:
        try:
            import certifi

            found["certifi"] = certifi.where()
        except ImportError:
            pass
    return found


def _ssl_context() -> ssl.SSLContext:
    """The verifying TLS context, made once per process for the CA settings of the environment (made again when
    SSL_CERT_FILE or SSL_CERT_DIR changes). Raises WireError when the named file or folder cannot be read."""
    global _context, _context_for
    roots = _roots()
    with _context_lock:
        if _context is None or _context_for != roots:
            cafile = roots["SSL_CERT_FILE"] or roots["the system's bundle"] or roots["certifi"]
            capath = roots["SSL_CERT_DIR"] or roots["the system's folder"]
            try:
                made = ssl.create_default_context(cafile=cafile, capath=capath)
            except (OSError, ssl.SSLError) as err:
                name = next((n for n, value in roots.items() if value), "the default")
                fix = f"point {name} at a PEM bundle, or unset it" if name.startswith("SSL_") else \
                    "set SSL_CERT_FILE to a PEM bundle"
                raise WireError(f"cannot read the CA certificates of {name}={roots.get(name)} ({err}); {fix}",
                                settled=True) from err
            _context, _context_for = made, roots
        return _context


__all__ = ["Response", "WireError", "close_all", "post_json", "read_json"]
