"""Pins from the mutation run (bench/mutation.py) over skillmake/run/checks/: verdicts on error paths, evidence text at
its clipping and listing limits, and urls_reachable at the 2xx boundaries against a loopback server."""

from __future__ import annotations

import http.server
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillmake.run import process
from skillmake.run.checks import CheckContext, run_check
from skillmake.spec.model import Check
from tests.loopback import serve


def mk(type_: str, *, file: str | None = None, **params: Any) -> Check:
    return Check(type=type_, index=0, file=file, params=params, raw={"type": type_, **params})


def run(check: Check, output: str = "", files: dict[str, bytes] | None = None, *,
        spec_folder: str = "/nonexistent") -> dict[str, Any]:
    return run_check(check, CheckContext(output=output, files=files or {}, workspace=None, spec_folder=spec_folder))


def test_an_unknown_check_type_is_a_bug_not_a_verdict() -> None:
    with pytest.raises(ValueError, match="no check function for type 'nope'"):
        run(mk("nope"), "x")


# --- evidence excerpts: clip (60), quote (80), listing (5), describe's quoting (58) ------------------------------

@pytest.mark.parametrize(("text", "shown"), [
    ("a" * 59, "a" * 59),
    ("a" * 60, "a" * 60),
    ("a" * 61, "a" * 59 + "…"),
    ("a" * 100, "a" * 59 + "…"),
], ids=["59", "60", "61", "100"])
def test_an_excerpt_of_the_text_is_clipped_past_60_chars(text: str, shown: str) -> None:
    miss = run(mk("contains", needle="zz"), text)
    assert (miss["passed"], miss["evidence"]) == (False, f"'zz' not found in output ({len(text)} chars): '{shown}'")


@pytest.mark.parametrize(("needle", "shown"), [
    ("n" * 80, "n" * 80),
    ("n" * 81, "n" * 79 + "…"),
], ids=["80", "81"])
def test_a_quoted_needle_is_clipped_past_80_chars(needle: str, shown: str) -> None:
    miss = run(mk("contains", needle=needle), "abc")
    assert miss["evidence"] == f"'{shown}' not found in output (3 chars): 'abc'"


@pytest.mark.parametrize(("needles", "evidence"), [
    (list("abcd"), "found 'a', 'b', 'c', 'd'"),
    (list("abcde"), "found 'a', 'b', 'c', 'd', 'e'"),
    (list("abcdef"), "found 'a', 'b', 'c', 'd', 'e', … (1 more)"),
    (list("abcdefgh"), "found 'a', 'b', 'c', 'd', 'e', … (3 more)"),
], ids=["4", "5", "6", "8"])
def test_a_listing_shows_five_items_then_how_many_more(needles: list[str], evidence: str) -> None:
    hit = run(mk("contains_any", needles=needles), "abcdefgh")
    assert (hit["passed"], hit["evidence"]) == (True, evidence)


@pytest.mark.parametrize(("check", "text"), [
    (mk("contains", needle="q" * 58), f"output contains '{'q' * 58}'"),
    (mk("contains", needle="q" * 59), f"output contains '{'q' * 57}…'"),
    (mk("contains_any", needles=["a", "b"]), "output contains any of 'a', 'b'"),
    (mk("csv_row_count", count=2), "output has exactly 2 CSV data rows"),
    (mk("csv_row_count", min=1, max=2), "output has at least 1 and at most 2 CSV data rows"),
    (mk("csv_row_count", max=2), "output has at most 2 CSV data rows"),
], ids=["needle-58", "needle-59", "any-of", "exactly", "between", "at-most"])
def test_the_description_a_user_reads_for_an_unnamed_check(check: Check, text: str) -> None:
    assert run(check, "x")["text"] == text


# --- where a found needle is shown ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("check", "output", "evidence"), [
    # case-sensitive: the lower-case occurrence before it is not the one found
    (mk("contains", needle="HELLO"), "hello HELLO", "found at char 6: 'hello HELLO'"),
    # 20 chars of context either side
    (mk("contains", needle="NEEDLE"), "a" * 30 + "NEEDLE" + "b" * 30,
     f"found at char 30: '{'a' * 20}NEEDLE{'b' * 20}'"),
    (mk("icontains", needle="hello"), "xx HELLO there", "found at char 3: 'xx HELLO there'"),
    (mk("not_contains", needle="Err"), "x" * 25 + "Err", f"'Err' found at char 25: '{'x' * 20}Err'"),
], ids=["contains-case", "context-20", "icontains", "not-contains"])
def test_where_a_found_needle_is_shown(check: Check, output: str, evidence: str) -> None:
    result = run(check, output)
    assert result["evidence"] == evidence
    assert result["passed"] is (check.type != "not_contains")


