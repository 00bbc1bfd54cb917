"""--apply: only the frontmatter's description changes, whatever form it was written in; every other byte stays,
and the new value reads back as exactly the text given."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillmake.spec.skillfiles import split_frontmatter
from skillmake.triggers.apply import ApplyRefused, apply, quoted, with_description

NEW = "Use this skill for kids' activities: parks, museums & \"fun\" #outings"


@pytest.mark.parametrize("written", [
    "description: Find activities for kids\n",
    "description: 'Find activities: for kids'\n",
    'description: "Find activities\\nfor kids"\n',
    "description: |\n  Find activities\n  for kids\n",
    "description: >-\n  Find activities\n\n  for kids\n",
    "description: Find activities\n  for kids, folded\n",
    "description:   Find activities   # a comment\n",
])
def test_every_form_of_description_is_replaced_and_nothing_else(written: str) -> None:
    head = "---\nname: kids\n"
    tail = "license: MIT\nmetadata:\n  owner: me\n---\n# Kids\n\nBody, with --- inside.\n"
    text = head + written + tail
    new = with_description(text, NEW)
    assert new == head + f"description: {quoted(NEW)}\n" + tail
    meta, body = split_frontmatter(new)
    assert meta == {"name": "kids", "description": NEW, "license": "MIT", "metadata": {"owner": "me"}}
    assert body == "# Kids\n\nBody, with --- inside.\n"


def test_blank_lines_after_the_value_and_crlf_are_kept() -> None:
    text = "---\r\nname: kids\r\ndescription: |\r\n  old\r\n\r\nlicense: MIT\r\n---\r\nBody\r\n"
    assert with_description(text, "new") == "---\r\nname: kids\r\ndescription: \"new\"\r\n\r\nlicense: MIT\r\n" \
                                            "---\r\nBody\r\n"


def test_a_missing_description_goes_after_the_name_and_a_bare_command_file_gets_frontmatter() -> None:
    assert with_description("---\nname: kids\nlicense: MIT\n---\nBody\n", "new") == \
        '---\nname: kids\ndescription: "new"\nlicense: MIT\n---\nBody\n'
    bare = "# Review the diff\nSteps…\n"
    assert with_description(bare, "new") == '---\ndescription: "new"\n---\n' + bare


@pytest.mark.parametrize("text", ["two\nlines", 'quotes " and \\ back', "tab\there", "sep\u2028arator", "emoji 🎈",
                                  "nel\u0085x", "del\x7fx", "   padded  ", "key: value # not a comment", "- a list?"])
def test_any_text_survives_the_round_trip(text: str) -> None:
    meta, _ = split_frontmatter(with_description("---\nname: k\ndescription: old\n---\n", text))
    assert meta["description"] == text


def test_apply_writes_atomically_keeps_the_mode_and_says_when_nothing_changed(tmp_path: Path) -> None:
    md = tmp_path / "SKILL.md"
    md.write_text("---\nname: kids\ndescription: old\n---\nBody\n")
    md.chmod(0o640)
    assert apply(str(md), "new text") is True
    assert md.read_text() == '---\nname: kids\ndescription: "new text"\n---\nBody\n'
    assert os.stat(md).st_mode & 0o777 == 0o640
    assert apply(str(md), "new text") is False


def test_an_unclosed_frontmatter_is_refused_and_left_alone(tmp_path: Path) -> None:
    md = tmp_path / "SKILL.md"
    md.write_text("---\nname: kids\ndescription: old\n")
    with pytest.raises(ApplyRefused, match="not closed"):
        apply(str(md), "new")
    assert md.read_text() == "---\nname: kids\ndescription: old\n"


def test_a_rewrite_that_would_change_another_key_is_refused(tmp_path: Path) -> None:
    md = tmp_path / "SKILL.md"
    # `description` written twice: YAML keeps the last, the rewrite replaces the first: refused, not guessed.
    md.write_text("---\ndescription: a\nname: kids\ndescription: b\n---\nBody\n")
    with pytest.raises(ApplyRefused, match="copy best_description"):
        apply(str(md), "new")
