"""Code and schemas a spec carries inline or names (python checks, json_schema checks): their errors,
located at the line a person fixes, not at the value's first line."""

from __future__ import annotations

import os
from typing import Any, Protocol

from skillmake.core.errors import Location, SpecError
from skillmake.spec.source import Source, escape, read_json
from skillmake.spec.wellformed import surely_valid


class Rules(Protocol):
    """What these checks need of the spec's rules (spec/rules.py's Rules, which calls them): where the spec is,
    how to show a path, and where a pointer is in the file. A protocol, so this module does not import rules."""

    src: Source
    path: str
    shown: str

    def clean(self, pointer: str) -> bool: ...

    def shown_path(self, path: str) -> str: ...

    def spec_relative(self, pointer: str, rel: str, what: str) -> str | None: ...

    def locate(self, pointer: str) -> Location: ...


def json_schema_problems(rules: Rules, pointer: str, raw: dict[str, Any]) -> list[SpecError]:
    """Why a json_schema check's schema (inline or schema_file) is not a valid JSON Schema: at the keyword."""
    if "schema_file" in raw:
        where = f"{pointer}/schema_file"
        if not isinstance(raw["schema_file"], str) or not rules.clean(where):
            return []
        resolved = rules.spec_relative(where, raw["schema_file"], "schema file")
        if resolved is None:  # spec_relative recorded why
            return []
        return _schema_file_problems(rules, where, raw["schema_file"], resolved)
    where = f"{pointer}/schema"
    schema = raw.get("schema")
    if not isinstance(schema, dict) or not rules.clean(where):
        return []
    problem = _schema_problem(schema)
    if problem is None:
        return []
    path, message, keyword = problem
    inner = where + "".join(f"/{escape(p)}" for p in path)
    return [SpecError(f"not a valid JSON Schema: {message}", loc=rules.src.locate(inner, key=bool(path)),
                      hint=_hint(keyword, "here"))]


def _schema_file_problems(rules: Rules, where: str, rel: str, resolved: str) -> list[SpecError]:
    shown = rules.shown_path(resolved)
    try:
        src = _read_as_json(resolved)
    except SpecError as exc:
        at = f"{shown}:{exc.loc.line}:{exc.loc.col}" if exc.loc else shown
        why = exc.message.removeprefix("not valid JSON: ")
        return [SpecError(f"schema file {rel!r} is not valid JSON: {why} (at {at})",
                          loc=rules.locate(where), hint=exc.hint or "fix the file")]
    except UnicodeDecodeError:
        return [SpecError(f"schema file {rel!r} is not UTF-8 text", loc=rules.locate(where),
                          hint="save it as UTF-8")]
    except OSError as exc:
        return [SpecError(f"cannot read schema file {rel!r}: {exc.strerror}", loc=rules.locate(where),
                          hint="check the path and its permissions")]
    if not isinstance(src.data, dict):
        return []
    problem = _schema_problem(src.data)
    if problem is None:
        return []
    path, message, keyword = problem
    inner = "".join(f"/{escape(p)}" for p in path)
    loc = src.locate(inner, key=bool(path))
    return [SpecError(f"schema file {rel!r} is not a valid JSON Schema: {message} "
                      f"(at {shown}:{loc.line}:{loc.col} {inner or '/'})", loc=rules.locate(where),
                      hint=_hint(keyword, f"in {shown}"))]


def _read_as_json(path: str) -> Source:
    with open(path, encoding="utf-8-sig") as f:
        return read_json(path, f.read())


_NONE = object()
DRAFTS = ("https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema",
          "http://json-schema.org/draft-07/schema", "http://json-schema.org/draft-06/schema",
          "http://json-schema.org/draft-04/schema", "http://json-schema.org/draft-03/schema")


def _schema_problem(schema: dict[str, Any]) -> tuple[list[Any], str, str | None] | None:
    """(path inside the schema, message, keyword) of the schema's first problem against its metaschema."""
    if surely_valid(schema):  # the common schema, decided without importing jsonschema (~70 ms of validate FILE)
        return None
    from jsonschema import Draft202012Validator, exceptions, validators

    declared = schema.get("$schema", _NONE)
    known = validators.validator_for(schema, default=None) if isinstance(declared, str) else None
    if declared is not _NONE and known is None:  # jsonschema would quietly read it as 2020-12: say so instead
        return ["$schema"], f"$schema {declared!r} is not a JSON Schema draft skillmake knows", "$schema"
    cls = known or Draft202012Validator
    error = exceptions.best_match(cls(cls.META_SCHEMA).iter_errors(schema))
    if error is None:
        return None
    path = list(error.absolute_path)
    keyword = next((p for p in reversed(path) if isinstance(p, str)), None)
    return path, error.message, keyword


def _hint(keyword: str | None, where: str) -> str:
    if keyword == "$schema":
        return f"write one of the drafts {', '.join(DRAFTS)} (2020-12 when there is no $schema), or remove it"
    return f"fix {keyword!r} {where}" if keyword else f"fix the schema {where}".removesuffix(" here")


def python_problems(rules: Rules, pointer: str, raw: dict[str, Any]) -> list[SpecError]:
    if "script" in raw:
        where = f"{pointer}/script"
        if isinstance(raw["script"], str) and rules.clean(where):
            resolved = rules.spec_relative(where, raw["script"], "script")
            if resolved is not None and not os.path.isfile(resolved):  # a folder: the run could only crash on it
                return [SpecError(f"script {raw['script']!r} is not a file", loc=rules.locate(where),
                                  hint="name the Python file to run (relative to the spec's folder), not a folder")]
        return []
    code = raw.get("code")
    if not isinstance(code, str) or not rules.clean(f"{pointer}/code"):
        return []
    try:
        compile(code, f"{rules.shown}{pointer}", "exec")
    except SyntaxError as exc:
        line, col = _code_position(rules, f"{pointer}/code", exc.lineno or 1, exc.offset or 1)
        return [SpecError(f"Python syntax error in code: {exc.msg} (code line {exc.lineno})",
                          loc=Location(path=rules.shown, line=line, col=col, pointer=f"{pointer}/code"),
                          hint="fix the inline Python")]
    return []


def _code_position(rules: Rules, pointer: str, code_line: int, code_col: int) -> tuple[int, int]:
    """Where line `code_line` of a YAML block scalar (`code: |`) is in the file; else the value's start."""
    at = rules.src.locate(pointer)  # through locate: a translated seed spec places it in the seed file
    line, col = at.line, at.col
    try:
        with open(rules.path, encoding="utf-8-sig") as f:
            # Lines as the source map counts them (source.py): '\n' only, not splitlines()'s U+2028, NEL, …
            lines = f.read().replace("\r\n", "\n").replace("\r", "\n").split("\n")
        indicator = lines[line - 1][col - 1:].lstrip()[:1]
    except (OSError, IndexError, UnicodeDecodeError):
        return line, col
    if indicator not in ("|", ">") or line + code_line > len(lines):
        return line, col
    text = lines[line - 1 + code_line]
    indent = len(text) - len(text.lstrip())
    return line + code_line, indent + code_col