def test_equals_names_the_first_difference_when_one_side_is_a_prefix() -> None:
    for value, output, at in (("abcd", "abc", 3), ("ab", "abc", 2), ("abX", "abc", 2)):
        result = run(mk("equals", value=value), output)
        assert (result["passed"], result["evidence"]) == (
            False, f"expected '{value}', got '{output}' (first difference at char {at})")


# --- verdicts on success and error paths ---------------------------------------------------------------------------

CSV_ERROR = "CSV parse error: ',' expected after '\"'"


@pytest.mark.parametrize(("check", "output", "files", "passed", "evidence"), [
    (mk("is_json"), "[1, 2]", None, True, "output is a JSON array with 2 item(s)"),
    (mk("json_schema", schema={"type": "object"}), "nope", None, False,
     "output is not JSON: Expecting value at line 1 column 1: 'nope'"),
    (mk("file_exists", file="a.txt"), "", {"a.txt": b"abc"}, True, "file 'a.txt' was captured (3 chars)"),
    (mk("contains_any", needles=["b"]), "abc", None, True, "found 'b'"),
    (mk("csv_valid"), 'a,"b"c\n', None, False, f"output: {CSV_ERROR}"),
    (mk("csv_row_count", count=1), 'h\na,"b"c\n', None, False, f"output: {CSV_ERROR}"),
    (mk("csv_valid"), "", None, False, "output has no CSV rows"),
    (mk("csv_valid", header=["x"]), "a\n1\n", None, False, "header is ['a'], expected ['x']"),
    (mk("csv_valid", header=[" a"]), "a\n1\n", None, False, "header is ['a'], expected [' a']"),
], ids=["is-json", "schema-not-json", "file-exists", "contains-any",
        "csv-parse", "rows-parse", "no-rows", "header", "header-stripped"])
def test_verdicts(check: Check, output: str, files: dict[str, bytes] | None, passed: bool, evidence: str) -> None:
    result = run(check, output, files)
    assert (result["passed"], result["evidence"]) == (passed, evidence)


def test_json_schema_fails_when_its_schema_file_is_missing(tmp_path: Path) -> None:
    result = run(mk("json_schema", schema_file="gone.json"), "{}", spec_folder=str(tmp_path))
    assert result["passed"] is False
    assert result["evidence"].startswith("cannot read schema file 'gone.json'")


@pytest.mark.timeout(30)  # dropping the pop of trailing blank rows would loop forever
def test_trailing_blank_lines_are_not_csv_rows() -> None:
    ok = run(mk("csv_valid"), "a,b\n1,2\n\n\n")
    assert (ok["passed"], ok["evidence"]) == (True, "2 row(s) × 2 column(s)")
    rows = run(mk("csv_row_count", count=1), "a,b\n1,2\n\n")
    assert (rows["passed"], rows["evidence"]) == (True, "output has 1 data row(s) after the header, needed exactly 1")
    blank = run(mk("csv_valid"), "\n\n")
    assert (blank["passed"], blank["evidence"]) == (False, "output has no CSV rows")


@pytest.mark.parametrize(("params", "output", "passed", "evidence"), [
    ({"count": 0}, "h\n", True, "output has 0 data row(s) after the header, needed exactly 0"),
    ({"count": 0}, "", True, "output has 0 data row(s) after the header, needed exactly 0"),
    ({"max": 0}, "h\n", True, "output has 0 data row(s) after the header, needed at most 0"),
    ({"min": 1}, "h\n", False, "output has 0 data row(s) after the header, needed at least 1"),
    ({"max": 2}, "h\n1\n2\n", True, "output has 2 data row(s) after the header, needed at most 2"),
    ({"max": 1}, "h\n1\n2\n", False, "output has 2 data row(s) after the header, needed at most 1"),
    ({"min": 2}, "h\n1\n2\n", True, "output has 2 data row(s) after the header, needed at least 2"),
    ({"min": 3}, "h\n1\n2\n", False, "output has 2 data row(s) after the header, needed at least 3"),
    ({"min": 2, "max": 2, "header": False}, "1\n2\n", True, "output has 2 row(s), needed at least 2 and at most 2"),
    ({"max": 1, "header": False}, "1\n2\n", False, "output has 2 row(s), needed at most 1"),
], ids=["header-only", "empty", "max-0", "min-1-of-0", "max-2-of-2", "max-1-of-2", "min-2-of-2", "min-3-of-2",
        "no-header-2", "no-header-max-1"])
def test_csv_row_count_bounds_are_inclusive(params: dict[str, Any], output: str, passed: bool, evidence: str) -> None:
    result = run(mk("csv_row_count", **params), output)
    assert (result["passed"], result["evidence"]) == (passed, evidence)


# --- the python check ----------------------------------------------------------------------------------------------

def test_python_script_not_found(tmp_path: Path) -> None:
    result = run(mk("python", script="checks/nope.py"), "", spec_folder=str(tmp_path))
    assert (result["passed"], result["evidence"]) == (False, f"script 'checks/nope.py' not found in {tmp_path}")


