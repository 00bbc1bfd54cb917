"""eva's `.eval.jsonl`, beside each eval.yml: one row per run that evaluated the eval, none for a run that found
nothing of it stale, with the verdict report.json and the exit code show; native specs get none."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.fakeapi.reply import Reply
from tests.fakeapi.server import FakeAPI

from .test_seed_eva import _config, _project

EVA_FIELDS = {"ts", "all_passed", "total", "passed", "failed_cases"}


def _rows(root: Path, name: str) -> list[dict]:
    path = root / "prompts" / name / ".eval.jsonl"
    return [orjson.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def _verdict(root: Path, spec: str) -> bool:
    report = orjson.loads((root / ".skillmake" / "reports" / spec / "report.json").read_bytes())
    return bool(report["verdict"]["passed"])


def test_a_run_adds_one_eva_row_per_eval_and_a_no_op_adds_none(tmp_path: Path) -> None:
    p = _project(tmp_path)
    with FakeAPI() as api:
        api.default = Reply.text("SCORE=5 REASON=One renamed name, nothing else.")
        first = p.run(env=api.anthropic_env())
        assert first.code == 0, first.out + first.err
        for name in ("diff-surgeon", "rejects-empty"):
            rows = _rows(p.root, name)
            assert len(rows) == 1 and set(rows[0]) == EVA_FIELDS
            assert rows[0] | {"ts": None} == {"ts": None, "all_passed": True, "total": 1, "passed": 1,
                                              "failed_cases": []}
            assert rows[0]["all_passed"] == _verdict(p.root, name)
        again = p.run(env=api.anthropic_env())
        assert again.code == 0 and again.agent_calls == 0
        assert [len(_rows(p.root, n)) for n in ("diff-surgeon", "rejects-empty")] == [1, 1]  # nothing evaluated
        # A prompt edit evaluates that eval again (one trial): one row for it, none for the other.
        p.replace("prompts/rejects-empty/prompt.xml", "say so", "say so plainly")
        edit = p.run(env=api.anthropic_env())
        assert edit.code == 0 and edit.agent_calls == 1
        assert [len(_rows(p.root, n)) for n in ("diff-surgeon", "rejects-empty")] == [1, 2]
        # The native twins of the same prompts write no eva history anywhere (and evaluate no eva again).
        _config(p, '"prompts", "twins"')
        twins = p.run(env=api.anthropic_env())
        assert twins.code == 0, twins.out + twins.err
    assert [len(_rows(p.root, n)) for n in ("diff-surgeon", "rejects-empty")] == [1, 2]
    assert (p.root / ".skillmake" / "reports" / "rejects-empty-twin" / "report.json").is_file()
    assert sorted(q.relative_to(p.root).as_posix() for q in p.root.rglob(".eval.jsonl")) == [
        "prompts/diff-surgeon/.eval.jsonl", "prompts/rejects-empty/.eval.jsonl"]


def test_a_red_eval_gets_a_row_per_invocation_as_in_eva_and_the_row_says_which_case(tmp_path: Path) -> None:
    p = _project(tmp_path)
    with FakeAPI() as api:
        api.default = Reply.text("SCORE=3 REASON=It also reformats the file.")  # below pass_threshold 4
        assert p.run(env=api.anthropic_env()).code == 1
        assert p.run(env=api.anthropic_env()).code == 1  # a red spec is checked again: an invocation
        rows = _rows(p.root, "diff-surgeon")
        assert [r | {"ts": None} for r in rows] == [{"ts": None, "all_passed": False, "total": 1, "passed": 0,
                                                     "failed_cases": ["small-file-happy-path"]}] * 2
        assert len(_rows(p.root, "rejects-empty")) == 1  # green and unchanged: not evaluated again
        api.default = Reply.text("SCORE=5 REASON=Surgical.")
        p.replace("prompts/diff-surgeon/eval.yml", "surgical-ness, 1-5", "surgical-ness, 1 to 5")  # re-grade only
        fixed = p.run(env=api.anthropic_env())
        assert fixed.code == 0 and fixed.agent_calls == 0
        assert [r["all_passed"] for r in _rows(p.root, "diff-surgeon")] == [False, False, True]


def test_rows_eva_wrote_before_are_kept(tmp_path: Path) -> None:
    p = _project(tmp_path)
    old = b'{"ts": "2026-10-01T10:00:00", "all_passed": false, "total": 1, "passed": 0, "failed_cases": ["x"]}\n'
    (p.root / "prompts" / "rejects-empty" / ".eval.jsonl").write_bytes(old)
    with FakeAPI() as api:
        api.default = Reply.text("SCORE=5 REASON=ok")
        assert p.run(env=api.anthropic_env()).code == 0
    data = (p.root / "prompts" / "rejects-empty" / ".eval.jsonl").read_bytes()
    assert data.startswith(old) and data.count(b"\n") == 2


def test_a_history_file_that_cannot_be_written_fails_the_report_in_one_line_and_the_next_run_adds_it(
        tmp_path: Path) -> None:
    p = _project(tmp_path)
    blocker = p.root / "prompts" / "rejects-empty" / ".eval.jsonl"
    blocker.mkdir()
    with FakeAPI() as api:
        api.default = Reply.text("SCORE=5 REASON=ok")
        run = p.run(env=api.anthropic_env(), check_views=False)
        assert run.code != 0 and "Traceback" not in run.out + run.err
        assert "cannot add a row to eva's history" in run.out + run.err
        blocker.rmdir()
        again = p.run(env=api.anthropic_env())
        assert again.code == 0 and again.agent_calls == 0
    assert len(_rows(p.root, "rejects-empty")) == 1


def test_skillmake_report_re_renders_and_adds_no_row(tmp_path: Path) -> None:
    p = _project(tmp_path)
    _config(p, '"prompts"')
    with FakeAPI() as api:
        api.default = Reply.text("SCORE=5 REASON=ok")
        assert p.run(env=api.anthropic_env()).code == 0
    assert p.run("report").code == 0
    assert len(_rows(p.root, "diff-surgeon")) == 1
