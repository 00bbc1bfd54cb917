"""Every check type: a passing and a failing case, with the evidence asserted."""

from __future__ import annotations

import http.server
import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillmake.run import process
from skillmake.run.checks import REGISTRY, CheckContext, describe, run_check, run_checks
from skillmake.spec.model import Check
from tests.loopback import serve

SCHEMA_TYPES = json.loads((Path(__file__).resolve().parents[3] / "schemas/spec.schema.json").read_text())[
    "definitions"]["check"]["properties"]["type"]["enum"]


def mk(type_: str, *, file: str | None = None, name: str | None = None, id_: str | None = None,
       **params: Any) -> Check:
    raw = {"type": type_, **params}
    return Check(type=type_, index=0, id=id_, name=name, file=file, params=params, raw=raw)


def ctx(output: str = "", files: dict[str, bytes] | None = None, *, workspace: str | None = None,
        spec_folder: str = "/nonexistent") -> CheckContext:
    return CheckContext(output=output, files=files or {}, workspace=workspace, spec_folder=spec_folder)


def run(check: Check, output: str = "", files: dict[str, bytes] | None = None, **kw: Any) -> dict[str, Any]:
    return run_check(check, ctx(output, files, **kw))


def test_registry_covers_every_schema_type() -> None:
    assert sorted(REGISTRY) == sorted(SCHEMA_TYPES)


def test_each_type_loads_from_the_module_that_defines_it() -> None:
    """checks.MODULES (which module a type's function loads from, on first use) is what the modules define."""
    import importlib

    from skillmake.run import checks

    defined = {type_: name for name in set(checks.MODULES.values())
               for type_ in importlib.import_module(f"skillmake.run.checks.{name}").CHECKS}
    assert defined == checks.MODULES
    assert checks.check_function("regexp") is None


def test_result_shape_and_text() -> None:
    result = run(mk("contains", needle="HELLO", id_="shouts"), "HELLO TEAM")
    assert result == {"text": "output contains 'HELLO'", "passed": True,
                      "evidence": "found at char 0: 'HELLO TEAM'", "source": "check", "id": "shouts"}
    named = run(mk("contains", needle="x", name="mentions x"), "y")
    assert named["text"] == "mentions x"
    assert named["id"] == "contains#0"


# --- text -------------------------------------------------------------------------------------

def test_contains_and_not_contains() -> None:
    miss = run(mk("contains", needle="HELLO"), "hello team")
    assert not miss["passed"]
    assert miss["evidence"] == "'HELLO' not found in output (10 chars): 'hello team'"
    assert run(mk("not_contains", needle="?"), "HI!")["passed"]
    hit = run(mk("not_contains", needle="Error"), "ok\nError: boom")
    assert not hit["passed"]
    assert hit["evidence"].startswith("'Error' found at char 3:")


@pytest.mark.parametrize("files", [None, {"out.txt": b""}], ids=["output", "file"])
def test_empty_text_passes_not_contains_and_fails_contains(files: dict[str, bytes] | None) -> None:
    """Issue 13: an empty output contains no needle, so `not_contains` holds; an empty output is not a failure of
    every check (only of those that need content)."""
    target = "out.txt" if files else None
    assert run(mk("not_contains", needle="Error", file=target), "", files)["passed"] is True
    assert run(mk("not_matches", pattern="Error", file=target), "", files)["passed"] is True
    assert run(mk("contains", needle="Error", file=target), "", files)["passed"] is False


def test_icontains() -> None:
    assert run(mk("icontains", needle="hello"), "HELLO")["passed"]
    miss = run(mk("icontains", needle="bye"), "HELLO")
    assert not miss["passed"]
    assert "'bye' (any case) not found" in miss["evidence"]


def test_contains_any_and_all() -> None:
    assert run(mk("contains_any", needles=["a", "zz"]), "abc")["evidence"] == "found 'a'"
    miss_any = run(mk("contains_any", needles=["x", "y"]), "abc")
    assert not miss_any["passed"]
    assert miss_any["evidence"].startswith("none of 'x', 'y' found in output")
    assert run(mk("contains_all", needles=["a", "b"]), "abc")["passed"]
    miss_all = run(mk("contains_all", needles=["a", "x", "y"]), "abc")
    assert not miss_all["passed"]
    assert miss_all["evidence"] == "missing 2 of 3: 'x', 'y'"


