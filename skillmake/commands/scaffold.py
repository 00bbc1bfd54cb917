"""`skillmake init` (a starter spec beside a skill) and `skillmake schema` (the JSON Schemas, for editors)."""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass

from skillmake.commands.argparser import Parser, parsed
from skillmake.core import atomic
from skillmake.core.errors import EXIT_OK, EXIT_USAGE
from skillmake.spec.schema import SPEC, schema_dir, schema_names

SCHEMA_URL = "https://skillmake.dev/schemas/"  # every schema's `$id` is this + its file name
SCHEMA_FOLDER = "schemas"  # where `init` keeps the project's copy of the spec schema, under the root
_SKIP = frozenset({".git", ".hg", ".svn", ".skillmake", "node_modules", "__pycache__", ".venv", "venv", ".tools"})
STARTER_SKILL = """\
---
name: {name}
description: Answers in uppercase. Replace this with when the agent should use your skill.
---
Answer in UPPERCASE.
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class Found:
    """The skill a spec is written for: its path and name, and whether it is a folder or a command file."""

    path: str  # absolute
    name: str
    kind: str  # "folder" | "command"


class InitError(Exception):
    """Why `init` cannot write the spec; the message and the fix, printed as they are."""

    def __init__(self, message: str, hint: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message, self.hint, self.code = message, hint, code


# ---- skillmake init ---------------------------------------------------------------------------------------


def init_main(args: list[str]) -> int:
    parser = Parser(
        prog="skillmake init", description="Write a starter eval spec beside a skill (a new skill when there is "
        "none), with the editor modeline, one example case and the agent you choose.")
    parser.add_argument("skill", nargs="?", help="a skill folder (with SKILL.md), its SKILL.md, or a command .md "
                        "file (default: the skill in the current folder, or the only one below it)")
    parser.add_argument("--agent", choices=("command", "claude-code"), default="command",
                        help="command: any program, offline (default); claude-code: the real `claude -p`")
    opts = parsed(parser, args)
    if isinstance(opts, int):
        return opts
    try:
        written, spec = init(os.getcwd(), opts.skill, agent=opts.agent)
    except InitError as exc:
        print(f"skillmake init: {exc.message}\n  hint: {exc.hint}", file=sys.stderr)
        return exc.code
    for path in written:
        print(f"wrote {_shown(path)}")
    print(f"next: {_next_command(spec)}")
    return EXIT_OK


def init(cwd: str, given: str | None, *, agent: str) -> tuple[list[str], str]:
    """Write the spec (and a starter skill, and the schema copy, when missing); the files written and the spec."""
    from skillmake.spec.config import find_root

    root = find_root(cwd)
    written: list[str] = []
    skill = _skill_at(os.path.join(cwd, given)) if given else _only_skill(cwd)
    if skill is None:  # nothing to evaluate yet: start one
        skill = Found(path=os.path.join(cwd, "skills", "example"), name="example", kind="folder")
        skill_md = os.path.join(skill.path, "SKILL.md")
        _refuse_existing(os.path.join(cwd, "skills", "example.eval.yaml"))
        os.makedirs(skill.path, exist_ok=True)
        atomic.write_bytes(skill_md, STARTER_SKILL.format(name=skill.name).encode())
        written.append(skill_md)
    from skillmake.core.paths import unsafe_name

    problem = unsafe_name(skill.name)
    if problem:
        raise InitError(f"{skill.name!r} cannot name a spec: {problem}",
                        "rename the skill, or write the spec by hand with a `name:` (see docs/paths.md)")
    folder = os.path.dirname(skill.path)  # beside the skill, never inside it: a spec edit must not change the skill
    spec = os.path.join(folder, f"{skill.name}.eval.yaml")
    _refuse_existing(spec)
    _refuse_clash(root, spec, skill.name)
    schema = os.path.join(root, SCHEMA_FOLDER, SPEC)
    if not ours(schema):
        if os.path.exists(schema):
            schema_ref = f"{SCHEMA_URL}{SPEC}"  # someone else's file there: point at the stable id instead
        else:
            write_schema(SPEC, os.path.dirname(schema))
            written.append(schema)
            schema_ref = os.path.relpath(schema, folder)
    else:
        schema_ref = os.path.relpath(schema, folder)
    text = spec_text(skill, agent=agent, schema_ref=schema_ref, spec_folder=folder)
    atomic.write_bytes(spec, text.encode())
    written.append(spec)
    return written, spec


def spec_text(skill: Found, *, agent: str, schema_ref: str, spec_folder: str) -> str:
    rel = os.path.relpath(skill.path, spec_folder)
    head = (f"# yaml-language-server: $schema={schema_ref}\n"
            f"# Evals for the {skill.name} skill. `skillmake` runs what is stale; `skillmake validate` checks it.\n"
            f"skill: {rel if re.fullmatch(r'[A-Za-z0-9_][A-Za-z0-9_./-]*', rel) else json.dumps(rel)}\n")
    if agent == "claude-code":
        return head + _CLAUDE_CODE.format(name=skill.name)
    return head + _COMMAND.format(name=skill.name)


_COMMAND = """\
agent:
  # Any program runs a trial in a fresh workspace: the prompt on stdin (and in $SKILLMAKE_PROMPT), the skill's
  # path in $SKILLMAKE_SKILL; its stdout is graded. `cat` only echoes the prompt, so this runs offline as it
  # is: put your own agent here, or use `kind: claude-code` (skillmake init --agent claude-code).
  kind: command
  command: [cat]
