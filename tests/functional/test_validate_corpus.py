"""The real `skillmake validate` CLI over the corpus of malformed specs: exact errors, exit codes, no tracebacks.

Each tests/data/invalid/<name>.eval.{yaml,json} has a sibling <name>.expected holding the exact stderr.
After a deliberate change of wording, regenerate them with `python tests/functional/test_validate_corpus.py`
and review the diff.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .inprocess import command_state

REPO = Path(__file__).resolve().parents[2]
INVALID = REPO / "tests" / "data" / "invalid"
VALID = REPO / "tests" / "data" / "valid"
SPECS = sorted(p for p in INVALID.iterdir() if p.name.endswith((".eval.yaml", ".eval.json")))


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "skillmake", "validate", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def run_here(capfd: pytest.CaptureFixture[str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """As `run`, in this process (`cli.main`, as tests/functional/inprocess.py runs a command): the corpus is about
    each file's messages and exit code, not the child, and 140 children cost a minute of CPU. The other tests here
    keep the real `python -m skillmake`."""
    from skillmake.commands import cli

    capfd.readouterr()
    with command_state(), contextlib.chdir(cwd):
        code = cli.main(["validate", *args])
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(["skillmake", "validate", *args], code, out, err)


def expected_path(spec: Path) -> Path:
    return spec.with_name(spec.name.rsplit(".eval.", 1)[0] + ".expected")


def test_corpus_is_large_and_complete() -> None:
    assert len(SPECS) >= 100
    assert any(p.suffix == ".json" for p in SPECS)
    missing = [p.name for p in SPECS if not expected_path(p).is_file()]
    assert missing == []
    orphans = [p.name for p in INVALID.glob("*.expected")
               if not any(expected_path(s) == p for s in SPECS)]
    assert orphans == []


@pytest.mark.parametrize("spec", SPECS, ids=[p.name for p in SPECS])
def test_invalid_spec_reports_exact_errors(spec: Path, capfd: pytest.CaptureFixture[str]) -> None:
    result = run_here(capfd, "--root", ".", spec.name, cwd=INVALID)
    assert "Traceback" not in result.stderr
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr == expected_path(spec).read_text(encoding="utf-8")


def test_errors_are_sorted_by_line_and_printed_once() -> None:
    result = run("--root", ".", "many_errors_sorted.eval.yaml", cwd=INVALID)
    lines = [line for line in result.stderr.splitlines() if line.startswith("many_errors_sorted")]
    positions = [tuple(int(n) for n in line.split(" ")[0].split(":")[1:3]) for line in lines]
    assert len(lines) >= 5
    assert positions == sorted(positions)
    assert len(set(lines)) == len(lines)


def test_paths_are_relative_to_the_root_whatever_the_cwd(tmp_path: Path) -> None:
    spec = INVALID / "unknown_key_top.eval.yaml"
    result = run("--root", str(REPO), str(spec), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("tests/data/invalid/unknown_key_top.eval.yaml:5:1 /tirals: unknown key 'tirals'\n")


def test_many_files_in_one_run_report_every_file() -> None:
    names = [p.name for p in SPECS]
    result = run("--root", ".", *names, cwd=INVALID)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    expected = "".join(expected_path(p).read_text(encoding="utf-8").rsplit("\n", 2)[0] + "\n" for p in SPECS)
    *body, summary = result.stderr.splitlines()
    assert "\n".join(body) + "\n" == expected
    assert summary.endswith(f" in {len(SPECS)} of {len(SPECS)} spec(s)")


def test_json_format_shape() -> None:
    result = run("--root", ".", "--format", "json", "many_errors_sorted.eval.yaml", "regex_bad.eval.yaml",
                 cwd=INVALID)
    assert result.returncode == 2
    assert result.stderr == ""
    payload = json.loads(result.stdout)
    assert payload["valid"] is False
    assert payload["files"] == 2
    assert {tuple(sorted(e)) for e in payload["errors"]} == {
        ("column", "file", "hint", "line", "message", "pointer")}
    first = payload["errors"][0]
    assert first == {"file": "many_errors_sorted.eval.yaml", "line": 5, "column": 14, "pointer": "/agent/max_turns",
                     "message": "expected an integer, got string '5'", "hint": "write the number without quotes: 5"}
    text = run("--root", ".", "many_errors_sorted.eval.yaml", "regex_bad.eval.yaml", cwd=INVALID).stderr
    rendered = [f"{e['file']}:{e['line']}:{e['column']} {e['pointer']}: {e['message']}" for e in payload["errors"]]
    assert rendered == [line for line in text.splitlines()
                        if not line.startswith("  hint:") and " error(s) in " not in line]


def test_json_format_for_valid_specs() -> None:
    result = run("--root", ".", "--format", "json", cwd=VALID)
    assert result.returncode == 0
    assert json.loads(result.stdout) == {"valid": True, "files": 5, "errors": []}


def test_valid_specs_pass() -> None:
    specs = sorted(p.name for p in VALID.iterdir() if p.name.endswith((".eval.yaml", ".eval.json")))
    assert len(specs) == 5  # two of them start with a UTF-8 byte order mark and use CRLF line ends
    result = run("--root", ".", *specs, cwd=VALID)
    assert (result.returncode, result.stdout, result.stderr) == (0, "5 spec(s) valid\n", "")


def test_quiet_prints_nothing_when_valid() -> None:
    result = run("--quiet", "--root", ".", "minimal.eval.yaml", cwd=VALID)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_examples_are_valid() -> None:
    result = run("--root", ".", "examples/shout.eval.yaml", "examples/summarize.eval.yaml", cwd=REPO)
    assert (result.returncode, result.stderr) == (0, "")


def test_missing_file_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    result = run("--root", ".", "nope.eval.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("nope.eval.yaml: cannot read: No such file or directory\n")


def test_bad_usage_exits_3(tmp_path: Path) -> None:
    result = run("--format", "xml", cwd=tmp_path)
    assert result.returncode == 3
    assert "Traceback" not in result.stderr


def test_the_editor_save_path_imports_nothing_heavy() -> None:
    """Speed lives in bench/validate.py; this guards its cause: validate never imports these (~70–300 ms)."""
    code = ("import sys; from skillmake.commands.cli import main; "
            "code = main(['validate', '--quiet', 'examples/shout.eval.yaml', 'examples/summarize.eval.yaml']); "
            "print(code); print(' '.join(sorted(sys.modules)))")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    status, modules = done.stdout.splitlines()
    assert status == "0", done.stderr
    loaded = {m.split(".")[0] for m in modules.split()}
    assert loaded.isdisjoint({"doit", "jsonschema", "referencing", "anthropic", "openai", "httpx", "orjson"})


HOSTILE = {
    # name: (text, the start of the one error line)
    "deep-flow.eval.yaml": ("a: " + "[" * 200_000 + "]" * 200_000 + "\n",
                            "deep-flow.eval.yaml:1:1004 /: nested more than"),
    "deep-block.eval.yaml": ("".join(" " * i + "k:\n" for i in range(150)), "deep-block.eval.yaml:102:102 /k/k/k/"),
    "deep.eval.json": ('{"a": ' + "[" * 5000 + "]" * 5000 + "}", "deep.eval.json:1:107 /a/0/0/"),
    "laughs.eval.yaml": ('a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8)),
        "laughs.eval.yaml:1:32 /f/2/5/6/6/4/6: YAML aliases expand to more than 250,000 values"),
    "bigint.eval.yaml": ("trials: " + "9" * 5000 + "\n", "bigint.eval.yaml:1:9 /trials: number too large"),
    "bigint.eval.json": ('{"trials": ' + "9" * 5000 + "}", "bigint.eval.json:1:12 /: not valid JSON: number too large"),
    "nul.eval.yaml": ("skill: a\x00b\n", "nul.eval.yaml:1:9 /: not valid YAML: control character U+0000"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_files_are_errors_not_crashes(tmp_path: Path, name: str) -> None:
    text, start = HOSTILE[name]
    (tmp_path / name).write_text(text)
    result = run("--root", ".", name, cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert result.returncode == 2, result.stderr[-500:]
    assert result.stderr.startswith(start), result.stderr[:300]
    assert result.stderr.endswith("1 error(s) in 1 of 1 spec(s)\n")


def test_a_big_honest_spec_shows_its_real_error(tmp_path: Path) -> None:
    """300,000 values and no alias: no "aliases expanding?" refusal, the one real mistake is reported."""
    (tmp_path / "skills/ok").mkdir(parents=True)
    (tmp_path / "skills/ok/SKILL.md").write_text("---\nname: ok\n---\nok\n")
    cases = "".join(f"  - {{id: c{i}, prompt: p, checks: [{{type: contains, needle: x}}]}}\n" for i in range(40_000))
    (tmp_path / "big.eval.yaml").write_text("skill: skills/ok\nagent: {kind: command, command: [python3]}\n"
                                            "cases:\n" + cases + "  - {id: c0, prompt: p, checks: [{type: contains, "
                                                                  "needle: x}]}\n")
    result = run("--root", ".", "big.eval.yaml", cwd=tmp_path)
    assert result.stderr.startswith("big.eval.yaml:40004:10 /cases/40000/id: duplicate case id 'c0'\n"), \
        result.stderr[:300]
    assert result.returncode == 2


def _regenerate() -> None:
    for spec in SPECS:
        result = run("--root", ".", spec.name, cwd=INVALID)
        expected_path(spec).write_text(result.stderr, encoding="utf-8")
        print(f"{spec.name}: exit {result.returncode}")


if __name__ == "__main__":
    _regenerate()