def test_equals_and_starts_with() -> None:
    assert run(mk("equals", value="42"), " 42\n")["passed"]
    strict = run(mk("equals", value="42", strip=False), " 42\n")
    assert not strict["passed"]
    assert strict["evidence"] == "expected '42', got ' 42\\n' (first difference at char 0)"
    assert run(mk("starts_with", prefix="# Title"), "\n# Title\nbody")["passed"]
    bad = run(mk("starts_with", prefix="# Title"), "Intro\n# Title")
    assert not bad["passed"]
    assert bad["evidence"].endswith("not '# Title'")


def test_lengths_and_tokens() -> None:
    assert run(mk("min_length", length=3), "abc")["passed"]
    short = run(mk("min_length", length=500), "abc")
    assert (short["passed"], short["evidence"]) == (False, "output has 3 chars, needed at least 500")
    long = run(mk("max_length", length=2), "abc")
    assert (long["passed"], long["evidence"]) == (False, "output has 3 chars, allowed at most 2")
    assert run(mk("max_length", length=3), "abc")["passed"]
    few = run(mk("min_tokens", count=3), "one two")
    assert (few["passed"], few["evidence"]) == (False, "output has 2 tokens, needed at least 3")
    assert run(mk("min_tokens", count=2), "one\ntwo")["passed"]
    many = run(mk("max_tokens", count=1), "one two")
    assert (many["passed"], many["evidence"]) == (False, "output has 2 tokens, allowed at most 1")
    assert run(mk("max_tokens", count=2), "one two")["passed"]


# --- patterns ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["regex", "matches"])
def test_regex_searches(kind: str) -> None:
    ok = run(mk(kind, pattern=r"\*\*\d+\."), "list:\n**1.** first")
    assert ok["passed"]
    assert ok["evidence"] == r"/\*\*\d+\./ matched '**1.' at char 6"
    miss = run(mk(kind, pattern="^[A-Z]+$"), "hello")
    assert not miss["passed"]
    assert miss["evidence"] == "no match for /^[A-Z]+$/ in 'hello'"


def test_not_matches() -> None:
    assert run(mk("not_matches", pattern=r"\?"), "HI!")["passed"]
    bad = run(mk("not_matches", pattern=r"\?$"), "what?")
    assert not bad["passed"]
    assert bad["evidence"] == r"/\?$/ matched '?' at char 4"


def test_min_count_is_multiline() -> None:
    text = "- a\n- b\nx - c\n- d"
    assert run(mk("min_count", pattern="^- ", count=3), text)["passed"]
    few = run(mk("min_count", pattern="^- ", count=4), text)
    assert not few["passed"]
    assert few["evidence"].startswith("found 3 matches of /^- /, needed 4")


def test_has_entries() -> None:
    text = "1. One\n2) Two\n**3.** Three\n### 4. Four\n3.5 stars is not an entry\n"
    ok = run(mk("has_entries", count=4), text)
    assert ok["passed"]
    assert ok["evidence"] == "found 4 numbered entries, needed 4: 1., 2), **3.**, ### 4."
    few = run(mk("has_entries", count=3), "1. only one\n")
    assert (few["passed"], few["evidence"]) == (False, "found 1 numbered entry, needed 3: 1.")
    assert run(mk("has_entries"), "no entries")["evidence"] == "found 0 numbered entries, needed 1"


def test_has_urls() -> None:
    text = "see https://a.example/x and https://b.example, again https://a.example/x."
    few = run(mk("has_urls", count=3), text)
    assert not few["passed"]
    assert few["evidence"] == "found 2 URLs, needed 3: https://a.example/x, https://b.example"
    assert run(mk("has_urls"), text)["passed"]


