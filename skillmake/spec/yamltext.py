"""Readable block-style YAML text from plain data (what a person would write by hand: keys in a chosen order,
short lists and check mappings inline, long text as `|` blocks), with `#` comment lines at JSON pointers.

Layer: spec. It only renders: the caller parses the text back (source.read_yaml) to prove it says the same.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping
from typing import Any

import yaml

WIDTH = 116  # an inline collection longer than this is written as a block
# Characters a plain scalar may hold here: a conservative set (no flow indicators, quotes or backslashes);
# anything else is double-quoted. Whether it reads back as the same string is checked after (yaml.safe_load).
_PLAIN = re.compile(r"[A-Za-z0-9_./(~$<][A-Za-z0-9_ ./()~$<>=+*&!?%@:#'-]*")
_FLOW_UNSAFE = re.compile(r"[,\[\]{}]")

Order = Callable[[str], tuple[str, ...]]  # a mapping's JSON pointer → its keys' preferred order


def dump(data: Mapping[str, Any], *, comments: Mapping[str, list[str]] | None = None,
         order: Order | None = None) -> str:
    """`data` as block-style YAML; `comments[pointer]` lines are written just above that key or list item
    (the root's at the top)."""
    writer = _Writer(comments or {}, order or (lambda _pointer: ()))
    writer.comment("", 0)
    writer.mapping(data, "", 0)
    return "\n".join(writer.lines) + "\n"


def escape(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


class _Writer:
    def __init__(self, comments: Mapping[str, list[str]], order: Order) -> None:
        self.comments = comments
        self.order = order
        self.lines: list[str] = []

    def comment(self, pointer: str, indent: int) -> None:
        for text in self.comments.get(pointer, []):
            for line in text.splitlines() or [""]:
                # Long lines wrap at words, never inside one (a modeline or a URL stays whole).
                wrapped = textwrap.wrap(line, width=max(WIDTH - indent - 2, 40), break_long_words=False,
                                        break_on_hyphens=False) or [""]
                self.lines.extend(f"{' ' * indent}# {part}".rstrip() for part in wrapped)

    def mapping(self, data: Mapping[str, Any], pointer: str, indent: int) -> None:
        preferred = [k for k in self.order(pointer) if k in data]
        for key in [*preferred, *(k for k in data if k not in preferred)]:
            child = f"{pointer}/{escape(key)}"
            self.comment(child, indent)
            self.entry(f"{' ' * indent}{scalar(key)}:", data[key], child, indent)

    def sequence(self, items: list[Any], pointer: str, indent: int) -> None:
        for i, item in enumerate(items):
            child = f"{pointer}/{i}"
            self.comment(child, indent)
            if isinstance(item, dict) and item and not self.inline(item, child):
                start = len(self.lines)
                self.mapping(item, child, indent + 2)
                # The item's first key shares the dash's line (`- id: x`), as people write it.
                first = next(n for n in range(start, len(self.lines)) if not self.lines[n].lstrip().startswith("#"))
                self.lines[first] = f"{' ' * indent}- {self.lines[first][indent + 2:]}"
            elif isinstance(item, list) and item and not self.inline(item, child):
                self.lines.append(f"{' ' * indent}-")
                self.sequence(item, child, indent + 2)
            else:
                self.entry(f"{' ' * indent}-", item, child, indent)

    def entry(self, head: str, value: Any, pointer: str, indent: int) -> None:
        """`head` (a `key:` or a `-`) followed by `value`, inline or as a block below it."""
        if isinstance(value, (dict, list)):
            if not value or self.inline(value, pointer):
                self.lines.append(f"{head} {flow(value)}")
            elif isinstance(value, dict):
                self.lines.append(head)
                self.mapping(value, pointer, indent + 2)
            else:
                self.lines.append(head)
                self.sequence(value, pointer, indent + 2)
            return
        block = literal(value)
        if block is None:
            self.lines.append(f"{head} {scalar(value)}")
            return
        indicator, body = block
        self.lines.append(f"{head} {indicator}")
        self.lines.extend(f"{' ' * (indent + 2)}{line}" if line else "" for line in body)

    def inline(self, value: dict[str, Any] | list[Any], pointer: str) -> bool:
        """Small collections of scalars read best on one line: `[a, b]`, a check's `{type: x, needle: y}`. Not
        the spec's own sections (agent, thresholds) nor its cases, and never one with a comment inside."""
        if pointer.count("/") < 3 and isinstance(value, dict):
            return False
        if any(p.startswith(pointer + "/") for p in self.comments):
            return False
        leaves = value.values() if isinstance(value, dict) else value
        if not all(_flat(v) for v in leaves):
            return False
        return len(pointer.rsplit("/", 1)[-1]) + len(flow(value)) + pointer.count("/") * 2 <= WIDTH


def _flat(value: Any) -> bool:
    if isinstance(value, list):
        return all(not isinstance(v, (dict, list)) and literal(v) is None for v in value)
    return not isinstance(value, dict) and literal(value) is None


def flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{scalar(k, flow=True)}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    return scalar(value, flow=True)


def scalar(value: Any, *, flow: bool = False) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _dumped(value)  # PyYAML writes a float so that it reads back as that float (1e-05 → 1.0e-05)
    text = str(value)
    if _plain(text, flow=flow):
        return text
    return _dumped(text, style='"')


def _plain(text: str, *, flow: bool) -> bool:
    if not _PLAIN.fullmatch(text) or text == "<<" or text != text.strip() or text.endswith(":"):
        return False
    if ": " in text or " #" in text:
        return False
    if flow and _FLOW_UNSAFE.search(text):
        return False
    try:  # not a number, a boolean (YAML 1.1's yes/no/on too), null or a date: it must read back as itself
        return bool(yaml.safe_load(text) == text)
    except yaml.YAMLError:
        return False


def literal(value: Any) -> tuple[str, list[str]] | None:
    """A multi-line string as a `|` block (its indicator and lines); None when it is better quoted: one line,
    control characters, a first line starting with a space, or more than one trailing newline."""
    if not isinstance(value, str) or "\n" not in value.rstrip("\n") or value.endswith("\n\n"):
        return None
    if value[:1] in (" ", "\t") or any(c != "\n" and c != "\t" and not c.isprintable() for c in value):
        return None
    body = value[:-1] if value.endswith("\n") else value
    return ("|" if value.endswith("\n") else "|-"), body.split("\n")


def _dumped(value: Any, *, style: str | None = None) -> str:
    text = yaml.dump(value, Dumper=yaml.SafeDumper, default_style=style, width=10**9, allow_unicode=True)
    return text.removesuffix("\n...\n").rstrip("\n")
