"""`skillmake view`'s HTTP server: the viewer's pages rendered on each request from the store, on 127.0.0.1 only,
with a Content-Security-Policy on every answer and feedback saved through a token-checked POST.

The standard library's ThreadingHTTPServer is enough for one reviewer on loopback, so the viewer adds no
dependency: pages are built per request (a reload shows the latest run) and nothing is cached."""

from __future__ import annotations

import hmac
import http.server
import re
import secrets
import sys
import threading
import traceback
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

from skillmake.core.paths import unsafe_name
from skillmake.view import data, feedback
from skillmake.view.artifacts import CONTENT_TYPES
from skillmake.view.html import SERVED_CSP, asset
from skillmake.view.pages import Pages

HOST = "127.0.0.1"
MAX_BODY = 256 * 1024
_SPEC = r"(?P<spec>[A-Za-z0-9][A-Za-z0-9_.-]*)"
_ROUTES = (
    ("index", re.compile(r"/(?:index\.html)?")),
    ("favicon", re.compile(r"/favicon\.ico")),
    ("asset", re.compile(r"/assets/(?P<name>viewer\.(?:css|js))")),
    ("spec", re.compile(rf"/specs/{_SPEC}/(?:index\.html)?")),
    ("case", re.compile(rf"/specs/{_SPEC}/cases/(?P<case>[A-Za-z0-9][A-Za-z0-9_.-]*)\.html")),
    ("compare", re.compile(rf"/specs/{_SPEC}/compare\.html")),
    ("report", re.compile(rf"/specs/{_SPEC}/report\.json")),
    ("feedback", re.compile(rf"/specs/{_SPEC}/feedback\.json")),
    ("file", re.compile(r"/files/(?P<hex>[0-9a-f]{64})\.(?P<ext>[a-z]{2,4})")),
    ("record", re.compile(r"/records/(?P<hex>[0-9a-f]{64})\.json")),
)
_ASSET_TYPES = {"css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8"}
_FILE_CSP = "default-src 'none'; img-src 'self'; sandbox"