def test_has_format_registered_and_inline() -> None:
    text = "Call (408) 555-1234 or 650-555-9876. Zip 95014."
    ok = run(mk("has_format", format="phone_us", count=2), text)
    assert ok["passed"]
    assert ok["evidence"] == "found 2 phone_us value(s), needed 2: (408) 555-1234, 650-555-9876"
    bad = run(mk("has_format", format="email"), text)
    assert not bad["passed"]
    assert bad["evidence"].startswith("found 0 email value(s), needed 1 in 'Call (408)")
    inline = run(mk("has_format", format=r"\d{5}"), text)
    assert inline["passed"]
    assert inline["evidence"] == r"found 1 /\d{5}/ value(s), needed 1: 95014"


# --- urls_reachable against a loopback server -------------------------------------------------

class _Handler(http.server.BaseHTTPRequestHandler):
    def do_HEAD(self) -> None:
        if self.path == "/moved":
            self.send_response(301)
            self.send_header("Location", "/ok")
        else:
            self.send_response(200 if self.path.startswith("/ok") else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return


@pytest.fixture
def http_base() -> Iterator[str]:
    with serve(_Handler) as url:
        yield url


def test_urls_reachable_passes(http_base: str) -> None:
    text = f"{http_base}/missing then {http_base}/ok and {http_base}/moved"
    result = run(mk("urls_reachable", count=2, timeout=5), text)
    assert result["passed"], result["evidence"]
    assert result["evidence"].startswith(f"2 of 2 needed URLs answered 2xx: {http_base}/ok, {http_base}/moved")
    assert f"failed: {http_base}/missing → 404" in result["evidence"]


def test_urls_reachable_fails(http_base: str) -> None:
    result = run(mk("urls_reachable", count=1, timeout=5), f"{http_base}/missing")
    assert not result["passed"]
    assert result["evidence"] == f"0 of 1 needed URLs answered 2xx; failed: {http_base}/missing → 404"
    none = run(mk("urls_reachable", count=2), "no links")
    assert none["evidence"] == "found 0 URL(s), needed 2 reachable: none"


# --- files ------------------------------------------------------------------------------------

def test_file_target_missing() -> None:
    result = run(mk("contains", file="out/report.md", needle="x"), "", {"a.txt": b"x"})
    assert not result["passed"]
    assert result["evidence"] == "file 'out/report.md' was not captured (captured: a.txt)"
    assert result["text"] == "file 'out/report.md' contains 'x'"


def test_file_target_used_instead_of_output() -> None:
    result = run(mk("contains", file="./report.md", needle="DONE"), "nothing here", {"report.md": b"all DONE"})
    assert result["passed"]


def test_file_exists_and_contains() -> None:
    files = {"out.csv": b"a,b\n1,2\n"}
    assert run(mk("file_exists", file="out.csv"), "", files)["evidence"] == "file 'out.csv' was captured (8 chars)"
    assert not run(mk("file_exists", file="nope.csv"), "", files)["passed"]
    assert run(mk("file_contains", file="out.csv", needle="1,2"), "", files)["passed"]
    miss = run(mk("file_contains", file="out.csv", needle="9"), "", files)
    assert not miss["passed"]
    assert miss["evidence"] == "'9' not found in file 'out.csv': 'a,b\\n1,2\\n'"


# --- json ---------------------------------------------------------------------------------------

def test_is_json() -> None:
    assert run(mk("is_json"), '{"a": [1, 2]}')["evidence"] == "output is a JSON object with 1 item(s)"
    bad = run(mk("is_json"), '```json\n{"a": 1}\n```')
    assert not bad["passed"]
    assert bad["evidence"].startswith("output is not JSON: Expecting value at line 1 column 1 "
                                      "(it is wrapped in a ``` code fence)")


SCHEMA = {"type": "object", "required": ["name", "tags"],
          "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}}


def test_json_schema_inline() -> None:
    assert run(mk("json_schema", schema=SCHEMA), '{"name": "x", "tags": ["a"]}')["passed"]
    bad = run(mk("json_schema", schema=SCHEMA), '{"name": 3, "tags": ["a", 1]}')
    assert not bad["passed"]
    assert bad["evidence"] == ("2 schema error(s): $.name: 3 is not of type 'string', "
                               "$.tags[1]: 1 is not of type 'string'")


def test_json_schema_file_and_draft(tmp_path: Path) -> None:
    # A draft-07 schema is applied with draft-07 rules (its $schema decides the validator).
    (tmp_path / "s.json").write_text(json.dumps({"$schema": "http://json-schema.org/draft-07/schema#",
                                                 "type": "array", "items": [{"type": "integer"}],
                                                 "additionalItems": False}))
    check = mk("json_schema", schema_file="s.json")
    assert run(check, "[1]", spec_folder=str(tmp_path))["passed"]
    bad = run(check, "[1, 2]", spec_folder=str(tmp_path))
    assert not bad["passed"]
    assert "Additional items are not allowed" in bad["evidence"]
    missing = run(mk("json_schema", schema_file="gone.json"), "[]", spec_folder=str(tmp_path))
    assert missing["evidence"].startswith("cannot read schema file 'gone.json'")
    assert describe(check) == "output is JSON valid against schema file 's.json'"


# --- csv ----------------------------------------------------------------------------------------

def test_csv_valid() -> None:
    ok = run(mk("csv_valid", header=["name", "qty"]), 'name,qty\n"a, b",2\nc,3\n')
    assert ok["passed"]
    assert ok["evidence"] == "3 row(s) × 2 column(s), header ['name', 'qty']"
    ragged = run(mk("csv_valid"), "a,b\n1,2,3\n")
    assert (ragged["passed"], ragged["evidence"]) == (False, "row 2 has 3 field(s), expected 2 (like row 1): '1,2,3'")
    header = run(mk("csv_valid", header=["x", "y"]), "a,b\n1,2\n")
    assert header["evidence"] == "header is ['a', 'b'], expected ['x', 'y']"
    assert run(mk("csv_valid"), "")["evidence"] == "output has no CSV rows"


def test_csv_row_count() -> None:
    csv_text = b"h1,h2\n1,2\n3,4\n5,6\n"
    files = {"t.csv": csv_text}
    exact = run(mk("csv_row_count", file="t.csv", count=3), "", files)
    assert exact["passed"]
    assert exact["evidence"] == "file 't.csv' has 3 data row(s) after the header, needed exactly 3"
    off = run(mk("csv_row_count", file="t.csv", count=150), "", files)
    assert not off["passed"]
    ranged = run(mk("csv_row_count", file="t.csv", min=5, max=9, header=False), "", files)
    assert (ranged["passed"], ranged["evidence"]) == (
        False, "file 't.csv' has 4 row(s), needed at least 5 and at most 9")
    assert run(mk("csv_row_count", max=1), "a\n")["passed"]


# --- python -------------------------------------------------------------------------------------

def test_python_inline_passes_with_output_and_files() -> None:
    code = ("assert output.startswith('HI')\nassert files['out.txt'] == 'data'\n"
            "import os\nassert os.getcwd() == workspace")
    result = run(mk("python", code=code), "HI there", {"out.txt": b"data"})
    assert result["passed"], result["evidence"]
    assert result["evidence"] == "all assertions passed"


def test_python_inline_failures() -> None:
    msg = run(mk("python", code="assert 'x' in output, 'no x in output'"), "abc")
    assert (msg["passed"], msg["evidence"]) == (False, "no x in output")
    bare = run(mk("python", code="n = 1\nassert n == 2"), "abc")
    assert (bare["passed"], bare["evidence"]) == (False, "assertion failed at line 2: assert n == 2")
    crash = run(mk("python", code="import json\njson.loads(output)"), "not json")
    assert not crash["passed"]
    assert crash["evidence"].startswith("json.decoder.JSONDecodeError: Expecting value")
    exit_ = run(mk("python", code="import sys\nsys.exit(3)"), "")
    assert exit_["evidence"] == "exited with status 3"


def test_python_env_output_file_and_workspace(tmp_path: Path) -> None:
    (tmp_path / "made.txt").write_text("on disk")
    code = ("import os\nassert open(os.environ['SKILLMAKE_OUTPUT_FILE']).read() == output\n"
            "assert open('made.txt').read() == 'on disk'")
    assert run(mk("python", code=code), "OUT", workspace=str(tmp_path))["passed"]


def test_python_script(tmp_path: Path) -> None:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks/check_report.py").write_text(
        "import pathlib\nassert pathlib.Path('report.md').read_text().startswith('#'), 'report lacks a title'\n")
    check = mk("python", script="checks/check_report.py")
    ok = run(check, "", {"report.md": b"# Report"}, spec_folder=str(tmp_path))
    assert ok["passed"], ok["evidence"]
    bad = run(check, "", {"report.md": b"Report"}, spec_folder=str(tmp_path))
    assert (bad["passed"], bad["evidence"]) == (False, "report lacks a title")
    assert describe(check) == "python script 'checks/check_report.py' passes"


def test_python_timeout_kills() -> None:
    result = run(mk("python", code="import time\ntime.sleep(30)", timeout=0.5), "")
    assert (result["passed"], result["evidence"]) == (False, "timed out after 0.5s (process group killed)")


def test_run_checks_runs_all_in_order() -> None:
    results = run_checks([mk("contains", needle="a"), mk("contains", needle="zz"), mk("min_length", length=1)],
                         ctx("abc"))
    assert [r["passed"] for r in results] == [True, False, True]


@pytest.mark.parametrize("kind", sorted(SCHEMA_TYPES))
def test_every_type_has_a_description(kind: str) -> None:
    params = {"needle": "n", "needles": ["n"], "pattern": "p", "count": 1, "length": 1, "format": "email",
              "value": "v", "prefix": "p", "schema": {}, "code": "pass"}
    text = describe(mk(kind, file="f.txt", **params))
    assert not text.endswith(" check"), text


SPEC_YAML = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
cases:
  - id: all
    prompt: go
    output_files: [t.csv, d.json]
    checks:
      - {type: has_urls}
      - {type: has_entries}
      - {type: has_format, format: email}
      - {type: equals, value: "x"}
      - {type: csv_row_count, file: t.csv, min: 1}
      - {type: json_schema, file: d.json, schema_file: schema.json}
      - {type: python, code: "assert files['t.csv'].startswith('h')"}
"""


def test_checks_run_on_a_loaded_spec(tmp_path: Path) -> None:
    """The spec loader's Check.params are what the check functions read (defaults included)."""
    from skillmake.spec.loader import load_spec

    (tmp_path / "skills/s").mkdir(parents=True)
    (tmp_path / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: says things\n---\nSay things.\n")
    (tmp_path / "schema.json").write_text(json.dumps({"type": "object", "required": ["a"]}))
    (tmp_path / "s.eval.yaml").write_text(SPEC_YAML)
    spec = load_spec(str(tmp_path / "s.eval.yaml"))
    output = "1. see https://example.com\nmail bob@example.com"
    files = {"t.csv": b"h\n1\n", "d.json": b'{"a": 1}'}
    results = run_checks(spec.cases[0].checks, ctx(output, files, spec_folder=spec.folder))
    assert [r["passed"] for r in results] == [True, True, True, False, True, True, True], results


def test_invalid_regex_fails_as_a_value() -> None:
    result = run(mk("regex", pattern="("), "abc")
    assert (result["passed"], result["evidence"]) == (False, "invalid regular expression: missing ), "
                                                             "unterminated subpattern at position 0")


def test_python_scratch_workspace_keeps_files_inside() -> None:
    code = ("import os\nassert open('ok/a.txt').read() == 'a'\n"
            "assert not os.path.exists(os.path.join(workspace, '..', 'evil.txt')), 'escaped'")
    result = run(mk("python", code=code), "", {"./ok/a.txt": b"a", "../evil.txt": b"x"})
    assert result["passed"], result["evidence"]


# Pins from the mutation run (bench/mutation.py): verdicts on error paths, evidence text at
def mk_pin(type_: str, *, file: str | None = None, **params: Any) -> Check:
    return Check(type=type_, index=0, file=file, params=params, raw={"type": type_, **params})


def run_pin(check: Check, output: str = "", files: dict[str, bytes] | None = None, *,
        spec_folder: str = "/nonexistent") -> dict[str, Any]:
    return run_check(check, CheckContext(output=output, files=files or {}, workspace=None, spec_folder=spec_folder))


def test_an_unknown_check_type_is_a_bug_not_a_verdict() -> None:
    with pytest.raises(ValueError, match="no check function for type 'nope'"):
        run_pin(mk_pin("nope"), "x")


# --- evidence excerpts: clip (60), quote (80), listing (5), describe's quoting (58) ------------------------------

@pytest.mark.parametrize(("text", "shown"), [
    ("a" * 59, "a" * 59),
    ("a" * 60, "a" * 60),
    ("a" * 61, "a" * 59 + "…"),
    ("a" * 100, "a" * 59 + "…"),
], ids=["59", "60", "61", "100"])
def test_an_excerpt_of_the_text_is_clipped_past_60_chars(text: str, shown: str) -> None:
    miss = run_pin(mk_pin("contains", needle="zz"), text)
    assert (miss["passed"], miss["evidence"]) == (False, f"'zz' not found in output ({len(text)} chars): '{shown}'")


@pytest.mark.parametrize(("needle", "shown"), [
    ("n" * 80, "n" * 80),
    ("n" * 81, "n" * 79 + "…"),
], ids=["80", "81"])
def test_a_quoted_needle_is_clipped_past_80_chars(needle: str, shown: str) -> None:
    miss = run_pin(mk_pin("contains", needle=needle), "abc")
    assert miss["evidence"] == f"'{shown}' not found in output (3 chars): 'abc'"


@pytest.mark.parametrize(("needles", "evidence"), [
    (list("abcd"), "found 'a', 'b', 'c', 'd'"),
    (list("abcde"), "found 'a', 'b', 'c', 'd', 'e'"),
    (list("abcdef"), "found 'a', 'b', 'c', 'd', 'e', … (1 more)"),
    (list("abcdefgh"), "found 'a', 'b', 'c', 'd', 'e', … (3 more)"),
], ids=["4", "5", "6", "8"])
def test_a_listing_shows_five_items_then_how_many_more(needles: list[str], evidence: str) -> None:
    hit = run_pin(mk_pin("contains_any", needles=needles), "abcdefgh")
    assert (hit["passed"], hit["evidence"]) == (True, evidence)


@pytest.mark.parametrize(("check", "text"), [
    (mk_pin("contains", needle="q" * 58), f"output contains '{'q' * 58}'"),
    (mk_pin("contains", needle="q" * 59), f"output contains '{'q' * 57}…'"),
    (mk_pin("contains_any", needles=["a", "b"]), "output contains any of 'a', 'b'"),
    (mk_pin("csv_row_count", count=2), "output has exactly 2 CSV data rows"),
    (mk_pin("csv_row_count", min=1, max=2), "output has at least 1 and at most 2 CSV data rows"),
    (mk_pin("csv_row_count", max=2), "output has at most 2 CSV data rows"),
], ids=["needle-58", "needle-59", "any-of", "exactly", "between", "at-most"])
def test_the_description_a_user_reads_for_an_unnamed_check(check: Check, text: str) -> None:
    assert run_pin(check, "x")["text"] == text


# --- where a found needle is shown ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("check", "output", "evidence"), [
    # case-sensitive: the lower-case occurrence before it is not the one found
    (mk_pin("contains", needle="HELLO"), "hello HELLO", "found at char 6: 'hello HELLO'"),
    # 20 chars of context either side
    (mk_pin("contains", needle="NEEDLE"), "a" * 30 + "NEEDLE" + "b" * 30,
     f"found at char 30: '{'a' * 20}NEEDLE{'b' * 20}'"),
    (mk_pin("icontains", needle="hello"), "xx HELLO there", "found at char 3: 'xx HELLO there'"),
    (mk_pin("not_contains", needle="Err"), "x" * 25 + "Err", f"'Err' found at char 25: '{'x' * 20}Err'"),
], ids=["contains-case", "context-20", "icontains", "not-contains"])
def test_where_a_found_needle_is_shown(check: Check, output: str, evidence: str) -> None:
    result = run_pin(check, output)
    assert result["evidence"] == evidence
    assert result["passed"] is (check.type != "not_contains")


