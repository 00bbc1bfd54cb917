"""`skillmake import FILE`: a spec in another tool's format (clauditor, skill-creator, caliper, eva) written as the
native `<name>.eval.yaml` its adapter translates it into, with a `#` line for every seed field that has no native
twin, so that nothing of the seed is lost and its trials and grades keep their keys (no re-run, no re-judging)."""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Any

from skillmake.commands.argparser import Parser, parsed
from skillmake.core import atomic
from skillmake.core.canonical import canonical_json
from skillmake.core.errors import (
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    SkillmakeError,
    SpecError,
)
from skillmake.spec import yamltext
from skillmake.spec.config import Config, ConfigErrors, find_root, load_config
from skillmake.spec.schema import SPEC

SUFFIX = ".eval.yaml"
# Key order as the examples write it (examples/*.eval.yaml), then the schema's; unknown keys keep their order.
TOP = ("name", "description", "skill", "agent", "trials", "timeout", "baseline", "variants", "judge", "system_prompt",
       "output_file", "output_files", "thresholds", "sandbox", "trigger_tests", "tags", "cases")
AGENT = ("kind", "command", "model", "max_turns", "max_tokens", "budget_usd", "flags", "env", "pass_env",
         "allowed_tools", "sync_tasks", "allow_hang_heuristic")
CASE = ("id", "description", "prompt", "inputs", "args", "user_prompt", "setup", "cleanup", "input_files",
        "output_file", "output_files", "timeout", "required", "tags", "checks", "rubric", "pass_threshold",
        "expectations", "expected_output", "criteria", "sections")
CHECK = ("type", "id", "name", "file")
JUDGE = ("provider", "model", "pass_threshold")
_ORDER = ((re.compile(r""), TOP), (re.compile(r"(/variants/\d+)?/agent"), AGENT), (re.compile(r"/judge"), JUDGE),
          (re.compile(r"/cases/\d+"), CASE), (re.compile(r"/cases/\d+/checks/\d+"), CHECK))
# A note's first word names the seed field it is about: `harness → …`, `assertions[].name: …`.
_NOTE_FIELD = re.compile(r"[A-Za-z_][\w-]*(?:\[\])?(?:\.[A-Za-z_][\w-]*(?:\[\])?)*")


class ImportRefused(SkillmakeError):
    """Why the native spec is not written: the message, the fix, and the exit code (errors.py's table)."""

    def __init__(self, message: str, hint: str, code: int) -> None:
        super().__init__(message, hint=hint)
        self.exit_code = code


@dataclass(frozen=True, slots=True, kw_only=True)
class Imported:
    """A seed file's native equivalent: the spec data, its comment lines by JSON pointer, and where it goes."""

    fmt: str
    seed: str  # absolute
    out: str  # absolute
    data: dict[str, Any]
    comments: dict[str, list[str]]
    lent_agent: bool  # the seed names no agent: the project's runs both (the native spec leaves it out too)

    def text(self, *, schema_ref: str) -> str:
        head = [f"yaml-language-server: $schema={schema_ref}",
                f"Imported from {_rel(self.seed, os.path.dirname(self.out))} ({self.fmt}) by `skillmake import`: the "
                "same trials and grades (keys) as that file. The lines below name what has no native twin."]
        comments = {**self.comments, "": [*head, *self.comments.get("", [])]}
        return yamltext.dump(self.data, comments=comments, order=_order)


# ---- the command --------------------------------------------------------------------------------------------


def main(args: list[str]) -> int:
    parser = Parser(
        prog="skillmake import", description="Write the native skillmake spec of a clauditor, skill-creator, caliper "
        "or eva eval file: the same trials and grades, with a comment for every field that has no native twin.")
    parser.add_argument("file", help="the other tool's eval file (e.g. x.eval.json, evals/evals.json, eval.yml)")
    parser.add_argument("-o", "--output", metavar="OUT", help="where to write it (default: <name>.eval.yaml beside "
                        "FILE); its paths are rewritten relative to OUT's folder")
    parser.add_argument("--force", action="store_true", help="replace OUT when it exists")
    opts = parsed(parser, args)
    if isinstance(opts, int):
        return opts
    try:
        return run(opts.file, output=opts.output, force=opts.force)
    except ImportRefused as exc:
        print(f"skillmake import: {exc.message}\n  hint: {exc.hint}", file=sys.stderr)
        return exc.exit_code


