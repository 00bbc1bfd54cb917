"""`skillmake view`'s server and feedback: loopback only, a CSP on every answer, feedback saved in skill-creator's
shape (and validated), bad requests refused with a message; feedback.schema.json against good and bad files."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft7Validator

from skillmake.view import data, feedback
from skillmake.view.server import ViewServer
from tests.browser.synthetic import build

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ViewServer]:
    built = build(tmp_path / "p", cases=2, trials=2)
    srv = ViewServer(data.Source(state_dir=built.state, store=built.store, specs=built.specs))
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join()


def request(srv: ViewServer, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    out = resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    conn.close()
    return out


def post(srv: ViewServer, payload: Any, *, token: str | None = None, kind: str = "application/json",
         raw: bytes | None = None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": kind, "X-Skillmake-Token": srv.token if token is None else token}
    status, _, body = request(srv, "POST", "/api/feedback", raw if raw is not None else orjson.dumps(payload), headers)
    return status, (orjson.loads(body) if body else {})


def test_binds_loopback_only_and_sends_a_csp(server: ViewServer) -> None:
    assert server.server_address[0] == "127.0.0.1"
    for path in ("/", "/specs/spec/index.html", "/specs/spec/cases/case-0000.html", "/specs/spec/compare.html",
                 "/assets/viewer.js", "/specs/spec/report.json", "/specs/spec/feedback.json"):
        status, headers, _ = request(server, "GET", path)
        assert status == 200, path
        csp = headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert headers["x-content-type-options"] == "nosniff"
    assert "frame-ancestors 'none'" in request(server, "GET", "/")[1]["content-security-policy"]


def test_foreign_hosts_and_origins_are_refused(server: ViewServer) -> None:
    assert request(server, "GET", "/", headers={"Host": "evil.example"})[0] == 403  # DNS rebinding
    status, _, _ = request(server, "POST", "/api/feedback", b"{}", {
        "Content-Type": "application/json", "Origin": "http://evil.example", "X-Skillmake-Token": server.token})
    assert status == 403


def test_artifacts_are_served_inert(server: ViewServer) -> None:
    page = request(server, "GET", "/specs/spec/cases/case-0000.html")[2].decode()
    import re

    png = re.search(r'src="\.\./\.\./\.\./(files/[0-9a-f]{64}\.png)"', page)
    assert png is not None
    status, headers, body = request(server, "GET", "/" + png.group(1))
    assert status == 200 and headers["content-type"] == "image/png" and body.startswith(b"\x89PNG")
    assert "sandbox" in headers["content-security-policy"]
    any_hex = png.group(1)[6:70]
    status, headers, _ = request(server, "GET", f"/files/{any_hex}.bin")
    assert status == 200 and headers["content-disposition"] == "attachment"
    assert request(server, "GET", f"/files/{any_hex}.html")[0] == 404  # only fixed, harmless types
    assert request(server, "GET", "/files/../../etc/passwd")[0] == 404
    assert request(server, "GET", "/specs/..%2f..%2fx/index.html")[0] == 404


def test_feedback_is_saved_validated_and_shown_again(server: ViewServer) -> None:
    status, body = post(server, {"spec": "spec", "run_id": "eval-1-with_skill-run-2", "feedback": "missing the map"})
    assert status == 200 and body["ok"] is True
    path = server.source.reports_dir / "spec" / "feedback.json"
    saved = json.loads(path.read_text())
    assert saved["status"] == "in_progress"
    assert [(r["run_id"], r["feedback"]) for r in saved["reviews"]] == [("eval-1-with_skill-run-2", "missing the map")]
    assert saved["reviews"][0]["timestamp"].endswith("Z")
    page = request(server, "GET", "/specs/spec/cases/case-0001.html")[2].decode()
    assert "missing the map" in page
    assert post(server, {"spec": "spec", "status": "complete"})[0] == 200
    assert json.loads(path.read_text())["status"] == "complete"
    assert post(server, {"spec": "spec", "run_id": "eval-1-with_skill-run-2", "feedback": "  "})[0] == 200
    assert json.loads(path.read_text())["reviews"] == []  # an emptied note is removed


@pytest.mark.parametrize(("payload", "code", "says"), [
    ({"spec": "spec", "run_id": "eval-9-with_skill-run-1", "feedback": "x"}, 400, "not a trial of this spec"),
    ({"spec": "nope", "run_id": "eval-0-with_skill-run-1", "feedback": "x"}, 400, "no spec named"),
    ({"spec": "spec", "run_id": "eval-0-with_skill-run-1", "feedback": 3}, 400, "must be a string"),
    ({"spec": "spec", "status": "done"}, 400, "not in_progress or complete"),
    ({"spec": "spec", "run_id": "eval-0-with_skill-run-1", "feedback": "x", "extra": 1}, 400, "unknown field"),
    ({"spec": "spec"}, 400, "nothing to save"),
    ({"spec": "spec", "run_id": "eval-0-with_skill-run-1", "feedback": "x" * 20001}, 400, "more than 20,000"),
    ([1, 2], 400, "not a JSON object"),
])
def test_bad_feedback_is_refused_with_a_message(server: ViewServer, payload: Any, code: int, says: str) -> None:
    status, body = post(server, payload)
    assert status == code and says in body["error"]
    assert not (server.source.reports_dir / "spec" / "feedback.json").exists()


def test_token_content_type_and_size_are_checked(server: ViewServer) -> None:
    ok = {"spec": "spec", "run_id": "eval-0-with_skill-run-1", "feedback": "x"}
    assert post(server, ok, token="stale")[0] == 403
    assert post(server, ok, kind="text/plain")[0] == 415
    assert post(server, ok, raw=b"{not json")[0] == 400
    assert post(server, ok, raw=b" " * 300_000)[0] == 413


def test_a_form_post_saves_and_redirects_without_script(server: ViewServer) -> None:
    from urllib.parse import urlencode

    body = urlencode({"spec": "spec", "run_id": "eval-0-without_skill-run-2", "feedback": "plain form",
                      "token": server.token, "next": "/specs/spec/cases/case-0000.html"}).encode()
    status, headers, _ = request(server, "POST", "/api/feedback", body,
                                 {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 303 and headers["location"] == "/specs/spec/cases/case-0000.html"
    assert "plain form" in (server.source.reports_dir / "spec" / "feedback.json").read_text()


def test_a_broken_feedback_file_is_never_overwritten(server: ViewServer) -> None:
    path = server.source.reports_dir / "spec" / "feedback.json"
    path.write_text('{"reviews": "oops"}')
    status, body = post(server, {"spec": "spec", "run_id": "eval-0-with_skill-run-1", "feedback": "x"})
    assert status == 400 and "not a valid feedback.json" in body["error"]
    assert path.read_text() == '{"reviews": "oops"}'
    page = request(server, "GET", "/specs/spec/index.html")[2].decode()
    assert "feedback.json" in page and "oops" not in page


GOOD = [{"reviews": [], "status": "in_progress"},
        {"reviews": [{"run_id": "eval-0-with_skill", "feedback": "the chart is missing axis labels",
                      "timestamp": "2026-03-06T12:00:00Z"},
                     {"run_id": "eval-1-without_skill-run-2", "feedback": "", "timestamp": "t"}], "status": "complete"}]
BAD = [{"reviews": []}, {"reviews": [{"run_id": "x", "feedback": "y"}], "status": "complete"},
       {"reviews": [], "status": "done"}, {"reviews": [{"run_id": "../x", "feedback": "", "timestamp": "t"}],
                                           "status": "complete"},
       {"reviews": [], "status": "complete", "extra": 1}]


def test_feedback_schema_good_and_bad_examples() -> None:
    schema = json.loads((REPO / "schemas" / "feedback.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(schema)
    validator = Draft7Validator(schema)
    assert all(not list(validator.iter_errors(doc)) for doc in GOOD)
    assert all(list(validator.iter_errors(doc)) for doc in BAD)
    assert feedback.parse(GOOD[1], what="x").note("eval-0-with_skill") == "the chart is missing axis labels"
    assert feedback.parse(BAD[0], what="x").problem is not None


def test_run_ids_match_skill_creator() -> None:
    assert feedback.run_id(0, "with_skill", 0, trials=1) == "eval-0-with_skill"
    assert feedback.run_id(3, "without_skill", 1, trials=3) == "eval-3-without_skill-run-2"