def test_equals_names_the_first_difference_when_one_side_is_a_prefix() -> None:
    for value, output, at in (("abcd", "abc", 3), ("ab", "abc", 2), ("abX", "abc", 2)):
        result = run_pin(mk_pin("equals", value=value), output)
        assert (result["passed"], result["evidence"]) == (
            False, f"expected '{value}', got '{output}' (first difference at char {at})")


# --- verdicts on success and error paths ---------------------------------------------------------------------------

CSV_ERROR = "CSV parse error: ',' expected after '\"'"


@pytest.mark.parametrize(("check", "output", "files", "passed", "evidence"), [
    (mk_pin("is_json"), "[1, 2]", None, True, "output is a JSON array with 2 item(s)"),
    (mk_pin("json_schema", schema={"type": "object"}), "nope", None, False,
     "output is not JSON: Expecting value at line 1 column 1: 'nope'"),
    (mk_pin("file_exists", file="a.txt"), "", {"a.txt": b"abc"}, True, "file 'a.txt' was captured (3 chars)"),
    (mk_pin("contains_any", needles=["b"]), "abc", None, True, "found 'b'"),
    (mk_pin("csv_valid"), 'a,"b"c\n', None, False, f"output: {CSV_ERROR}"),
    (mk_pin("csv_row_count", count=1), 'h\na,"b"c\n', None, False, f"output: {CSV_ERROR}"),
    (mk_pin("csv_valid"), "", None, False, "output has no CSV rows"),
    (mk_pin("csv_valid", header=["x"]), "a\n1\n", None, False, "header is ['a'], expected ['x']"),
    (mk_pin("csv_valid", header=[" a"]), "a\n1\n", None, False, "header is ['a'], expected [' a']"),
], ids=["is-json", "schema-not-json", "file-exists", "contains-any",
        "csv-parse", "rows-parse", "no-rows", "header", "header-stripped"])