@pytest.mark.parametrize(("code", "evidence"), [
    ("import os, sys\nsys.stderr.write('first\\nsecond\\n')\nsys.stderr.flush()\nos._exit(3)",
     "python check crashed: second"),
    ("import os\nos._exit(4)", "python check crashed: exit status 4"),
], ids=["last-stderr-line", "exit-status"])
def test_python_check_that_dies_without_a_verdict_crashed(code: str, evidence: str) -> None:
    result = run(mk("python", code=code), "")
    assert (result["passed"], result["evidence"]) == (False, evidence)


def test_python_check_that_cannot_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = str(tmp_path / "no-python")
    monkeypatch.setattr(sys, "executable", missing)
    result = run(mk("python", code="pass"), "")
    assert result["passed"] is False
    assert result["evidence"].startswith(f"could not run python: cannot start {missing!r}")


def test_python_check_default_timeout_is_30s(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[float] = []

    def timed_out(argv: Any, *, timeout: float, **kw: Any) -> process.Completed:
        seen.append(timeout)
        return process.Completed(returncode=None, stdout=b"", stderr=b"", timed_out=True, duration_ms=0.0)

    monkeypatch.setattr(process, "run", timed_out)
    result = run(mk("python", code="pass"), "")
    assert (result["passed"], result["evidence"]) == (False, "timed out after 30s (process group killed)")
    assert seen == [30.0]


def test_python_scratch_workspace_holds_nested_files() -> None:
    code = "assert open('deep/er/x.txt').read() == 'x'\nassert open('top.txt').read() == 't'"
    result = run(mk("python", code=code), "", {"deep/er/x.txt": b"x", "top.txt": b"t"})
    assert (result["passed"], result["evidence"]) == (True, "all assertions passed")


# --- urls_reachable against a loopback server ----------------------------------------------------------------------

class _Handler(http.server.BaseHTTPRequestHandler):
    def do_HEAD(self) -> None:
        if self.path.startswith("/close"):
            return  # no response at all: the client sees the connection closed
        code = int(self.path[2:5])  # /s200, /s204/…, /s301 …
        self.send_response(code)
        if code == 301:
            self.send_header("Location", "/s200")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def base() -> Iterator[str]:
    with serve(_Handler) as url:
        yield url


@pytest.mark.parametrize(("path", "passed", "tail"), [
    ("/s200", True, ": {u}"),
    ("/s204", True, ": {u}"),
    ("/s299", True, ": {u}"),
    ("/s300", False, "; failed: {u} → 300"),
    ("/s301", True, ": {u}"),  # followed to /s200
    ("/s404", False, "; failed: {u} → 404"),
], ids=["200", "204", "299", "300", "301", "404"])
def test_urls_reachable_counts_only_2xx_and_needs_one_by_default(base: str, path: str, passed: bool,
                                                                  tail: str) -> None:
    url = base + path
    result = run(mk("urls_reachable", timeout=5), f"see {url} now")
    good = 1 if passed else 0
    assert (result["passed"], result["evidence"]) == (passed, f"{good} of 1 needed URLs answered 2xx"
                                                      + tail.format(u=url))


def test_urls_reachable_lists_good_and_failed_in_order(base: str) -> None:
    paths = ["/s404", "/s200", "/s300", "/s204", "/s299", "/s301"]
    result = run(mk("urls_reachable", count=4, timeout=5), " ".join(base + p for p in paths))
    assert (result["passed"], result["evidence"]) == (
        True, f"4 of 4 needed URLs answered 2xx: {base}/s200, {base}/s204, {base}/s299, {base}/s301; "
              f"failed: {base}/s404 → 404, {base}/s300 → 300")


def test_urls_reachable_tries_at_most_20_urls(base: str) -> None:
    urls = [f"{base}/s404/{i}" for i in range(1, 21)] + [f"{base}/s200"]
    result = run(mk("urls_reachable", timeout=5), " ".join(urls))
    assert (result["passed"], result["evidence"]) == (
        False, f"0 of 1 needed URLs answered 2xx; failed: {urls[0]} → 404, {urls[1]} → 404, {urls[2]} → 404, "
               "… (17 more)")


def test_urls_reachable_reports_unreachable_hosts(base: str) -> None:
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{sock.getsockname()[1]}/x"
    closed = f"{base}/close"
    result = run(mk("urls_reachable", timeout=5), f"{refused} {closed}")
    assert result["passed"] is False
    assert result["evidence"].startswith(f"0 of 1 needed URLs answered 2xx; failed: {refused} → unreachable (")
    assert result["evidence"].endswith(
        f", {closed} → unreachable (RemoteDisconnected: Remote end closed connection without response)")


def test_urls_reachable_fails_without_enough_urls() -> None:
    result = run(mk("urls_reachable"), "no links")
    assert (result["passed"], result["evidence"]) == (False, "found 0 URL(s), needed 1 reachable: none")
