"""Reading YAML and JSON spec files into plain data plus a pointer → line:col map."""

from __future__ import annotations

import gc
import json
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from skillmake.core.errors import Location, SpecError
from skillmake.spec.yamlsyntax import explain as _yaml_syntax

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


# --- YAML -------------------------------------------------------------------

class _Resolver(yaml.resolver.Resolver):
    """YAML 1.2-like scalars: only true/false are booleans; dates stay strings."""


_Resolver.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers
            if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
_Resolver.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))

# First characters some implicit resolver (int, float, bool, null, …) looks at; any other plain scalar is a string.
_RESOLVED_FIRSTS = frozenset(k for k, v in _Resolver.yaml_implicit_resolvers.items() if k and v)
_STR = "tag:yaml.org,2002:str"


def _resolve(self: Any, kind: Any, value: Any, implicit: Any) -> Any:
    # The common case decided without PyYAML's generic lookup: ~0.3 s less per 100,000 scalars of a big spec.
    if kind is yaml.ScalarNode and implicit[0] and value and value[0] not in _RESOLVED_FIRSTS:
        return _STR
    return _Resolver.resolve(self, kind, value, implicit)


_CParser: Any = getattr(yaml, "CParser", None) or getattr(getattr(yaml, "cyaml", None), "CParser", None)

if _CParser is not None:
    class _Composer(_CParser, _Resolver):
        """libyaml's parser and composer, with our scalar resolution."""

        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            _Resolver.__init__(self)

        resolve = _resolve
else:  # pragma: no cover - pure-Python PyYAML
    class _Composer(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser,  # type: ignore[no-redef]
                    yaml.composer.Composer, _Resolver):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)
            _Resolver.__init__(self)


_scalar = yaml.constructor.SafeConstructor()
_COLLECTION_TAGS = frozenset(("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"))
_YAML_TAG = "tag:yaml.org,2002:"
_PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("int", "float", "bool", "null"))


_KEY_TAGS = _PLAIN_TAGS | {"tag:yaml.org,2002:str"}


def read_yaml(path: str, text: str, *, duplicates_ok: bool = False) -> Source:
    if text.count("[") + text.count("{") > _FLOW_GUARD:
        _check_flow_depth(path, text)
    # The cyclic GC, triggered again and again by the nodes a big spec allocates, makes composing it quadratic
    # (a 6 MB spec: 12 s instead of 3 s); nodes form no cycles, so it is off while they are made.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _read_yaml(path, text, duplicates_ok=duplicates_ok)
    finally:
        if collecting:
            gc.enable()