def run(file: str, *, output: str | None, force: bool) -> int:
    from skillmake.spec.validate import Validation, render_text

    root = find_root()
    seed = os.path.abspath(file)
    if not os.path.isfile(seed):
        raise ImportRefused(f"no file {file}", "name an eval file of clauditor, skill-creator, caliper or eva",
                           EXIT_USAGE)
    try:
        config = load_config(root)
    except ConfigErrors as exc:
        _say(exc.render(), err=True)
        return EXIT_INVALID
    fmt = seed_format(seed)
    out = os.path.abspath(output) if output else default_out(seed, fmt, root)
    errors = checked(seed, root=root, config=config, out=out)
    if errors:
        _say(render_text(Validation(errors=errors)), err=True)
        _say(f"{len(errors)} error(s) in {_shown(seed, root)}; nothing imported", err=True)
        return EXIT_INVALID
    if os.path.exists(out) and not force:
        if os.path.samefile(out, seed):
            raise ImportRefused(f"the native spec would replace {_shown(seed, root)} itself ({fmt} files end in "
                               f"{SUFFIX} too)", "pass --force to convert it in place, or -o OUT", EXIT_FAILED)
        raise ImportRefused(f"{_shown(out, root)} already exists; not overwriting it",
                           "pass --force to replace it, or -o OUT to write elsewhere", EXIT_FAILED)
    imported = translate(seed, root=root, config=config, out=out, fmt=fmt)
    text = imported.text(schema_ref=schema_ref(root, os.path.dirname(out), skill=skill_folder(imported)))
    proven = _read_back(out, text, expected=imported.data)
    if proven is not None:  # a bug in the writer: never leave a file that says something else than the seed
        _say(f"skillmake import: internal error: the written YAML reads back differently at {proven}\n"
             "  hint: this is a bug in skillmake; please report it with the file you imported", err=True)
        return EXIT_INTERNAL
    in_place = os.path.exists(out) and os.path.samefile(out, seed)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    atomic.write_text(out, text)
    _say(f"wrote {_shown(out, root)} ({fmt} → skillmake; {_count(imported.comments)} comment line(s) on fields "
         "with no native twin)")
    if in_place:
        _say(f"next: skillmake validate {_shown(out, root)}")
    else:
        _say(next_step(imported, root))
    return EXIT_OK


def seed_format(seed: str) -> str:
    from skillmake.spec.adapters import supported
    from skillmake.spec.discovery import read_head

    fmt = read_head(seed).foreign
    if fmt is None:
        raise ImportRefused(f"{os.path.basename(seed)} is a skillmake spec already; there is nothing to import",
                           "import files of clauditor, skill-creator, caliper or eva", EXIT_USAGE)
    if not supported(fmt):
        raise ImportRefused(f"reading {fmt} files is not supported", "see docs/formats.md", EXIT_USAGE)
    return fmt


def default_out(seed: str, fmt: str, root: str) -> str:
    """`<name>.eval.yaml` beside the seed: the same folder, so every path and program argument the keys hold is
    written exactly as the seed's translation has it."""
    from skillmake.spec.adapters.detect import seed_spec_name
    from skillmake.spec.loader import spec_name_of

    name = seed_spec_name(fmt, seed) or spec_name_of(seed)
    return os.path.join(os.path.dirname(seed), f"{name}{SUFFIX}")


