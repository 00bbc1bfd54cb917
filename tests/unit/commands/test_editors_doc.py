"""docs/editors.md stays true: its snippets parse, its problem-matcher regex reads real `validate` output."""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
DOC = (REPO / "docs" / "editors.md").read_text()
INVALID = REPO / "tests" / "data" / "invalid"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC, re.DOTALL)


def matcher() -> re.Pattern[str]:
    after = DOC.split("The problem-matcher regex, for any editor:", 1)[1]
    return re.compile(re.search(r"```text\n(.*?)\n```", after, re.DOTALL).group(1))  # type: ignore[union-attr]


def test_json_snippets_parse_and_agree_on_the_regex() -> None:
    parsed = [json.loads(b) for b in blocks("json")]
    tasks = next(p for p in parsed if "tasks" in p)
    assert tasks["tasks"][0]["problemMatcher"]["pattern"]["regexp"] == matcher().pattern
    settings = next(p for p in parsed if "yaml.schemas" in p)
    for target in [*settings["yaml.schemas"], *(s["url"] for s in settings["json.schemas"])]:
        assert (REPO / target).is_file()


def test_modeline_and_schema_key_point_at_the_real_schema() -> None:
    assert "# yaml-language-server: $schema=../schemas/spec.schema.json" in DOC
    assert '"$schema": "../schemas/spec.schema.json"' in DOC
    assert (REPO / "examples" / "../schemas/spec.schema.json").resolve().is_file()


def test_the_regex_reads_every_located_error_of_the_corpus() -> None:
    pattern = matcher()
    seen = 0
    for expected in sorted(INVALID.glob("*.expected")):
        for line in expected.read_text().splitlines():
            if line.startswith("  hint: ") or " error(s) in " in line:
                continue
            m = pattern.match(line)
            assert m, line
            file, row, col, pointer, message = m.groups()
            assert (INVALID / file).is_file()
            assert int(row) >= 1 and int(col) >= 1
            assert pointer.startswith("/") and message
            seen += 1
    assert seen >= 45
