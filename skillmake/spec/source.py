"""Reading YAML and JSON spec files into plain data plus a pointer → line:col map (a Source, sourcemap.py): the
JSON reader, and the YAML reader (yamlread.py) loaded with PyYAML for the first YAML file read — a run whose specs
are all in the parse cache, as a no-op's are, never imports PyYAML (~11 ms)."""

from __future__ import annotations

import json
import re
from typing import Any

from skillmake.core.errors import Location, SpecError
from skillmake.spec.sourcemap import (
    _INT_HINT,
    _INT_LIMIT,
    _INT_TOO_LARGE,
    MAX_DEPTH,
    MAX_VALUES,
    Position,
    Source,
    _LineIndex,
    _too_deep,
    escape,
)

__all__ = ["MAX_DEPTH", "MAX_VALUES", "Position", "Source", "escape", "read_json", "read_source", "read_yaml"]


# --- YAML -------------------------------------------------------------------

def read_yaml(path: str, text: str, *, duplicates_ok: bool = False) -> Source:
    """A YAML file's data and source map (yamlread.py)."""
    from skillmake.spec.yamlread import read_yaml as read

    return read(path, text, duplicates_ok=duplicates_ok)


# --- JSON -------------------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]


class _JsonSyntax(Exception):
    def __init__(self, pos: int, message: str, hint: str = "fix the JSON syntax at that position") -> None:
        self.pos, self.message, self.hint = pos, message, hint


def read_json(path: str, text: str) -> Source:
    src = Source(path=path, data=None)
    lines = _LineIndex(text)
    try:
        value, end = _json_value(text, _skip(text, 0), "", src, lines)
        end = _skip(text, end)
        if end != len(text):
            raise _JsonSyntax(end, "extra data after the JSON value")
    except _JsonSyntax as exc:
        line, col = lines.position(exc.pos)
        raise SpecError(f"not valid JSON: {exc.message}", loc=Location(path=path, line=line, col=col),
                        hint=exc.hint) from None
    src.data = value
    return src


def _skip(text: str, pos: int) -> int:
    m = _WS.match(text, pos)
    return m.end() if m else pos


def _after_member(text: str, pos: int, close: str) -> tuple[bool, int]:
    """After a member of an object or an array (`close` is its `}` or `]`): (True, where the next member starts)
    after a comma, or (False, just past `close`); _JsonSyntax for a trailing comma or anything else."""
    pos = _skip(text, pos)
    if text[pos:pos + 1] == ",":
        pos = _skip(text, pos + 1)
        if text[pos:pos + 1] == close:
            raise _JsonSyntax(pos, f"expected a value after ',', found '{close}' (a trailing comma)",
                              "remove the last comma (JSON allows none)")
        return True, pos
    if text[pos:pos + 1] == close:
        return False, pos + 1
    raise _JsonSyntax(pos, f"expected ',' or '{close}'")


def _json_value(text: str, pos: int, pointer: str, src: Source, lines: _LineIndex,
                depth: int = 0) -> tuple[Any, int]:
    src.positions[pointer] = lines.position(pos)
    if depth > MAX_DEPTH:
        line, col = lines.position(pos)
        raise _too_deep(src.path, line, col, pointer)
    ch = text[pos:pos + 1]
    if ch == "{":
        out: dict[str, Any] = {}
        pos = _skip(text, pos + 1)
        if text[pos:pos + 1] == "}":
            return out, pos + 1
        while True:
            if text[pos:pos + 1] != '"':
                raise _JsonSyntax(pos, "expected a string key")
            key_pos = pos
            key, pos = _string(text, pos)
            child = f"{pointer}/{escape(key)}"
            if key in out:
                first = src.key_positions[child]
                line, col = lines.position(key_pos)
                raise SpecError(f"duplicate key {key!r}", loc=Location(path=src.path, line=line, col=col,
                                pointer=child), hint=f"it is already set at line {first[0]}; keep one of them")
            src.key_positions[child] = lines.position(key_pos)
            pos = _skip(text, pos)
            if text[pos:pos + 1] != ":":
                raise _JsonSyntax(pos, "expected ':' after the key")
            out[key], pos = _json_value(text, _skip(text, pos + 1), child, src, lines, depth + 1)
            more, pos = _after_member(text, pos, "}")
            if not more:
                return out, pos
    if ch == "[":
        items: list[Any] = []
        pos = _skip(text, pos + 1)
        if text[pos:pos + 1] == "]":
            return items, pos + 1
        while True:
            item, pos = _json_value(text, pos, f"{pointer}/{len(items)}", src, lines, depth + 1)
            items.append(item)
            more, pos = _after_member(text, pos, "]")
            if not more:
                return items, pos
    if ch == '"':
        return _string(text, pos)
    for word, value in (("true", True), ("false", False), ("null", None)):
        if text.startswith(word, pos):
            return value, pos + len(word)
    m = _NUMBER.match(text, pos)
    if m:
        num = m.group()
        try:
            number = float(num) if any(c in num for c in ".eE") else int(num)
        except ValueError:  # an integer longer than Python converts (4,300 digits)
            raise _JsonSyntax(pos, "number too large", "write a smaller number") from None
        if type(number) is int and not -_INT_LIMIT < number < _INT_LIMIT:
            raise _JsonSyntax(pos, _INT_TOO_LARGE, _INT_HINT)
        return number, m.end()
    raise _JsonSyntax(pos, "expected a value" if ch else "unexpected end of file")