def checked(seed: str, *, root: str, config: Config, out: str) -> list[SpecError]:
    """The errors `skillmake validate FILE` reports, except that the seed and OUT share a name: OUT replaces it."""
    from skillmake.spec.validate import display, validate_files

    result = validate_files([seed], root=root, config=config)
    clash = re.compile(r"spec name '.*' is also the name of " + re.escape(display(out, root)))
    return [e for e in result.errors if not (e.loc and e.loc.pointer == "/name" and clash.fullmatch(e.message))]


# ---- the translation ----------------------------------------------------------------------------------------


def translate(seed: str, *, root: str, config: Config, out: str, fmt: str | None = None) -> Imported:
    """The native spec of a seed that validates, as it will be written to `out` (paths relative to its folder)."""
    from skillmake.spec import adapters
    from skillmake.spec.loader import read_source_collecting

    src = read_source_collecting(seed, _shown(seed, root))
    fmt = fmt or seed_format(seed)
    translation = adapters.adapter(fmt).translate(src, path=seed, root=root)
    data = copy.deepcopy(translation.data)
    comments: dict[str, list[str]] = {}
    if fmt == "eva":
        _live_prompts(data, src, seed=seed, root=root)
    if getattr(translation, "agent_is_default", False) and "kind" in config.agent:
        _project_agent(data, config, seed=seed, root=root, comments=comments)
    rebase(data, old=os.path.dirname(seed), new=os.path.dirname(out))
    from skillmake.spec.overrides import format_defaults

    for name, value in format_defaults(fmt).items():  # what the seed's own runner does, which its file cannot say
        if name not in data and getattr(config, name, None) is None:
            data[name] = int(value) if isinstance(value, float) and value.is_integer() else value
            comments.setdefault(f"/{name}", []).append(f"{fmt} run's default, which a {fmt} file cannot write")
    origin = dict(translation.origin)
    for note in translation.notes:
        comments.setdefault(_note_place(note, origin, data), []).append(note)
    for pointer, value in _leaves(src.data, ""):
        if value not in ({}, []) and not _carried(value, pointer, origin, data):
            where = _nearest(pointer, origin, data)
            comments.setdefault(where, []).append(f"{fmt} {_field(pointer)}: {_json(value)}")
    lent = "agent" not in data
    if lent:
        agent = _json(config.agent)
        comments.setdefault("", []).append(
            f"agent: none named, as in the {fmt} file: the project's agent runs it ([tool.skillmake] agent, "
            f"now {agent}), so both share its trials and follow it when it changes")
    return Imported(fmt=fmt, seed=seed, out=out, data=data, comments=comments, lent_agent=lent)


def _live_prompts(data: dict[str, Any], src: Any, *, seed: str, root: str) -> None:
    """eva renders prompt.xml for each case when it runs: the native spec keeps each case's variables (`inputs`)
    rather than the text rendered today, so an edit of prompt.xml after the import sends its new text (the rendered
    prompt, and so every key, is the same as the seed's until then)."""
    from skillmake.spec.adapters.eva import case_inputs

    for case, variables in zip(data.get("cases", []), case_inputs(src, path=seed, root=root), strict=False):
        if variables is not None and "prompt" in case:
            del case["prompt"]
            case["inputs"] = variables


def _project_agent(data: dict[str, Any], config: Config, *, seed: str, root: str,
                   comments: dict[str, list[str]]) -> None:
    """The agent in the translation is the format's default (clauditor's `harness: auto`), which the project's
    agent overrides, as spec.load_spec does: left out so that the project's agent is lent to the native spec too,
    or, when the seed adds settings of its own (sync_tasks, …), written out as the seed runs it."""
    # the very rewrite load_spec applies to the seed: equal keys by construction
    from skillmake.spec.loader import lend_agent  # the very rewrite load_spec applies to the seed: equal keys

    chosen = data.pop("agent")
    extra = {k: v for k, v in chosen.items() if k not in ("kind", "command")}
    if not extra:
        return
    lend_agent(data, config.agent, spec_folder=os.path.dirname(seed), root=root)
    data["agent"].update(extra)
    comments.setdefault("/agent", []).append(
        "the project's agent ([tool.skillmake] agent) runs it, as it runs the seed, with the seed's own settings")


