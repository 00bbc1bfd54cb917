"""Canonical JSON and sha256 digests: the only way skillmake turns data into keys."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

KEY_VERSION = 1  # bump only on purpose: every cached trial and grade becomes stale


def canonical_json(value: Any) -> bytes:
    """Bytes that are equal exactly when the data is equal (sorted keys, no spaces)."""
    # orjson's bytes keep the 4 KiB buffer they were written into; key parts are kept for the whole run (one per
    # case and arm), so they are copied to their size: 40 MiB less at 30,000 trials (bench/memory.py).
    return bytes(memoryview(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)))


def digest_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def digest_json(value: Any) -> str:
    return digest_bytes(canonical_json(value))


def hex_of(digest: str) -> str:
    """The hex part of a `sha256:<hex>` digest."""
    algo, _, hexpart = digest.partition(":")
    if algo != "sha256" or len(hexpart) != 64:
        raise ValueError(f"not a sha256 digest: {digest!r}")
    return hexpart


def digest_file(path: str, *, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return "sha256:" + h.hexdigest()
