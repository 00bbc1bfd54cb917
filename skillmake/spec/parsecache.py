"""Spec files' parses kept by content: `.skillmake/parsed/<digest>.json`, so an unchanged spec is not parsed again.

Parsing YAML with its source map is half of loading a spec (~2 ms of a 50-case spec's ~5 ms). What it gives (the
data and every pointer's line:column) is a pure function of the file's bytes and of the parser, so an entry is named
by the sha256 of both: the bytes, and the parser's own code (sourcemap.py, source.py, yamlread.py), PyYAML's version
and whether its libyaml extension is installed. Editing the parser, or upgrading PyYAML, misses every entry instead
of serving a parse the new code would not give. An entry that cannot be read back exactly (a torn or edited file,
another format) is a miss, and the spec is parsed again. Only clean parses are kept: a file with a syntax error or a
duplicate key, or data JSON cannot hold exactly (NaN, infinities, lone surrogates), is parsed every time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic
from skillmake.spec.source import Source, read_source

FORMAT = 1  # of an entry's content; a new one misses every entry written before it
KEEP = 2000  # entries kept at most; past it, the least recently written go
_parser: bytes | None = None


def _parser_digest() -> bytes:
    """What decides a parse besides the bytes: the readers' code (sourcemap, source, yamlread), PyYAML's version and
    whether its libyaml extension is installed, read from PyYAML's files without importing it (~11 ms, which a
    load whose specs are all cached, a no-op's, never needs): its __init__.py (which holds its version) and the
    names and sizes of its package's files (the extension is one of them)."""
    global _parser
    if _parser is None:
        here = Path(__file__).parent
        parts = [(here / name).read_bytes() for name in ("sourcemap.py", "source.py", "yamlread.py")]
        found = importlib.util.find_spec("yaml")
        if found is not None and found.origin and found.submodule_search_locations:
            parts.append(Path(found.origin).read_bytes())
            for folder in found.submodule_search_locations:
                with os.scandir(folder) as entries:
                    parts += sorted(f"{e.name}:{e.stat().st_size}".encode() for e in entries if e.is_file())
        _parser = hashlib.sha256(b"\0".join(parts)).digest()
    return _parser


class ParseCache:
    """Parses by content under `folder`; `read` answers from it or parses, `save` writes what was new."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.new: dict[str, bytes] = {}
        self.hits = 0

    def read(self, path: str) -> Source:
        """read_source(path), from the cache when these bytes were parsed before; raises as read_source does."""
        with open(path, "rb") as f:
            raw = f.read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return read_source(path)  # says where the bad byte is
        if "\r" in text:  # as read_source reads a file: newlines as text-mode open() gives them
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        kind = b"json" if path.endswith(".json") else b"yaml"
        name = hashlib.sha256(b"".join([_parser_digest(), kind, b"\0", raw])).hexdigest()
        cached = self._entry(name, path)
        if cached is not None:
            self.hits += 1
            return cached
        src = read_source(path, text)
        if not src.duplicates:
            blob = _dump(src)
            if blob is not None:
                self.new[name] = blob
        return src

    def save(self) -> None:
        """Write the parses this load made (atomically; a failure only means they are made again next time)."""
        if not self.new:
            return
        try:
            for name, blob in self.new.items():
                atomic.write_bytes(self.folder / f"{name}.json", blob, durable=False)
            self.new.clear()
            entries = list(os.scandir(self.folder))
            if len(entries) > KEEP:
                entries.sort(key=lambda e: e.stat().st_mtime)
                for entry in entries[:len(entries) - KEEP]:
                    os.unlink(entry.path)
        except OSError:
            pass

    def _entry(self, name: str, path: str) -> Source | None:
        try:
            with open(self.folder / f"{name}.json", "rb") as f:
                entry = orjson.loads(f.read())
            if not isinstance(entry, dict) or entry.get("v") != FORMAT:
                return None
            return Source(path=path, data=entry["data"], positions=_positions(entry["positions"]),
                          key_positions=_positions(entry["key_positions"]))
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None


def _positions(table: Any) -> dict[str, tuple[int, int]]:
    if not isinstance(table, dict):
        raise TypeError("positions")
    return {pointer: (line, col) for pointer, (line, col) in table.items()}


def _dump(src: Source) -> bytes | None:
    """The entry of a parse, or None when JSON would not give the same data back."""
    try:
        blob = orjson.dumps({"v": FORMAT, "data": src.data, "positions": src.positions,
                             "key_positions": src.key_positions})
    except (TypeError, orjson.JSONEncodeError):
        return None
    return blob if orjson.loads(blob)["data"] == src.data else None