def _string(text: str, pos: int) -> tuple[str, int]:
    try:
        value, end = _scanstring(text, pos + 1, True)
    except json.JSONDecodeError as exc:
        if exc.msg == "Invalid control character at" and text[exc.pos:exc.pos + 1] in ("\n", ""):
            raise _JsonSyntax(pos, "this string is not closed before the end of its line",
                              'close it with \'"\' (a line break inside a string is written \\n)') from None
        message, hint = _STRING_ERRORS.get(exc.msg, (exc.msg, "fix the JSON syntax at that position"))
        raise _JsonSyntax(exc.pos, message, hint) from None
    lone = _SURROGATE.search(value)
    if lone:  # json pairs \ud83d\ude00 into one character; a half left alone is not text (no UTF-8 can hold it)
        raise _JsonSyntax(pos, f"a lone surrogate \\u{ord(lone.group()):04x} in this string is not a character",
                          "write the character itself, or both halves of its UTF-16 pair (like \\ud83d\\ude00)")
    return value, end


_SURROGATE = re.compile("[\ud800-\udfff]")


# json's own messages end "… at" and expect a position after them; ours carry the position in the location.
_STRING_ERRORS = {
    "Unterminated string starting at": ("a string that starts here is never closed",
                                        'close it with \'"\' (write \\" for a quote inside a string)'),
    "Invalid control character at": ("a control character (like a newline or tab) inside a string",
                                     "write it escaped: \\n for a newline, \\t for a tab"),
    "Invalid \\escape": ("an invalid escape inside a string",
                          "JSON escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX; write \\\\ for a "
                          "backslash"),
    "Invalid \\uXXXX escape": ("an invalid \\u escape inside a string", "write \\u and four hex digits"),
}


def read_source(path: str, text: str | None = None, *, duplicates_ok: bool = False) -> Source:
    """Parse a spec file (YAML, or JSON by extension) with its source map. A UTF-8 byte order mark, as some
    Windows editors write, is accepted in both. `duplicates_ok`: a YAML mapping key given twice keeps its last
    value (as PyYAML does) and is listed in `Source.duplicates`, instead of being an error."""
    if text is None:
        with open(path, "rb") as f:
            raw = f.read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _not_utf8(path, raw, exc) from None
        if "\r" in text:  # newlines as text-mode open() reads them, so line numbers match every editor's
            text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    if path.endswith(".json"):
        return read_json(path, text)
    return read_yaml(path, text, duplicates_ok=duplicates_ok)


def _not_utf8(path: str, raw: bytes, exc: UnicodeDecodeError) -> SpecError:
    """Where the first byte that is not UTF-8 is, by line and column, and what it probably meant."""
    line_start = raw.rfind(b"\n", 0, exc.start) + 1
    line = raw.count(b"\n", 0, exc.start) + 1
    col = len(raw[line_start:exc.start].decode("utf-8", "replace")) + 1
    byte = raw[exc.start]
    guess = bytes([byte]).decode("cp1252", "replace")
    meant = f" ({guess!r} in Latin-1/Windows-1252)" if guess.isprintable() and guess != "\ufffd" else ""
    return SpecError(f"not UTF-8: byte 0x{byte:02X}{meant} cannot start or continue a UTF-8 character",
                     loc=Location(path=path, line=line, col=col),
                     hint="save the file as UTF-8 (your editor's encoding setting, or "
                          "`iconv -f latin1 -t utf-8`)")