def rebase(data: dict[str, Any], *, old: str, new: str) -> None:
    """Paths a spec writes relative to its folder, rewritten for a spec in `new` instead of `old`: the skill,
    input files, check scripts and schema files, extra PATH folders, and a command agent's program files."""
    if os.path.realpath(old) == os.path.realpath(new):
        return

    def moved(rel: Any, *, only_existing: bool = False) -> Any:
        if not isinstance(rel, str) or os.path.isabs(rel) or rel.startswith("~"):
            return rel
        full = os.path.normpath(os.path.join(old, rel))
        if only_existing and not os.path.exists(full):
            return rel  # a program on PATH (`python3`) or an argument, not a file beside the spec
        return _rel(full, new)

    if "skill" in data:
        data["skill"] = moved(data["skill"])
    sandbox = data.get("sandbox") or {}
    if isinstance(sandbox.get("extra_path"), list):
        sandbox["extra_path"] = [moved(p) for p in sandbox["extra_path"]]
    for agent in [data.get("agent"), *((v or {}).get("agent") for v in data.get("variants", []))]:
        if isinstance(agent, dict) and isinstance(agent.get("command"), list):
            agent["command"] = [moved(a, only_existing=True) for a in agent["command"]]
    for case in data.get("cases", []):
        if isinstance(case.get("input_files"), list):
            case["input_files"] = [moved(p) for p in case["input_files"]]
        for check in case.get("checks", []):
            for key in ("script", "schema_file"):
                if isinstance(check.get(key), str):
                    check[key] = moved(check[key])


def _note_place(note: str, origin: dict[str, str], data: dict[str, Any]) -> str:
    """Where a note goes: above the native key its seed field became (`harness → …` above `agent:`); a note about
    the whole file, or about a field that has no native key at all, at the top."""
    found = _NOTE_FIELD.match(note)
    if not found:
        return ""
    parts = found.group(0).split(".")
    while parts:
        pattern = re.compile(r"(^|/)" + "/".join(re.escape(p.removesuffix("[]")) + (r"/\d+" if p.endswith("[]")
                                                                                   else "") for p in parts) + "(/|$)")
        hits = [n for n, s in origin.items() if s and pattern.search(s) and _exists(data, n)]
        if hits:
            return min(hits, key=lambda n: n.count("/"))
        parts.pop()
    return ""


def _nearest(pointer: str, origin: dict[str, str], data: dict[str, Any]) -> str:
    """The native key nearest to a seed pointer: the one made from it, else from a field beside it, else from the
    closest field above it."""
    probe = pointer
    while probe:
        exact = [n for n, s in origin.items() if s == probe]
        near = exact or [n for n, s in origin.items() if s.startswith(probe + "/")]
        placed = sorted((_existing(data, n) for n in near), key=lambda n: (n.count("/"), n))
        if placed and placed[0]:
            return placed[0]
        probe = probe.rsplit("/", 1)[0]
    return ""


def _carried(value: Any, pointer: str, origin: dict[str, str], data: dict[str, Any]) -> bool:
    """Whether a seed value is in the native spec as written: equal to a native value, inside a native text
    (a rendered prompt, `eval-3` for id 3), or inside the native value made from it."""
    made = [n for n, s in origin.items() if s == pointer and _exists(data, n)]
    for n in made:
        native = _get(data, n)
        if isinstance(native, str) and not isinstance(value, (dict, list)) and str(value).lower() in native.lower():
            return True
    for _, native in _leaves(data, ""):
        if _same(value, native) or (isinstance(value, str) and isinstance(native, str) and value in native):
            return True
    return False


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b) and type(a) in (int, float, str) and type(b) in (int, float, str)