def test_verdicts(check: Check, output: str, files: dict[str, bytes] | None, passed: bool, evidence: str) -> None:
    result = run_pin(check, output, files)
    assert (result["passed"], result["evidence"]) == (passed, evidence)


def test_json_schema_fails_when_its_schema_file_is_missing(tmp_path: Path) -> None:
    result = run_pin(mk_pin("json_schema", schema_file="gone.json"), "{}", spec_folder=str(tmp_path))
    assert result["passed"] is False
    assert result["evidence"].startswith("cannot read schema file 'gone.json'")


@pytest.mark.timeout(30)  # dropping the pop of trailing blank rows would loop forever
def test_trailing_blank_lines_are_not_csv_rows() -> None:
    ok = run_pin(mk_pin("csv_valid"), "a,b\n1,2\n\n\n")
    assert (ok["passed"], ok["evidence"]) == (True, "2 row(s) × 2 column(s)")
    rows = run_pin(mk_pin("csv_row_count", count=1), "a,b\n1,2\n\n")
    assert (rows["passed"], rows["evidence"]) == (True, "output has 1 data row(s) after the header, needed exactly 1")
    blank = run_pin(mk_pin("csv_valid"), "\n\n")
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
    result = run_pin(mk_pin("csv_row_count", **params), output)
    assert (result["passed"], result["evidence"]) == (passed, evidence)


