"""Reading a YAML spec file into plain data plus a pointer → line:col map: PyYAML's composer (libyaml's when
installed) with YAML 1.2-like scalars, and the limits that keep a hostile file from crashing `validate`. Loaded by
source.read_source for the first YAML file a process reads."""

from __future__ import annotations

import gc
import re
from typing import Any

import yaml

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
from skillmake.spec.yamlsyntax import explain as _yaml_syntax


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