def _leaves(value: Any, pointer: str) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{pointer}/{yamltext.escape(k)}")] or \
            [(pointer, value)]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{pointer}/{i}")] or [(pointer, value)]
    return [(pointer, value)]


def _get(data: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(data, dict) and token in data:
            data = data[token]
        elif isinstance(data, list) and token.isdigit() and int(token) < len(data):
            data = data[int(token)]
        else:
            raise KeyError(pointer)
    return data


def _exists(data: Any, pointer: str) -> bool:
    try:
        _get(data, pointer)
    except KeyError:
        return False
    return True


def _existing(data: Any, pointer: str) -> str:
    while pointer and not _exists(data, pointer):
        pointer = pointer.rsplit("/", 1)[0]
    return pointer


def _field(pointer: str) -> str:
    """A seed pointer as its field path: /evals/0/assertions/1/name → evals[0].assertions[1].name"""
    out = ""
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        out += f"[{token}]" if token.isdigit() else f".{token}" if out else token
    return out or "(the file)"


def _order(pointer: str) -> tuple[str, ...]:
    for pattern, keys in _ORDER:
        if pattern.fullmatch(pointer):
            return keys
    return ()


# ---- writing ------------------------------------------------------------------------------------------------


def skill_folder(imported: Imported) -> str | None:
    """The folder of the imported spec's skill (a SKILL.md folder; None for a command .md, a prompt or no skill)."""
    rel = imported.data.get("skill")
    if not isinstance(rel, str):
        return None
    path = os.path.normpath(os.path.join(os.path.dirname(imported.out), os.path.expanduser(rel)))
    if os.path.basename(path) == "SKILL.md":
        path = os.path.dirname(path)
    return path if os.path.isfile(os.path.join(path, "SKILL.md")) else None


def schema_ref(root: str, folder: str, *, skill: str | None = None) -> str:
    """The modeline's schema, as `skillmake init` points at it: the project's copy under schemas/ (written when
    missing), else the schema's stable URL when someone else's file is there, or when the copy would land inside
    the skill's folder (caliper's layout: the project is the skill's folder): nothing is written into a skill."""
    from skillmake.commands.scaffold import SCHEMA_FOLDER, SCHEMA_URL, ours, write_schema

    schema = os.path.join(root, SCHEMA_FOLDER, SPEC)
    inside = skill is not None and os.path.realpath(schema).startswith(os.path.realpath(skill) + os.sep)
    if (os.path.exists(schema) and not ours(schema)) or (inside and not os.path.exists(schema)):
        return f"{SCHEMA_URL}{SPEC}"
    if not os.path.exists(schema):
        write_schema(SPEC, os.path.dirname(schema))
    return _rel(schema, folder)


def _read_back(out: str, text: str, *, expected: dict[str, Any]) -> str | None:
    """None when `text` parses (as skillmake reads specs) to the data it was made from; else where it does not."""
    from skillmake.spec.source import read_yaml

    try:
        parsed = read_yaml(out, text).data
    except SpecError as exc:
        return str(exc.loc or exc.message)
    if canonical_json(parsed) != canonical_json(expected):
        return "the spec's data"
    return None


def next_step(imported: Imported, root: str) -> str:
    """Two specs of one name are both refused: say how to retire the seed without re-running anything."""
    seed = _shown(imported.seed, root)
    return f"next: remove {seed} (or add it to [tool.skillmake] exclude), then `skillmake`: nothing re-runs"


def _count(comments: dict[str, list[str]]) -> int:
    return sum(len(v) for v in comments.values())


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _rel(path: str, start: str) -> str:
    return os.path.relpath(path, start).replace(os.sep, "/")


def _shown(path: str, root: str) -> str:
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel


def _say(text: str, *, err: bool = False) -> None:
    print(text, file=sys.stderr if err else sys.stdout)


if __name__ == "__main__":  # `python -m skillmake.commands.importer FILE` until the front end has `skillmake import`
    sys.exit(main(sys.argv[1:]))
