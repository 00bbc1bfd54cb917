"""clauditor 0.1.3's own assertions (run_assertions, in its venv) and skillmake's reading of a clauditor spec (the
adapter's translation, run by skillmake's check functions) give the same verdict on every output of a corpus: every
assertion type, every registered format, and the edge cases where the two once counted differently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillmake.run.checks import CheckContext, run_check
from skillmake.spec.adapters.clauditor_assertions import clauditor_name, native_check
from skillmake.spec.formats import CLAUDITOR_FORMATS
from skillmake.spec.loader import load_spec
from skillmake.spec.model import Check
from tests.differential.seedtools import ask

DATA = Path(__file__).resolve().parents[1] / "data" / "differential" / "clauditor"
OUTPUTS: list[str] = json.loads((DATA / "outputs.json").read_text())["outputs"]
ASSERTIONS: list[dict[str, Any]] = json.loads((DATA / "assertions.json").read_text())["assertions"]
# urls_reachable asks the network: only outputs whose URLs are loopback or private literals (no DNS, no request out).
NO_NETWORK = ["no links here", "http://127.0.0.1:9/x and http://10.0.0.1/y", ""]


def _pairs() -> list[tuple[str, dict[str, Any]]]:
    pairs = []
    for a in ASSERTIONS:
        texts = NO_NETWORK if a["type"] == "urls_reachable" else OUTPUTS
        pairs.extend((text, a) for text in texts)
    return pairs


def skillmake_verdict(output: str, assertion: dict[str, Any]) -> bool:
    raw = native_check(assertion)
    check = Check(type=raw["type"], index=0, id=raw.get("id"), name=raw.get("name"), file=None,
                  params={k: v for k, v in raw.items() if k not in ("type", "id", "name", "file")}, raw=raw)
    result = run_check(check, CheckContext(output=output, files={}, workspace=None, spec_folder="."))
    return bool(result["passed"])


def test_every_type_and_format_is_in_the_corpus() -> None:
    types = {a["type"] for a in ASSERTIONS}
    assert types == {"contains", "not_contains", "regex", "min_count", "min_length", "max_length", "has_urls",
                     "has_entries", "urls_reachable", "has_format"}
    assert {a["format"] for a in ASSERTIONS if a["type"] == "has_format"} == set(CLAUDITOR_FORMATS)
    assert ask("clauditor_driver.py", {"op": "formats"}) == sorted(CLAUDITOR_FORMATS)


def test_clauditor_and_skillmake_give_the_same_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    pairs = _pairs()
    theirs = ask("clauditor_driver.py", {"op": "assert", "items": [{"output": o, "assertion": a} for o, a in pairs]})
    differ = []
    for (output, assertion), their in zip(pairs, theirs, strict=True):
        # clauditor raises on a bad regex (its run crashes, the skill does not pass): skillmake's check fails.
        expected = bool(their["passed"])
        if skillmake_verdict(output, assertion) != expected:
            differ.append(f"{assertion} on {output[:50]!r}: clauditor {their['passed']} ({their['message']})")
        if their["name"] and their["name"] != clauditor_name(assertion):  # assertions.json names results so
            differ.append(f"{assertion}: clauditor names it {their['name']!r}, skillmake {clauditor_name(assertion)!r}")
    with capsys.disabled():
        print(f"\nclauditor assertion verdicts: {len(pairs) - len(differ)}/{len(pairs)} agree")
    assert not differ, "\n".join(differ[:20])


@pytest.mark.parametrize(("output", "assertion", "clauditor"), [
    # The four findings of issue 19 §2, each as clauditor 0.1.3 counts.
    ("1. a\n2. b\n**3. c**", {"type": "has_entries", "count": 2}, False),  # only `**N. ` entries count
    ("x\n- a\n- b", {"type": "min_count", "pattern": "^- ", "count": 1}, False),  # no multiline
    ("see https://example.com/menu and https://b.org/x", {"type": "has_format", "format": "domain", "count": 2}, True),
    ("https://a.io https://a.io", {"type": "has_urls", "count": 2}, True),  # every occurrence
])
def test_the_findings_count_as_clauditor(output: str, assertion: dict[str, Any], clauditor: bool) -> None:
    assert skillmake_verdict(output, {**assertion, "id": "x"}) is clauditor
    assert ask("clauditor_driver.py", {"op": "assert", "items": [{"output": output, "assertion": assertion}]}
               )[0]["passed"] is clauditor


def test_the_whole_corpus_is_a_valid_clauditor_spec_for_skillmake(tmp_path: Path) -> None:
    """Every translated assertion (bad regex and zero counts included) passes skillmake's native schema and rules."""
    (tmp_path / "SKILL.md").write_text("---\nname: corpus\ndescription: d\n---\nbody\n")
    (tmp_path / "SKILL.eval.json").write_text(json.dumps({"skill_name": "corpus", "harness": "claude-code",
                                                           "assertions": ASSERTIONS}))
    spec = load_spec(str(tmp_path / "SKILL.eval.json"), root=str(tmp_path))
    assert len(spec.cases[0].checks) == len(ASSERTIONS)
