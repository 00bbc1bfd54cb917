"""`--apply`: the best description written into the skill's SKILL.md (or command file) — only the frontmatter's
`description:` entry is replaced, every other byte is kept, and the new value is a double-quoted YAML scalar (JSON's
escapes, which YAML reads the same), so any text survives. The result is read back before it is written: the same
frontmatter but for the description, the same body, or nothing is written."""

from __future__ import annotations

import json
import os
import re
import stat

from skillmake.core import atomic
from skillmake.core.errors import SkillmakeError
from skillmake.spec.skillfiles import split_frontmatter

_KEY = re.compile(r"""^(["']?)description\1[ \t]*:""")
_NAME = re.compile(r"""^(["']?)name\1[ \t]*:""")


class ApplyRefused(SkillmakeError):
    """The description could not be replaced without changing something else."""


def quoted(text: str) -> str:
    """`text` as a YAML double-quoted scalar: JSON's string form, with every character YAML would not keep as it
    is (line and paragraph separators, other non-printables) escaped as well."""
    out = json.dumps(text, ensure_ascii=False)
    return "".join(c if c.isprintable() else (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
                   for c in out)


def with_description(text: str, description: str) -> str:
    """`text` (a SKILL.md or command file) with its frontmatter's description set to `description`."""
    value = quoted(description)
    eol = "\r\n" if "\r\n" in text.split("\n", 1)[0] + "\n" else "\n"
    if not text.startswith("---"):
        return f"---{eol}description: {value}{eol}---{eol}{text}"
    lines = text.splitlines(keepends=True)
    close = next((i for i in range(1, len(lines)) if lines[i].startswith("---")), None)
    if close is None:
        raise ApplyRefused("the frontmatter is not closed", hint="end the frontmatter with a '---' line")
    start = next((i for i in range(1, close) if _KEY.match(lines[i])), None)
    if start is None:  # no description yet: after the name, else last
        after = next((i + 1 for i in range(1, close) if _NAME.match(lines[i])), close)
        # a multi-line name value ends at the next line that starts a key
        while after < close and lines[after][:1] in (" ", "\t"):
            after += 1
        return "".join([*lines[:after], f"description: {value}{eol}", *lines[after:]])
    end = start + 1
    while end < close and (not lines[end].strip() or lines[end][:1] in (" ", "\t")):
        end += 1  # a block scalar or a folded plain value continues on indented (or blank) lines
    while end - 1 > start and not lines[end - 1].strip():
        end -= 1  # blank lines before the next key stay where they are
    ending = lines[start][len(lines[start].rstrip("\r\n")):] or eol
    return "".join([*lines[:start], f"description: {value}{ending}", *lines[end:]])


def apply(path: str, description: str) -> bool:
    """Write `description` into the file at `path`; False when it already says exactly that (nothing written).
    ApplyRefused when the rewrite would change anything but the description."""
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    new = with_description(text, description)
    try:
        before, body = split_frontmatter(text)
    except SkillmakeError:
        raise ApplyRefused(f"cannot read the frontmatter of {path}",
                           hint="fix it, then run again with --apply (or copy best_description by hand)") from None
    after, new_body = split_frontmatter(new)
    rest = {k: v for k, v in after.items() if k != "description"}
    if (after.get("description") != description or rest != {k: v for k, v in before.items() if k != "description"}
            or (new_body != body and text.startswith("---"))):
        raise ApplyRefused(f"cannot replace the description in {path} without changing the rest of its frontmatter",
                           hint="copy best_description into it by hand")
    if new == text:
        return False
    mode = stat.S_IMODE(os.stat(path).st_mode)
    atomic.write_bytes(path, new.encode("utf-8"), mode=mode)
    return True
