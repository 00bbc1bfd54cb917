"""clauditor 0.1.3's own loader (EvalSpec.from_file) and skillmake's clauditor adapter accept and refuse the same
files, over a corpus of specs beside one SKILL.md (tests/data/differential/clauditor/specs): what clauditor accepts
loads (with a warning where it is surely a mistake), what it refuses is refused with a located error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillmake.core.errors import SpecErrors
from skillmake.spec.loader import load_spec
from tests.differential.seedtools import ask

CORPUS = Path(__file__).resolve().parents[1] / "data" / "differential" / "clauditor" / "specs"
SPECS = sorted(CORPUS.glob("*.eval.json"))
# Remaining differences, each listed in docs/formats.md with its reason.
KNOWN = {
    "empty.eval.json": "`{}` names no format: skillmake reads it as a native spec (missing skill, agent, cases)",
}
_LOCATED = re.compile(r"^[^:\s]+\.eval\.json:\d+:\d+ (/\S*)?:? ?\S")


def skillmake_verdict(path: Path) -> tuple[bool, str]:
    try:
        spec = load_spec(str(path), root=str(CORPUS))
    except SpecErrors as exc:
        return False, "\n".join(e.render() for e in exc.errors)
    return True, "\n".join(spec.notes)


def test_the_corpus_is_big_enough() -> None:
    assert len(SPECS) >= 40


def test_clauditor_and_skillmake_accept_and_refuse_the_same_specs(capsys: pytest.CaptureFixture[str]) -> None:
    theirs = ask("clauditor_driver.py", {"op": "load", "paths": [str(p) for p in SPECS]}, cwd=CORPUS)
    differ, accepted = [], 0
    for path, their in zip(SPECS, theirs, strict=True):
        ours, said = skillmake_verdict(path)
        accepted += their["accepted"]
        if ours != their["accepted"] and path.name not in KNOWN:
            differ.append(f"{path.name}: clauditor {'accepts' if their['accepted'] else 'refuses'} "
                          f"({their['error'][:120]}); skillmake {'accepts' if ours else 'refuses'}: {said[:300]}")
        elif not ours:  # a refusal is located: file:line:col /pointer: message
            first = said.splitlines()[0]
            assert _LOCATED.match(first) or first.startswith(path.name), first
    with capsys.disabled():
        print(f"\nclauditor loader accept/refuse: {len(SPECS) - len(differ) - len(KNOWN)}/{len(SPECS)} agree "
              f"({accepted} accepted by clauditor, {len(SPECS) - accepted} refused)")
    assert not differ, "\n".join(differ)
    for name in KNOWN:  # a known difference that went away is removed from the list (and from docs/formats.md)
        assert skillmake_verdict(CORPUS / name)[0] != next(t["accepted"] for p, t in zip(SPECS, theirs, strict=True)
                                                           if p.name == name), name


@pytest.mark.parametrize(("name", "warning"), [
    ("unknown_top_key_typo", "did you mean 'grading_criteria'"),
    ("min_pass_rate_1_5", "outside 0..1"),
    ("n_runs_zero", "/variance/n_runs is 0"),
    ("min_above_max", "no output can pass both"),
    ("regex_bad", "not a valid regular expression"),
    ("unknown_top_key", "'variants' is not a clauditor key"),
])
def test_what_clauditor_accepts_but_is_surely_a_mistake_is_a_warning(name: str, warning: str) -> None:
    ok, notes = skillmake_verdict(CORPUS / f"{name}.eval.json")
    assert ok and warning in notes, notes