class ViewServer(http.server.ThreadingHTTPServer):
    """Serves one store's pages on 127.0.0.1 (port 0: a free one)."""

    daemon_threads = True

    def __init__(self, source: data.Source, *, port: int = 0, root: str = "") -> None:
        super().__init__((HOST, port), _Handler)
        self.source = source
        self.token = secrets.token_urlsafe(24)  # a page's script sends it back with each save
        self.pages = Pages(source, served=True, token=self.token, root=root)
        self.save_lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: ViewServer
    server_version = "skillmake-view"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one reviewer on loopback: a line per request would drown the URL the command printed

    # ---- answers -------------------------------------------------------------------------------------------

    def _send(self, code: int, body: bytes, content_type: str, *, csp: str = SERVED_CSP,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", csp)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, code: int, value: Any) -> None:
        self._send(code, orjson.dumps(value), "application/json")

    def _error(self, code: int, message: str) -> None:
        self._json(code, {"error": message})

    def _html(self, text: str) -> None:
        self._send(200, text.encode(), "text/html; charset=utf-8")

    def _local(self) -> bool:
        """Only this server's own pages may use it: the Host a browser sends must be this loopback address (no DNS
        rebinding), and a cross-origin request is refused."""
        port = self.server.port
        hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        if self.headers.get("Host", "") not in hosts:
            return False
        origin = self.headers.get("Origin")
        return origin is None or origin in {f"http://{h}" for h in hosts}

    # ---- GET -----------------------------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._local():
            self._error(403, "this viewer answers only its own pages on 127.0.0.1")
            return
        url = urlsplit(self.path)
        try:
            for name, pattern in _ROUTES:
                match = pattern.fullmatch(url.path)
                if match:
                    getattr(self, f"_get_{name}")(match.groupdict(), parse_qs(url.query))
                    return
            self._error(404, f"no page at {url.path[:200]}")
        except Exception as exc:  # a page that cannot render must say so, not hang up
            traceback.print_exc(file=sys.stderr)
            self._error(500, f"internal error while rendering {url.path[:200]}: {type(exc).__name__}: {exc}")

    def _get_index(self, _: dict[str, str], __: Any) -> None:
        self._html(self.server.pages.index().html)

    def _get_favicon(self, _: dict[str, str], __: Any) -> None:
        self._send(204, b"", "image/x-icon")

    def _get_asset(self, m: dict[str, str], _: Any) -> None:
        name = m["name"]
        self._send(200, asset(name), _ASSET_TYPES[name.rsplit(".", 1)[1]])

    def _known(self, spec: str) -> bool:
        return unsafe_name(spec) is None and spec in self.server.pages.names()

    def _get_spec(self, m: dict[str, str], _: Any) -> None:
        page = self.server.pages.spec(m["spec"]) if self._known(m["spec"]) else None
        self._html(page.html) if page else self._error(404, f"no spec named {m['spec']!r} has a report")

    def _get_case(self, m: dict[str, str], _: Any) -> None:
        page = self.server.pages.case(m["spec"], m["case"]) if self._known(m["spec"]) else None
        self._html(page.html) if page else self._error(404, f"no case {m['case']!r} in spec {m['spec']!r}")

    def _get_compare(self, m: dict[str, str], query: dict[str, list[str]]) -> None:
        a, b = (_hex_arg(query, "a"), _hex_arg(query, "b"))
        page = self.server.pages.compare(m["spec"], a, b) if self._known(m["spec"]) else None
        self._html(page.html) if page else self._error(404, f"no spec named {m['spec']!r} has a report")

    def _get_report(self, m: dict[str, str], _: Any) -> None:
        report = self.server.pages.report(m["spec"]) if self._known(m["spec"]) else None
        if report is None:
            self._error(404, f"no spec named {m['spec']!r} has a report")
        else:
            self._send(200, orjson.dumps(report, option=orjson.OPT_INDENT_2), "application/json")

    def _get_feedback(self, m: dict[str, str], _: Any) -> None:
        if not self._known(m["spec"]):
            self._error(404, f"no spec named {m['spec']!r} has a report")
            return
        doc = data.feedback_of(self.server.source, m["spec"]).document()
        self._send(200, orjson.dumps(doc, option=orjson.OPT_INDENT_2), "application/json",
                   headers={"Content-Disposition": 'inline; filename="feedback.json"'})

    def _get_file(self, m: dict[str, str], _: Any) -> None:
        ext = m["ext"]
        blob = data.blob(self.server.source, f"sha256:{m['hex']}") if ext in CONTENT_TYPES else None
        if blob is None:
            self._error(404, "no such artifact in the store")
            return
        # An artifact is the agent's: served inert (sandboxed, never sniffed), and anything but an image or text
        # only as a download, so an HTML or SVG file an agent wrote never runs here.
        headers = {} if ext != "bin" else {"Content-Disposition": "attachment"}
        self._send(200, blob, CONTENT_TYPES[ext], csp=_FILE_CSP, headers=headers)

    def _get_record(self, m: dict[str, str], _: Any) -> None:
        raw = data.record_bytes(self.server.source, f"sha256:{m['hex']}")
        if raw is None:
            self._error(404, "no record with that key in the store")
        else:
            self._send(200, raw, "application/json", csp=_FILE_CSP)

    # ---- POST ----------------------------------------------------------------------------------------------

    def do_POST(self) -> None:
        if not self._local():
            self._error(403, "this viewer answers only its own pages on 127.0.0.1")
            return
        if urlsplit(self.path).path != "/api/feedback":
            self._error(404, "the only thing to post here is /api/feedback")
            return
        kind = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind not in ("application/json", "application/x-www-form-urlencoded"):
            self._error(415, "send feedback as application/json (or a form from the viewer's own page)")
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._error(411, "a Content-Length is needed")
            return
        if length > MAX_BODY or length < 0:
            self._error(413, f"a feedback request is at most {MAX_BODY:,} bytes")
            return
        raw = self.rfile.read(length)
        form = kind != "application/json"
        body = _form(raw) if form else _json_body(raw)
        if body is None:
            self._error(400, "the body is not a JSON object" if not form else "the form could not be read")
            return
        token = self.headers.get("X-Skillmake-Token") or str(body.pop("token", "") or "")
        if not hmac.compare_digest(token.encode(), self.server.token.encode()):
            self._error(403, "missing or stale token: reload the page (the viewer was restarted)")
            return
        nxt = str(body.pop("next", "") or "")
        try:
            when = self._save(body)
        except feedback.FeedbackError as exc:
            self._error(400, exc.render())
            return
        if form and re.fullmatch(r"/specs/[A-Za-z0-9_./-]+\.html", nxt) and ".." not in nxt:
            self._send(303, b"", "text/plain", headers={"Location": nxt})
        else:
            self._json(200, {"ok": True, "timestamp": when})

    def _save(self, body: dict[str, Any]) -> str:
        spec = body.get("spec")
        if not isinstance(spec, str) or not self._known(spec):
            raise feedback.FeedbackError(f"no spec named {str(spec)[:80]!r} has a report",
                                         hint='send {"spec": NAME, "run_id": ID, "feedback": TEXT}')
        source = self.server.source
        report = data.report_of(source, spec)
        known = frozenset(data.run_ids(source, report)) if report is not None else frozenset()
        rid, note, status = feedback.request(body, known)
        path = feedback.path_of(source.reports_dir, spec)
        when = feedback.now()
        with self.server.save_lock:
            current = feedback.read(path)
            if current.problem is not None:
                raise feedback.FeedbackError(f"{path} is not a valid feedback.json: {current.problem}",
                                             hint="fix or move the file, then save again")
            feedback.write(path, feedback.merged(current, rid=rid, note=note, status=status, when=when))
        return when


def _hex_arg(query: dict[str, list[str]], name: str) -> str | None:
    value = (query.get(name) or [""])[0].lower()
    return value if re.fullmatch(r"[0-9a-f]{6,64}", value) else None


def _json_body(raw: bytes) -> dict[str, Any] | None:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return dict(value) if isinstance(value, dict) else None


def _form(raw: bytes) -> dict[str, Any] | None:
    try:
        fields = parse_qs(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        return None
    return {k: v[0] for k, v in fields.items()}
