"""Validating spec files: collect every error of every file, render them for people or machines."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillmake.core.errors import Location, SpecError, SpecErrors
from skillmake.spec.config import Config, ConfigErrors, load_config
from skillmake.spec.discovery import Discovery, Head, NoSpecs, read_head, scan, skipped_note
from skillmake.spec.loader import load_spec
from skillmake.spec.model import Spec

if TYPE_CHECKING:
    from skillmake.spec.parsecache import ParseCache

_UNSUPPORTED_HINT = ("reading {fmt} specs is not supported yet (docs/formats.md maps its fields onto a skillmake "
                     "spec); a run of the project skips this file")


@dataclass(slots=True)
class Validation:
    """The outcome of validating some files: the loaded specs and every error."""

    specs: list[Spec] = field(default_factory=list)
    errors: list[SpecError] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    skipped: list[Head] = field(default_factory=list)  # files of the project in other tools' formats, left alone
    heads: dict[str, Head] = field(default_factory=dict)  # each validated file's head (top-level keys, name)
    no_specs: NoSpecs | None = None  # the whole project was asked for and it has no spec: nothing to run
    config: Config | None = None

    @property
    def ok(self) -> bool:
        return not self.errors


def validate_files(paths: list[str] | None, *, root: str, schema_valid: set[str] | None = None,
                   config: Config | None = None, parsed: ParseCache | None = None) -> Validation:
    """Validate `paths` (or every spec of the project at `root`), never raising for bad input.

    Spec names name tasks and report folders, so a name two spec files share is an error at both, also when
    only one of them is validated: it is checked against the names of the project's other specs (read
    cheaply, without validating them). Files in other tools' formats found by the search are skipped
    (`skipped`); named explicitly, they are an error saying what they are.

    `schema_valid`: digests of spec texts known to pass the schema, `parsed`: parses kept by content (see
    spec.load_spec)."""
    root = os.path.abspath(root)
    try:
        config = config or load_config(root)
    except ConfigErrors as exc:
        return Validation(errors=list(exc.errors))
    found: Discovery | None = None
    if not paths:
        found = scan(root, config)
        files = found.files
    else:
        files = list(dict.fromkeys(os.path.abspath(p) for p in paths))
    result = Validation(files=list(files), config=config, skipped=found.skipped if found else [])
    if found is not None and not files:
        result.no_specs = NoSpecs(found)
    for path in files:
        head = found.heads[path] if found else read_head(path)
        result.heads[path] = head
        if head.skipped:
            result.errors.append(_foreign_error(head, root))
            continue
        try:
            result.specs.append(load_spec(path, root=root, schema_valid=schema_valid, default_agent=config.agent,
                                           parsed=parsed))
        except SpecErrors as exc:
            result.errors.extend(exc.errors)
    others = {} if found else _other_heads(root, config, files)
    result.specs, clashes = _unique_names(result, others, root)
    result.errors.extend(clashes)
    return result


def _foreign_error(head: Head, root: str) -> SpecError:
    what = "tasks:" if head.foreign == "caliper" else "defaults:/triggering:"
    return SpecError(f"this is a {head.foreign} spec (top-level {what} and no skillmake `cases:`), not a skillmake one",
                     loc=Location(path=display(head.path, root), line=1, col=1),
                     hint=_UNSUPPORTED_HINT.format(fmt=head.foreign))


def _other_heads(root: str, config: Config, files: list[str]) -> dict[str, Head]:
    """The heads of the project's specs not among `files` (to check names against)."""
    given = {os.path.realpath(f) for f in files}
    found = scan(root, config)
    return {p: h for p, h in found.heads.items() if not h.skipped and os.path.realpath(p) not in given}


def _unique_names(result: Validation, others: dict[str, Head], root: str) -> tuple[list[Spec], list[SpecError]]:
    """Spec names must be unique in a project: every spec file sharing a name gets an error, and none of them runs
    (running one and dropping the other silently would pass a spec that never ran)."""
    names: dict[str, list[str]] = {}
    loaded = {spec.path: spec for spec in result.specs}
    for path, head in result.heads.items():
        if head.skipped or not os.path.lexists(path):  # a mistyped path names no spec: "cannot read" is its error
            continue
        spec = loaded.get(os.path.abspath(path))
        names.setdefault(spec.name if spec else head.name, []).append(path)
    for path, head in others.items():
        names.setdefault(head.name, []).append(path)
    errors: list[SpecError] = []
    clashing: set[str] = set()
    for name, paths in names.items():
        if len(paths) < 2:
            continue
        for path in paths:
            if path in others:
                continue  # not being validated: its own validation reports it
            clashing.add(os.path.abspath(path))
            head = result.heads[path]
            rest = ", ".join(display(p, root) for p in paths if p != path)
            line, col = head.name_at
            errors.append(SpecError(f"spec name {name!r} is also the name of {rest}",
                                    loc=Location(path=display(path, root), line=line, col=col, pointer="/name"),
                                    hint="set a different `name:` in one of the two specs (a spec without "
                                         "`name:` is named after its file)"))
    return [s for s in result.specs if s.path not in clashing], errors


def render_text(result: Validation) -> str:
    lines = [e.render() for e in SpecErrors(result.errors).errors] if result.errors else []
    return "\n".join(lines)


def render_skipped(result: Validation, root: str) -> str | None:
    """The one note line about files in other tools' formats that were left alone (None when there were none)."""
    return skipped_note(result.skipped, root) if result.skipped else None


def render_json(result: Validation) -> list[dict[str, Any]]:
    out = []
    for e in SpecErrors(result.errors).errors if result.errors else []:
        loc = e.loc
        out.append({"file": loc.path if loc else None, "line": loc.line if loc else None,
                    "column": loc.col if loc else None, "pointer": loc.pointer if loc else None,
                    "message": e.message, "hint": e.hint})
    return out


def display(path: str, root: str) -> str:
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel
