"""Every check type: a passing and a failing case, with the evidence asserted."""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillmake.run.checks import REGISTRY, CheckContext, describe, run_check, run_checks
from skillmake.spec.model import Check
from tests.loopback import serve

SCHEMA_TYPES = json.loads((Path(__file__).resolve().parents[2] / "schemas/spec.schema.json").read_text())[
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
