"""caliper 0.1.0's own spec loader (in its venv) and skillmake's caliper adapter accept and refuse the same files,
over a corpus of caliper specs (tests/data/differential/caliper/loader/): what caliper accepts and skillmake warns
about, what both refuse, and the few files where they still differ, each for a reason docs/formats.md gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillmake.core.errors import SpecErrors
from skillmake.spec.loader import load_spec
from tests.differential.seedtools import ask

CORPUS = Path(__file__).resolve().parents[1] / "data" / "differential" / "caliper" / "loader"
SPECS = sorted(CORPUS.glob("*.eval.yaml"))
# caliper's loader accepts these and skillmake refuses them (docs/formats.md, "caliper: what still differs").
DIFFERENT = {
    "prompt-empty": "an empty prompt: caliper sends it and every attempt fails",
    "expect-blank": "a blank expect: caliper asks its judge about whitespace",
    "assert-blank": "a blank assert: caliper runs an empty script, which always passes",
    "skill-path-missing": "a skill file that does not exist: caliper's run crashes on it",
    "assert-script-missing": "an assert script that does not exist: every caliper attempt fails",
    "forbidden-files-bad-regex": "a forbidden_files pattern that is no regex: caliper's run crashes on it",
    "assert-syntax-error": "inline assert code that is no Python: every caliper attempt fails",
}


def skillmake_accepts(path: Path) -> tuple[bool, str]:
    try:
        load_spec(str(path), root=str(CORPUS))
    except SpecErrors as exc:
        return False, exc.errors[0].render().splitlines()[0]
    return True, ""


@pytest.fixture(scope="module")
def caliper_verdicts() -> dict[str, tuple[bool, str]]:
    answers = ask("caliper_driver.py", {"op": "load", "paths": [str(p) for p in SPECS]}, cwd=CORPUS)
    return {p.name.removesuffix(".eval.yaml"): (a["accepted"], a["error"]) for p, a in zip(SPECS, answers, strict=True)}


def test_the_corpus_is_large_and_has_both_kinds(caliper_verdicts: dict[str, tuple[bool, str]]) -> None:
    accepted = [n for n, (ok, _) in caliper_verdicts.items() if ok]
    assert len(SPECS) >= 40 and len(accepted) >= 20 and len(SPECS) - len(accepted) >= 20
    assert set(DIFFERENT) <= set(caliper_verdicts)


@pytest.mark.parametrize("path", SPECS, ids=[p.name.removesuffix(".eval.yaml") for p in SPECS])
def test_skillmake_accepts_what_caliper_accepts(path: Path, caliper_verdicts: dict[str, tuple[bool, str]]) -> None:
    name = path.name.removesuffix(".eval.yaml")
    theirs, why = caliper_verdicts[name]
    ours, error = skillmake_accepts(path)
    if name in DIFFERENT:  # still different, for the reason given (a stale entry fails here)
        assert (theirs, ours) == (True, False), f"{name}: caliper {theirs} ({why}), skillmake {ours} ({error})"
    else:
        assert ours == theirs, f"{name}: caliper {'accepts' if theirs else 'refuses: ' + why}, skillmake " \
                               f"{'accepts' if ours else 'refuses: ' + error}"


def test_agreement_count(caliper_verdicts: dict[str, tuple[bool, str]]) -> None:
    same = sum(skillmake_accepts(p)[0] == caliper_verdicts[p.name.removesuffix(".eval.yaml")][0] for p in SPECS)
    print(f"caliper loader agreement: {same}/{len(SPECS)}")
    assert same == len(SPECS) - len(DIFFERENT)
