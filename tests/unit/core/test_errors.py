"""One exit-code table, in errors.py: `--help` prints it and the README's section is generated from it."""

from __future__ import annotations

import re
from pathlib import Path

from skillmake.commands import cli
from skillmake.core.errors import EXIT_CODES, EXIT_NO_SPECS, exit_code_lines, exit_code_table

README = Path(__file__).resolve().parents[3] / "README.md"


def test_codes_are_numbered_once_and_no_spec_found_is_pytests_five() -> None:
    codes = [e.code for e in EXIT_CODES]
    assert codes == sorted(set(codes)) == [0, 1, 2, 3, 4, 5, 6]
    assert EXIT_NO_SPECS == 5 and EXIT_CODES[5].name == "nothing to run"


def test_help_shows_the_table() -> None:
    assert exit_code_lines() in cli.usage()
    assert "  5  nothing to run" in cli.usage()


def test_readme_exit_codes_section_is_the_generated_table() -> None:
    """The README's "## Exit codes" section holds exactly exit_code_table() (paste it there when it changes)."""
    text = README.read_text(encoding="utf-8")
    section = re.search(r"^## Exit codes\n\n(.*?)(?=\n\n|\n## |\Z)", text, re.S | re.M)
    assert section is not None, "README.md has no '## Exit codes' section"
    assert section.group(1).strip() == exit_code_table()
