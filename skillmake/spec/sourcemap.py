"""A parsed spec file as data plus where each JSON pointer's value starts (Source), and what the JSON and YAML
readers share: line:column from a character offset, and the limits a file must stay within."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from skillmake.core.errors import Location, SpecError

Position = tuple[int, int]  # 1-based line, column (yamlsyntax.py has the same alias: it cannot import this one)


@dataclass(slots=True)
class Source:
    """A parsed file: its data, and where each JSON pointer's value starts."""

    path: str
    data: Any
    positions: dict[str, Position] = field(default_factory=dict)
    key_positions: dict[str, Position] = field(default_factory=dict)
    # (key, line, line of its first occurrence) of each duplicate mapping key, when read with duplicates_ok
    duplicates: list[tuple[str, int, int]] = field(default_factory=list)

    def locate(self, pointer: str, *, key: bool = False) -> Location:
        """The location of `pointer`, or of its nearest ancestor that has one."""
        table = self.key_positions if key and pointer in self.key_positions else self.positions
        probe = pointer
        while probe not in table and probe:
            probe = probe.rsplit("/", 1)[0]
            table = self.positions
        line, col = table.get(probe, (1, 1))
        return Location(path=self.path, line=line, col=col, pointer=pointer)


def escape(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


# Integers are hashed into keys (orjson: 64 bits at most) and compared with the schemas' maxima; one past 64 bits
# is never a real setting and would crash the run that hashes it.
_INT_LIMIT = 2**63
_INT_TOO_LARGE = "number too large: more than 64 bits"
_INT_HINT = "write a smaller number (every integer in a spec fits in 64 bits; see docs/paths.md, Numbers)"

# Limits that keep a hostile or broken file from crashing or hanging `validate`: nesting deeper than any spec
# needs, and YAML aliases expanding past any real spec's size ("billion laughs").
MAX_DEPTH = 100
MAX_VALUES = 250_000


def _too_deep(path: str, line: int = 1, col: int = 1, pointer: str = "") -> SpecError:
    return SpecError(f"nested more than {MAX_DEPTH} levels deep", loc=Location(path=path, line=line, col=col,
                     pointer=pointer), hint="flatten the structure; a spec never needs this depth")


class _LineIndex:
    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> Position:
        import bisect
        i = bisect.bisect_right(self.starts, offset) - 1
        return i + 1, offset - self.starts[i] + 1
