"""Other tools' eval formats (clauditor, skill-creator, caliper, eva), read unchanged: each adapter translates a
seed file into a native spec, with a map back to the seed's own pointers so every error is located in the seed
file, at its own line:col, under its own field names. Keys are computed from the translation, so a seed spec and
its native twin share trials.

Layer: spec (below execution). An adapter imports nothing above spec.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from skillmake.core.errors import Location
from skillmake.spec.source import Source

# format → the module that reads it (imported only when a file in that format is loaded)
MODULES: Mapping[str, str] = {
    "clauditor": "skillmake.spec.adapters.clauditor",
    "skill-creator": "skillmake.spec.adapters.skill_creator",
    "caliper": "skillmake.spec.adapters.caliper",
    "eva": "skillmake.spec.adapters.eva",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Translation:
    """A seed file as a native spec: `data` is what schemas/spec.schema.json accepts; `origin` maps a native JSON
    pointer to the seed pointer it came from (a pointer missing from it falls back to its nearest mapped
    ancestor, then to the seed's root); `notes` name seed fields with no native twin, one line each."""

    data: dict[str, Any]
    origin: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # The agent in `data` is the format's own default (clauditor's `harness: auto`), not one the file chose: the
    # project's agent (`[tool.skillmake] agent`), when it names a kind, runs the spec instead.
    agent_is_default: bool = False
    # The seed has no case at all and its tool accepts that (caliper's `tasks: []`): valid, with nothing to run.
    empty: bool = False

    def seed_pointer(self, pointer: str) -> str:
        probe, rest = pointer, ""
        while probe not in self.origin and probe:
            head, _, tail = probe.rpartition("/")
            rest = f"/{tail}{rest}"
            probe = head
        base = self.origin.get(probe, "")
        # Below a mapped container the seed has the same shape (a list of checks, a case's files): keep the tail.
        return base + rest if probe else base


class Adapter(Protocol):
    """One seed format."""

    format: str
    schema: str  # its own JSON Schema in schemas/ (draft-07), checked before translating: seed names in errors

    def translate(self, src: Source, *, path: str, root: str) -> Translation:
        """The native spec of the seed file `path` (already schema-valid); raise SpecErrors (located with `src`)
        for what the seed's schema cannot say."""
        ...


def adapter(fmt: str) -> Adapter:
    module = importlib.import_module(MODULES[fmt])
    found: Adapter = module.ADAPTER
    return found


def supported(fmt: str | None) -> bool:
    return fmt is not None and fmt in MODULES and importlib.util.find_spec(MODULES[fmt]) is not None


@dataclass(slots=True)
class TranslatedSource(Source):
    """A translated spec, located in its seed file: a native pointer's place is its seed pointer's place."""

    seed: Source | None = None
    translation: Translation | None = None

    def locate(self, pointer: str, *, key: bool = False) -> Location:
        assert self.seed is not None and self.translation is not None
        seed_at = self.seed.locate(self.translation.seed_pointer(pointer), key=key)
        # The native pointer stays: the rules compare it with the schema errors' pointers. load_spec shows the
        # seed's pointer (seed_pointer) when it reports.
        return Location(path=self.path, line=seed_at.line, col=seed_at.col, pointer=pointer)