# --- the python check ----------------------------------------------------------------------------------------------

def test_python_script_not_found(tmp_path: Path) -> None:
    result = run_pin(mk_pin("python", script="checks/nope.py"), "", spec_folder=str(tmp_path))
    assert (result["passed"], result["evidence"]) == (False, f"script 'checks/nope.py' not found in {tmp_path}")


@pytest.mark.parametrize(("code", "evidence"), [
    ("import os, sys\nsys.stderr.write('first\\nsecond\\n')\nsys.stderr.flush()\nos._exit(3)",
     "python check crashed: second"),
    ("import os\nos._exit(4)", "python check crashed: exit status 4"),
], ids=["last-stderr-line", "exit-status"])
def test_python_check_that_dies_without_a_verdict_crashed(code: str, evidence: str) -> None:
    result = run_pin(mk_pin("python", code=code), "")
    assert (result["passed"], result["evidence"]) == (False, evidence)


def test_python_check_that_cannot_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = str(tmp_path / "no-python")
    monkeypatch.setattr(sys, "executable", missing)
    result = run_pin(mk_pin("python", code="pass"), "")
    assert result["passed"] is False
    assert result["evidence"].startswith(f"could not run python: cannot start {missing!r}")


def test_python_check_default_timeout_is_30s(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[float] = []

    def timed_out(argv: Any, *, timeout: float, **kw: Any) -> process.Completed:
        seen.append(timeout)
        return process.Completed(returncode=None, stdout=b"", stderr=b"", timed_out=True, duration_ms=0.0)

    monkeypatch.setattr(process, "run", timed_out)
    result = run_pin(mk_pin("python", code="pass"), "")
    assert (result["passed"], result["evidence"]) == (False, "timed out after 30s (process group killed)")
    assert seen == [30.0]


def test_python_scratch_workspace_holds_nested_files() -> None:
    code = "assert open('deep/er/x.txt').read() == 'x'\nassert open('top.txt').read() == 't'"
    result = run_pin(mk_pin("python", code=code), "", {"deep/er/x.txt": b"x", "top.txt": b"t"})
    assert (result["passed"], result["evidence"]) == (True, "all assertions passed")


# --- urls_reachable against a loopback server ----------------------------------------------------------------------

class _StatusHandler(http.server.BaseHTTPRequestHandler):
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
    with serve(_StatusHandler) as url:
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
    result = run_pin(mk_pin("urls_reachable", timeout=5), f"see {url} now")
    good = 1 if passed else 0
    assert (result["passed"], result["evidence"]) == (passed, f"{good} of 1 needed URLs answered 2xx"
                                                      + tail.format(u=url))


def test_urls_reachable_lists_good_and_failed_in_order(base: str) -> None:
    paths = ["/s404", "/s200", "/s300", "/s204", "/s299", "/s301"]
    result = run_pin(mk_pin("urls_reachable", count=4, timeout=5), " ".join(base + p for p in paths))
    assert (result["passed"], result["evidence"]) == (
        True, f"4 of 4 needed URLs answered 2xx: {base}/s200, {base}/s204, {base}/s299, {base}/s301; "
              f"failed: {base}/s404 → 404, {base}/s300 → 300")


def test_urls_reachable_tries_at_most_20_urls(base: str) -> None:
    urls = [f"{base}/s404/{i}" for i in range(1, 21)] + [f"{base}/s200"]
    result = run_pin(mk_pin("urls_reachable", timeout=5), " ".join(urls))
    assert (result["passed"], result["evidence"]) == (
        False, f"0 of 1 needed URLs answered 2xx; failed: {urls[0]} → 404, {urls[1]} → 404, {urls[2]} → 404, "
               "… (17 more)")


def test_urls_reachable_reports_unreachable_hosts(base: str) -> None:
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{sock.getsockname()[1]}/x"
    closed = f"{base}/close"
    result = run_pin(mk_pin("urls_reachable", timeout=5), f"{refused} {closed}")
    assert result["passed"] is False
    assert result["evidence"].startswith(f"0 of 1 needed URLs answered 2xx; failed: {refused} → unreachable (")
    assert result["evidence"].endswith(
        f", {closed} → unreachable (RemoteDisconnected: Remote end closed connection without response)")


def test_urls_reachable_fails_without_enough_urls() -> None:
    result = run_pin(mk_pin("urls_reachable"), "no links")
    assert (result["passed"], result["evidence"]) == (False, "found 0 URL(s), needed 1 reachable: none")