def _read_yaml(path: str, text: str, *, duplicates_ok: bool = False) -> Source:
    try:
        loader = _Composer(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        if _BREAKS.search(text):  # libyaml's marks (read-only) replaced by ones that count lines as an editor does
            at = _Marks(text).position
            for name in ("problem_mark", "context_mark"):
                mark = getattr(exc, name, None)
                if mark is not None:
                    line, col = at(mark)
                    setattr(exc, name, yaml.error.Mark(mark.name, mark.index, line - 1, col - 1, None, 0))
        raise _yaml_syntax(path, text, exc) from None
    except yaml.reader.ReaderError as exc:
        line, col = _LineIndex(text).position(exc.position)
        char = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise SpecError(f"not valid YAML: control character U+{char:04X} is not allowed",
                        loc=Location(path=path, line=line, col=col),
                        hint="remove it (YAML holds printable text only)") from None
    except yaml.YAMLError as exc:
        raise SpecError(f"not valid YAML: {exc}", loc=Location(path=path, line=1, col=1),
                        hint="fix the YAML syntax") from None
    except RecursionError:
        raise _too_deep(path) from None
    src = Source(path=path, data=None)
    src.data = None if node is None else _YamlBuilder(src, text, duplicates_ok=duplicates_ok).build(node, "", 0)
    return src


# Line breaks to YAML 1.1 (and so to libyaml's marks) besides '\n': NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR. An
# editor shows none of them as a new line, so a mark's line would run ahead of the file's by one for each.
_BREAKS = re.compile("[\x85\u2028\u2029]")


class _Marks:
    """A libyaml mark's line and column as an editor counts them: from its character index, '\n' ending lines."""

    def __init__(self, text: str) -> None:
        self.lines = _LineIndex(text)

    def position(self, mark: Any) -> Position:
        return self.lines.position(mark.index)


def _plain_position(mark: Any) -> Position:
    return mark.line + 1, mark.column + 1


# Integers are hashed into keys (orjson: 64 bits at most) and compared with the schemas' maxima; one past 64 bits
# is never a real setting and would crash the run that hashes it.
_INT_LIMIT = 2**63
_INT_TOO_LARGE = "number too large: more than 64 bits"
_INT_HINT = "write a smaller number (every integer in a spec fits in 64 bits; see docs/paths.md, Numbers)"

# Limits that keep a hostile or broken file from crashing or hanging `validate`: nesting deeper than any spec
# needs, and YAML aliases expanding past any real spec's size ("billion laughs").
MAX_DEPTH = 100
MAX_VALUES = 250_000


# libyaml composes recursively in C and overflows the C stack (a segfault) somewhere past ~20,000 nested
# flow collections, before our own depth check can run: refuse such nesting from the text first.
_FLOW_GUARD = 1_000


def _check_flow_depth(path: str, text: str) -> None:
    # Raw bracket depth, quotes not parsed: it can only overcount (1,000 unclosed '[' inside strings), never
    # be fooled into undercounting by a stray quote. A regex visits the brackets only (a big spec is mostly text).
    depth = 0
    for m in _BRACKETS.finditer(text):
        if m.group() in "[{":
            depth += 1
            if depth > _FLOW_GUARD:
                line, col = _LineIndex(text).position(m.start())
                raise _too_deep(path, line, col)
        else:
            depth -= 1


_BRACKETS = re.compile(r"[\[\]{}]")


def _too_deep(path: str, line: int = 1, col: int = 1, pointer: str = "") -> SpecError:
    return SpecError(f"nested more than {MAX_DEPTH} levels deep", loc=Location(path=path, line=line, col=col,
                     pointer=pointer), hint="flatten the structure; a spec never needs this depth")


class _YamlBuilder:
    """Composed YAML nodes → plain data, recording where each value and key starts."""

    def __init__(self, src: Source, text: str, *, duplicates_ok: bool = False) -> None:
        self.src = src
        self.duplicates_ok = duplicates_ok  # PyYAML's way (caliper reads with it): the last value wins, listed
        self.at = _Marks(text).position if _BREAKS.search(text) else _plain_position
        self.left = MAX_VALUES  # values still allowed inside alias expansions
        self.seen: set[int] = set()  # collection nodes already built: meeting one again is an alias
        self.expanding = False

    def build(self, node: yaml.Node, pointer: str, depth: int) -> Any:
        src = self.src
        src.positions[pointer] = self.at(node.start_mark)
        # The billion-laughs guard counts what aliases expand to, not the spec's own values: a big honest
        # spec has no limit here, an alias of an alias of a list does.
        outermost = False
        if not isinstance(node, yaml.ScalarNode):
            if id(node) in self.seen:
                outermost, self.expanding = not self.expanding, True
            else:
                self.seen.add(id(node))
        try:
            return self._build(node, pointer, depth)
        finally:
            if outermost:
                self.expanding = False

    def _build(self, node: yaml.Node, pointer: str, depth: int) -> Any:
        src = self.src
        if self.expanding:
            self.left -= 1
            if self.left < 0:
                raise self.located(node, pointer, f"YAML aliases expand to more than {MAX_VALUES:,} values",
                               "a spec never needs this; write the repeated parts out, or remove the aliases "
                               "that repeat whole lists")
        if depth > MAX_DEPTH:
            raise _too_deep(src.path, *self.at(node.start_mark), pointer)
        if not isinstance(node, yaml.ScalarNode) and node.tag not in _COLLECTION_TAGS:
            raise self.tag_error(node, pointer)
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise self.located(key_node, pointer, "YAML merge keys ('<<') are not supported",
                                   "write the keys out in full")
                if not isinstance(key_node, yaml.ScalarNode):
                    raise self.located(key_node, pointer, "mapping keys must be plain strings",
                                   "use a plain scalar as the key")
                if key_node.tag not in _KEY_TAGS:
                    raise self.tag_error(key_node, pointer, key=True)
                key = str(key_node.value)
                child = f"{pointer}/{escape(key)}"
                if key in out:
                    first = src.key_positions[child]
                    if self.duplicates_ok:
                        src.duplicates.append((key, self.at(key_node.start_mark)[0], first[0]))
                        out[key] = self.build(value_node, child, depth + 1)
                        continue
                    raise self.located(key_node, child, f"duplicate key {key!r}",
                                   f"it is already set at line {first[0]}; keep one of them")
                src.key_positions[child] = self.at(key_node.start_mark)
                out[key] = self.build(value_node, child, depth + 1)
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, f"{pointer}/{i}", depth + 1) for i, item in enumerate(node.value)]
        assert isinstance(node, yaml.ScalarNode)
        if node.tag == _STR:  # written `!!binary` or `!!timestamp`, a value would silently stay its text: refused
            return node.value
        if node.tag in _PLAIN_TAGS:
            try:
                value = _scalar.construct_object(node)
            except ValueError:  # an integer longer than Python converts (4,300 digits)
                raise self.located(node, pointer, "number too large", "write a smaller number") from None
            if type(value) is int and not -_INT_LIMIT < value < _INT_LIMIT:
                raise self.located(node, pointer, _INT_TOO_LARGE, _INT_HINT)
            return value
        raise self.tag_error(node, pointer)


    def tag_error(self, node: yaml.Node, pointer: str, *, key: bool = False) -> SpecError:
        """A YAML tag (`!!python/name:…`, `!custom`, `!!binary`) names a type to construct: a spec is plain data,
        so none is allowed."""
        tag = str(node.tag)
        shown = "!!" + tag[len(_YAML_TAG):] if tag.startswith(_YAML_TAG) else tag
        what = f"the key {node.value!r}" if key and node.value else "a key" if key else "this value"
        danger = " (it asks the loader for Python code)" if shown.startswith("!!python/") else ""
        return self.located(node, pointer, f"YAML tag {shown!r} on {what} is not allowed{danger}",
                            "remove the tag: a spec holds plain strings, numbers, lists and mappings, and takes no "
                            "tags")

    def located(self, node: yaml.Node, pointer: str, message: str, hint: str) -> SpecError:
        line, col = self.at(node.start_mark)
        return SpecError(message, loc=Location(path=self.src.path, line=line, col=col, pointer=pointer), hint=hint)


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


class _LineIndex:
    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> Position:
        import bisect
        i = bisect.bisect_right(self.starts, offset) - 1
        return i + 1, offset - self.starts[i] + 1


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
