"""What every check shares: the context it reads, its verdict, the target text, evidence helpers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from skillmake.core.console import plural as plural  # re-exported: the checks say their counts with it
from skillmake.spec.model import Check


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckContext:
    """Everything a check may look at: the graded text and the captured files of one trial."""

    output: str  # the text graded by default
    files: Mapping[str, bytes]  # captured output files: workspace-relative path -> content
    workspace: str | None  # the kept workspace folder (None when only artifacts exist)
    spec_folder: str  # for schema_file / script paths


@dataclass(frozen=True, slots=True)
class Verdict:
    """A check's result: passed or not, and the evidence shown for it."""

    passed: bool
    evidence: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """The text a check reads: the output, or one captured file."""

    label: str  # "output" or "file 'x'"
    text: str


CheckFn = Callable[[Check, Target, CheckContext], Verdict]


def norm_path(path: str) -> str:
    """Workspace-relative paths compare without a leading './'."""
    while path.startswith("./"):
        path = path[2:]
    return path


def file_bytes(ctx: CheckContext, path: str) -> bytes | None:
    """A captured file's content, or None when it was not captured.

    Only captured files count, never the workspace on disk: a grade must depend on nothing
    but the artifacts its key names, so grading from the cache and from a fresh run agree.
    """
    wanted = norm_path(path)
    for name, data in ctx.files.items():
        if norm_path(name) == wanted:
            return data
    return None


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def clip(text: str, limit: int = 60) -> str:
    """A short quoted excerpt for evidence: 'hello wor…'."""
    flat = text.replace("\n", "\\n")
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return f"'{flat}'"


def quote(text: str) -> str:
    return clip(text, 80)


def listing(items: list[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    if len(items) > limit:
        shown += f", … ({len(items) - limit} more)"
    return shown