trials: 1
# baseline: true   # also run every case without the skill, and report the difference it makes
cases:
  - id: example
    prompt: say hello to the {name} team
    checks:
      - {{type: contains, needle: hello}}
"""

_CLAUDE_CODE = """\
agent:
  # The real `claude -p` in a fresh workspace with the skill installed. It needs ANTHROPIC_API_KEY in your
  # environment, or a CLAUDE_CODE_OAUTH_TOKEN (from `claude setup-token`) passed through:
  # pass_env: [CLAUDE_CODE_OAUTH_TOKEN]
  kind: claude-code
  max_turns: 5
trials: 3
baseline: true   # also run every case without the skill, and report the difference it makes
cases:
  - id: example
    # The agent decides from the skill's description whether to use it; "/{name} …" would invoke it directly.
    prompt: say hello to the team
    checks:
      - {{type: min_length, length: 1}}
"""


def _skill_at(path: str) -> Found:
    path = os.path.abspath(path)
    if os.path.isdir(path):
        if not os.path.isfile(os.path.join(path, "SKILL.md")):
            raise InitError(f"{_shown(path)} has no SKILL.md",
                            "pass a skill folder (one with SKILL.md), its SKILL.md, or a command .md file")
        return Found(path=path, name=os.path.basename(path), kind="folder")
    if os.path.isfile(path) and os.path.basename(path) == "SKILL.md":
        folder = os.path.dirname(path)
        return Found(path=folder, name=os.path.basename(folder), kind="folder")
    if os.path.isfile(path) and path.endswith(".md"):
        return Found(path=path, name=os.path.basename(path)[:-3], kind="command")
    raise InitError(f"no skill at {_shown(path)}",
                    "pass a skill folder (one with SKILL.md), its SKILL.md, or a command .md file")


def _only_skill(cwd: str) -> Found | None:
    """The skill in `cwd`, or the only one below it; None when there is none; an error when there are several."""
    if os.path.isfile(os.path.join(cwd, "SKILL.md")):
        return _skill_at(cwd)
    found: list[str] = []
    # iterative and bounded: a 1,300-deep folder here must not crash init
    from skillmake.core.oswalk import walk  # iterative and bounded: a 1,300-deep folder here must not crash init
    from skillmake.spec.discovery import MAX_SEARCH_DEPTH

    for folder, dirs, files in walk(cwd, max_depth=MAX_SEARCH_DEPTH):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP)
        if "SKILL.md" in files:
            found.append(folder)
            dirs[:] = []  # a skill's own subfolders are part of it
        elif os.path.basename(folder) == "commands" and os.path.basename(os.path.dirname(folder)) == ".claude":
            found.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".md"))
    if len(found) > 1:
        listed = ", ".join(_shown(f) for f in found[:5]) + (" …" if len(found) > 5 else "")
        raise InitError(f"{len(found)} skills here: {listed}",
                        f"name the one to write a spec for: skillmake init {_shown(found[0])}")
    return _skill_at(found[0]) if found else None


def _refuse_existing(path: str) -> None:
    if os.path.exists(path):
        raise InitError(f"{_shown(path)} already exists; not overwriting it",
                        "edit it, or move it away and run `skillmake init` again")  # usage (3): 1 is a failed verdict


def _refuse_clash(root: str, spec: str, name: str) -> None:
    """A project spec elsewhere already named `name`: a second would make both fail validate (names are unique)."""
    from skillmake.spec.discovery import scan

    for path, head in scan(root).heads.items():
        if not head.skipped and head.name == name and os.path.abspath(path) != os.path.abspath(spec):
            raise InitError(f"{_shown(path)} is already a spec named {name!r}; a second one beside the skill would "
                            "clash with it", f"add cases to {_shown(path)}, or write the new spec by hand with "
                            "another `name:`")


def _next_command(spec: str) -> str:
    folder, name = os.path.split(spec)
    rel = os.path.relpath(folder)
    if rel.startswith(".."):  # the spec sits above the current folder: run from there
        return f"cd {rel} && skillmake validate {name} && skillmake"
    return f"skillmake validate {_shown(spec)} && skillmake"


def _shown(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


# ---- skillmake schema -------------------------------------------------------------------------------------


def schema_main(args: list[str]) -> int:
    names = [n.removesuffix(".schema.json") for n in schema_names()]
    parser = Parser(
        prog="skillmake schema", description="Print a JSON Schema skillmake ships (for editors and other tools).")
    parser.add_argument("name", nargs="?", default="spec", choices=names, metavar="NAME",
                        help=f"which schema (default: spec): {', '.join(names)}")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--path", action="store_true", help="print where the installed file is instead")
    where.add_argument("--write", metavar="DIR", help="write a copy into DIR (replacing an older copy) and print "
                       "the modeline that points a spec at it")
    opts = parsed(parser, args)
    if isinstance(opts, int):
        return opts
    file = f"{opts.name}.schema.json"
    if opts.path:
        print(schema_dir() / file)
    elif opts.write:
        target = write_schema(file, opts.write)
        ref = os.path.relpath(target)
        # The line to paste goes to stdout alone (`skillmake schema --write DIR | tail -1`); the rest to stderr.
        print(f"wrote {_shown(target)}; {_USE.get(opts.name, 'its path')}:", file=sys.stderr)
        print(_DIRECTIVE.get(opts.name, "{ref}").format(ref=ref))
    else:
        sys.stdout.write((schema_dir() / file).read_text(encoding="utf-8"))
    return EXIT_OK


_USE = {"spec": "a YAML spec in the current folder points at it with this first line (the path is relative to the "
                "spec file; in a JSON spec: \"$schema\": \"PATH\")",
        "config": "skillmake.toml points at it with this first line (Even Better TOML / taplo)"}
_DIRECTIVE = {"spec": "# yaml-language-server: $schema={ref}", "config": "#:schema {ref}"}


def write_schema(file: str, folder: str) -> str:
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, file)
    atomic.write_bytes(target, (schema_dir() / file).read_bytes())
    return target


def ours(path: str) -> bool:
    """Whether `path` is a copy of one of skillmake's schemas (by its `$id`)."""
    try:
        with open(path, encoding="utf-8") as f:
            return str(json.load(f).get("$id", "")).startswith(SCHEMA_URL)
    except (OSError, ValueError, AttributeError):
        return False


if __name__ == "__main__":
    sys.exit((schema_main if sys.argv[1:2] == ["schema"] else init_main)(sys.argv[2:]))
