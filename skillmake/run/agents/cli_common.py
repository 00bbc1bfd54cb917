"""What the CLI agents (claude-code, codex) share: finding the binary, its version, the endpoint and key
they are given, scrubbing secrets from stored text, and spotting reads of forbidden files."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from skillmake.core import fstree
from skillmake.core.errors import SkillmakeError
from skillmake.core.oswalk import walk
from skillmake.core.paths import LINK_HINT, link_problems, within
from skillmake.core.skillscope import not_skill
from skillmake.run import process
from skillmake.run.agents.base import AgentResult, Usage
from skillmake.spec.model import AgentConfig
from skillmake.spec.settings import ProviderSettings, resolve_anthropic, resolve_openai

# The project-local install made by scripts/setup.sh (npm install --prefix .tools/npm ...).
NPM_BIN = Path(".tools") / "npm" / "node_modules" / ".bin"
_PACKAGE_ROOT = Path(__file__).resolve().parents[3]  # the checkout holding skillmake/ (development installs)
_versions: dict[str, str | None] = {}
_versions_lock = threading.Lock()


# Other tools' names for the same explicit path, read after skillmake's own.
ALIASES = {"SKILLMAKE_CODEX": "CODEX_CLI_PATH"}  # caliper's


def find_cli(name: str, env_var: str, *, start: str | None = None) -> str | None:
    """Where the `name` CLI is, in this order (the first that exists wins):

    1. the environment variable `env_var` (SKILLMAKE_CLAUDE, SKILLMAKE_CODEX), else the name another tool gives
       it (caliper's CODEX_CLI_PATH): an explicit path;
    2. `<dir>/.tools/npm/node_modules/.bin/<name>` for `start` (else the current directory) and each of its
       parents, then the checkout skillmake itself runs from (where scripts/setup.sh installs the pinned CLIs);
    3. `name` on PATH.
    None when none of them exists.
    """
    explicit = os.environ.get(env_var) or os.environ.get(ALIASES.get(env_var, ""))
    if explicit:
        found = shutil.which(explicit) if os.sep not in explicit else explicit
        return found if found and os.access(found, os.X_OK) else None
    base = Path(start or os.getcwd()).resolve()
    for folder in (base, *base.parents, _PACKAGE_ROOT):
        candidate = folder / NPM_BIN / name
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def cli_version(binary: str) -> str | None:
    """`binary --version`, first line, cached per process and binary (it is part of every trial key)."""
    with _versions_lock:
        if binary in _versions:
            return _versions[binary]
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    done = process.run([binary, "--version"], cwd=os.getcwd(), env=env, timeout=30)
    text = done.stdout.decode("utf-8", "replace").strip()
    version = text.splitlines()[0].strip() if done.returncode == 0 and text else None
    with _versions_lock:
        _versions[binary] = version
    return version


def endpoint(provider: str, config: AgentConfig) -> ProviderSettings:
    """Where the CLI for `provider` ("anthropic" for claude, "openai" for codex) sends its model calls and
    with what key: skillmake.spec.settings decides (the spec's agent env, then the environment, then the default)."""
    resolve = resolve_anthropic if provider == "anthropic" else resolve_openai
    return resolve(config.model, spec_env=dict(config.env))


def agent_env(base: Mapping[str, str], *, config_env: Iterable[tuple[str, str]], pass_env: Iterable[str],
              home: str) -> dict[str, str]:
    """The trial's clean environment, the spec's `env`, the named `pass_env` variables, and the fresh HOME."""
    env = dict(base)
    env.update(dict(config_env))
    for name in pass_env:
        if name in os.environ:
            env[name] = os.environ[name]
    env["HOME"] = home
    return env




def install_skill_folder(source: str, dest: Path) -> None:
    """Copy the whole skill folder to `dest` (replacing what is there), skipping VCS and cache folders.

    A link to a file inside the skill folder is copied as that file's content; any other link (out of the
    folder, to a folder, broken) is refused with a SkillmakeError, here as at validation (a link may have
    been made since), and each file is checked again as it is copied."""
    problems = link_problems(source)
    if problems:
        name, problem = problems[0]
        raise SkillmakeError(f"skill folder {source}: {name!r} {problem}", hint=LINK_HINT)
    real = os.path.realpath(source)
    if os.path.lexists(dest):
        fstree.remove_tree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Top-down without recursion (oswalk): shutil.copytree recursed once per level, a ~1,300-deep folder (an
    # agent's leftover in the skill) raised RecursionError. Each folder exists before its entries are copied.
    target = os.fspath(dest)
    for here, dirs, names in walk(source):
        rel = os.path.relpath(here, source)
        into = target if rel == "." else os.path.join(target, rel)
        os.mkdir(into)
        dirs[:] = sorted(d for d in dirs if not not_skill(here, d, top=source))
        for name in sorted(names):
            if not_skill(here, name, top=source):
                continue
            src = os.path.join(here, name)
            if not within(os.path.realpath(src), real):  # a link made since link_problems looked
                raise SkillmakeError(f"skill folder {source}: {os.path.relpath(src, source)!r} links outside it",
                                     hint=LINK_HINT)
            shutil.copy2(src, os.path.join(into, name))


def strings_in(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (a tool call's input)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def path_candidates(text: str, workspace: str) -> list[str]:
    """The forms of a path-ish string a forbidden-file pattern is tried on: each shell word of it (tool
    inputs may be commands), each made relative to the workspace (and with ./), then the whole text."""
    # Single words first, so a hit names the path rather than the command around it.
    words = sorted(_words(text, depth=2), key=lambda w: len(w.split()) > 1)
    if text not in words:
        words.append(text)
    out: list[str] = []
    roots = {os.path.abspath(workspace), os.path.realpath(workspace)}  # the CLI may report either
    for word in words:
        out.append(word)
        if os.path.isabs(word):
            for root in roots:
                rel = os.path.relpath(os.path.normpath(word), root)
                if not rel.startswith(".."):
                    out.extend((rel, f"./{rel}"))
                    break
        elif word and not word.startswith(("./", "-")):
            out.append(f"./{word}")
    return out


def _words(text: str, *, depth: int) -> list[str]:
    """Shell words of `text`, and of each word that is itself a command (`bash -lc 'cat x'`), `depth` deep."""
    try:
        words = shlex.split(text)
    except ValueError:  # an unbalanced quote: fall back to whitespace
        words = text.split()
    if depth > 1:
        nested = [w for word in words if len(word.split()) > 1 for w in _words(word, depth=depth - 1)]
        words += [w for w in nested if w not in words]
    return words


def forbidden_hits(values: Iterable[str], patterns: Iterable[str], workspace: str) -> tuple[str, ...]:
    """The strings among `values` (tool inputs) that name a file matching one of the `patterns` (regexes,
    searched), in order of first appearance, each once."""
    compiled = [re.compile(p) for p in patterns]
    if not compiled:
        return ()
    hits: list[str] = []
    for value in values:
        for candidate in path_candidates(value, workspace):
            if candidate not in hits and any(p.search(candidate) for p in compiled):
                hits.append(candidate)
                break
    return tuple(hits)


def tail(data: bytes, lines: int = 3) -> str:
    """The last `lines` non-empty lines of a process's output, joined with " / " (for error messages)."""
    text = data.decode("utf-8", "replace").strip().splitlines()
    return " / ".join(line.strip() for line in text[-lines:] if line.strip())


def json_lines(data: bytes) -> tuple[list[dict[str, Any]], int]:
    """The JSON objects of a JSONL stream (`--json` / stream-json output), and how many lines were not one."""
    events: list[dict[str, Any]] = []
    bad = 0
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            bad += 1
            continue
        if isinstance(event, dict):
            events.append(event)
        else:
            bad += 1
    return events, bad


class CliAgent:
    """What the CLI agents share: finding their binary (the same lookup for the key and the run) and its version."""

    kind: str
    cli: str  # the executable's name
    env_var: str  # the variable that points at a specific binary

    def version(self, config: AgentConfig) -> str | None:
        binary = find_cli(self.cli, self.env_var)
        return cli_version(binary) if binary else None

    def binary(self) -> str | AgentResult:
        """The binary to run, or the error outcome that says how to install it."""
        found = find_cli(self.cli, self.env_var)
        if found is not None:
            return found
        return AgentResult(outcome="error", output="", usage=Usage(num_turns=0, requests=0),
                           error=f"{self.cli} CLI not found; run scripts/setup.sh, or set {self.env_var} to its path")
