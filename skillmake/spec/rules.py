"""The rules a JSON Schema cannot express (files, regexes, ids, contradictions), checked over every part of a
spec that passed the schema, even when another part did not: one run reports every error of a file."""

from __future__ import annotations

import glob as globmod
import os
import re
from collections.abc import Iterable
from typing import Any

from skillmake.core.errors import Location, SpecError
from skillmake.core.paths import (
    ALLOWED_ROOTS_VAR,
    LINK_HINT,
    MAX_NAME,
    SAFE_NAME_RULE,
    SPEC_FILE_HINT,
    allowed_roots,
    link_problems,
    spec_file_problem,
    unsafe_name,
    within,
    workspace_path_problem,
)
from skillmake.spec.formats import FORMATS
from skillmake.spec.inline import json_schema_problems, python_problems
from skillmake.spec.model import InputFile, Skill
from skillmake.spec.source import Source

PROMPT_SUFFIXES = (".xml",)  # prompt files under test (eva), neither installed nor a system prompt
_REGEX_KEYS = {"regex": "pattern", "min_count": "pattern", "matches": "pattern", "not_matches": "pattern"}
# Checks of two types that bound the same measure of the same target from below and from above.
_BOUND_PAIRS = (("min_length", "max_length", "length", "characters"), ("min_tokens", "max_tokens", "count", "tokens"))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


class Rules:
    """Checks what the schema cannot, collecting every error; keeps what it resolved (the skill, the staged
    input files) for building the spec. `bad` holds the pointers of schema errors: a rule reads a value only
    where no schema error sits at or below it, so it never reports a second, confused error for one cause."""

    def __init__(self, src: Source, path: str, shown: str, *, root: str, bad: Iterable[str] = ()) -> None:
        self.src = src
        self.root = root
        self.data: dict[str, Any] = src.data
        self.path = path
        self.folder = os.path.dirname(path)
        self.shown = shown
        self.errors: list[SpecError] = []
        self.skill: Skill | None = None
        self.inputs: dict[int, list[InputFile]] = {}
        self.rendered: dict[int, str] = {}  # the prompt of each case with `inputs` (its prompt file, rendered)
        self.tainted: set[str] = set()
        for pointer in bad:
            while pointer not in self.tainted:
                self.tainted.add(pointer)
                if not pointer:
                    break
                pointer = pointer.rsplit("/", 1)[0]

    def clean(self, pointer: str) -> bool:
        """No schema error at `pointer` or below it."""
        return pointer not in self.tainted

    def _str(self, value: Any, pointer: str) -> str | None:
        return value if isinstance(value, str) and self.clean(pointer) else None

    def error(self, pointer: str, message: str, hint: str | None = None, *, key: bool = False) -> None:
        self.errors.append(SpecError(message, loc=self.src.locate(pointer, key=key), hint=hint))

    def _unique(self, seen: dict[str, str], name: str, pointer: str, what: str, fix: str = "") -> None:
        """An error at `pointer` when `name` was already given (at the pointer `seen` keeps for it); the first use
        is remembered. `fix` follows the pointer of the first use in the hint."""
        if name in seen:
            self.error(pointer, f"duplicate {what} {name!r}", f"it is already used by {seen[name]}{fix}")
        seen.setdefault(name, pointer.rsplit("/", 1)[0])

    def shown_path(self, path: str) -> str:
        """`path` as the user sees it: relative to the project root when inside it."""
        rel = os.path.relpath(path, self.root)
        return path if rel.startswith("..") else rel

    def run(self) -> None:
        data = self.data
        skill = self._str(data.get("skill"), "/skill")
        if skill is not None:
            self.skill = self._skill(skill)
        elif "skill" in data and data["skill"] is None and self.clean("/skill"):
            self.skill = Skill(name="none", path=self.path, kind="none")
        self._variants()
        self._programs()
        self._adaptive(data.get("trials"))
        for i, pattern in enumerate(_list(_dict(data.get("sandbox")).get("forbidden_files"))):
            pointer = f"/sandbox/forbidden_files/{i}"
            if self._str(pattern, pointer) is not None:
                self._regex(pointer, pattern)
        for key in ("output_file", "output_files"):
            self._workspace_paths(f"/{key}", data.get(key))
        name = self._str(data.get("name"), "/name")
        if name is not None:
            self._name("/name", "spec name", name)
        self._cases()
        triggers = data.get("trigger_tests")
        if isinstance(triggers, dict) and self.clean("/trigger_tests"):
            from skillmake.spec import trigger_spec

            trigger_spec.check(triggers, skill=self.skill, folder=self.folder, clean=self.clean, root=self.root,
                               report=lambda pointer, message, hint: self.error(pointer, message, hint))

    def _adaptive(self, trials: Any) -> None:
        """`trials: {min, max, batch}`: min and batch at most max."""
        if not isinstance(trials, dict) or not self.clean("/trials"):
            return
        most = trials.get("max")
        for key in ("min", "batch"):
            if isinstance(most, int) and isinstance(trials.get(key), int) and trials[key] > most:
                self.error(f"/trials/{key}", f"{key} {trials[key]} is more than max {most}",
                           f"lower {key} to at most {most}, or raise max")

    def _variants(self) -> None:
        agent = self.data.get("agent")
        seen: dict[str, str] = {}
        for i, variant in enumerate(_list(self.data.get("variants"))):
            if not isinstance(variant, dict):
                continue
            name = self._str(variant.get("name"), f"/variants/{i}/name")
            if name is not None:
                self._unique(seen, name, f"/variants/{i}/name", "variant name", "; rename one")
                self._name(f"/variants/{i}/name", "variant name", name)
            override = variant.get("agent", {})
            if isinstance(agent, dict) and isinstance(override, dict) and self.clean("/agent") \
                    and self.clean(f"/variants/{i}/agent"):
                merged = {**agent, **override}
                if merged.get("kind") == "command" and "command" not in merged:
                    self.error(f"/variants/{i}/agent", "a command agent needs 'command'",
                               'add command: ["python", "agent.py"] — the executable and its arguments')

    def _programs(self) -> None:
        """A command agent's program must exist: beside the spec, or on PATH (and the sandbox's extra_path). Else
        every trial would end in error."""
        import shutil

        extra = [os.path.join(self.folder, p) for p in _list(_dict(self.data.get("sandbox")).get("extra_path"))
                 if isinstance(p, str)]
        search = os.pathsep.join([*extra, os.environ.get("PATH", "")])
        agents = [("/agent", self.data.get("agent"))]
        agents += [(f"/variants/{i}/agent", v.get("agent")) for i, v in enumerate(_list(self.data.get("variants")))
                   if isinstance(v, dict)]
        for pointer, agent in agents:
            command = _dict(agent).get("command")
            if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command) \
                    or not self.clean(f"{pointer}/command"):
                continue
            program = command[0]
            beside = os.path.join(self.folder, os.path.expanduser(program))
            if not (os.path.exists(beside) or ("/" not in program and shutil.which(program, path=search))):
                where = "beside the spec" if "/" in program else "beside the spec or on PATH"
                self.error(f"{pointer}/command/0", f"the agent's program {program!r} is not found {where}",
                           "install it, or fix the name (a relative path is read from the spec's folder)")

    def _name(self, pointer: str, what: str, name: str) -> None:
        """Names become folders under .skillmake/ and task names: the schema's pattern, checked in full here."""
        problem = unsafe_name(name)
        if problem:
            self.error(pointer, f"{what} {name!r} {problem}", f"use {SAFE_NAME_RULE}, at most {MAX_NAME} characters")

    def _workspace_paths(self, pointer: str, value: Any) -> None:
        """Outputs are captured from the trial's workspace: a path must not lead out of it."""
        for i, path in enumerate([value] if isinstance(value, str) else _list(value)):
            where = pointer if isinstance(value, str) else f"{pointer}/{i}"
            if self._str(path, where) is None:
                continue
            problem = workspace_path_problem(path)
            if problem:
                self.error(where, f"output path {path!r} {problem}",
                           "outputs are captured from the trial's workspace: write a path relative to it, "
                           "without '..' (like out/result.json)")

    # --- the skill ------------------------------------------------------------

    def _skill(self, rel: str) -> Skill | None:
        path = os.path.normpath(os.path.join(self.folder, os.path.expanduser(rel)))
        if (os.path.isdir(path) or os.path.isfile(path)) and not self._skill_allowed(rel, path):
            return None
        if os.path.isdir(path):
            if not os.path.isfile(os.path.join(path, "SKILL.md")):
                self.error("/skill", f"{rel!r} is a folder without SKILL.md",
                           "point 'skill' at a folder that holds SKILL.md, or at a command .md file")
                return None
            return self._skill_folder(path)
        if os.path.isfile(path):
            if os.path.basename(path) == "SKILL.md":
                return self._skill_folder(os.path.dirname(path))
            if path.endswith(PROMPT_SUFFIXES):  # eva's prompt.xml: its text reaches the agent in the cases' prompts
                return Skill(name=os.path.splitext(os.path.basename(path))[0], path=path, kind="prompt")
            if not path.endswith(".md"):
                self.error("/skill", f"{rel!r} is not a .md file",
                           "point 'skill' at a SKILL.md folder or a command .md")
                return None
            return Skill(name=os.path.basename(path)[:-3], path=path, kind="command")
        self.error("/skill", f"skill {rel!r} does not exist (looked at {self.shown_path(path)})",
                   "the path is relative to the spec's folder")
        return None

    def _skill_allowed(self, rel: str, path: str) -> bool:
        """A skill lives under the project root, or under a root the user allows (paths.allowed_roots)."""
        roots, ignored = allowed_roots(self.root)
        resolved = os.path.realpath(path)
        if any(within(resolved, root) for root in roots):
            return True
        hint = (f"move the skill into the project, or allow its folder: {ALLOWED_ROOTS_VAR}=/abs/folder "
                f"(several separated by {os.pathsep!r}; see docs/paths.md)")
        if ignored:
            hint += f"; ignored entries of {ALLOWED_ROOTS_VAR} that are not absolute: {', '.join(ignored)}"
        shown = resolved if os.path.isabs(os.path.expanduser(rel)) else os.path.relpath(resolved, self.root)
        self.error("/skill", f"skill {rel!r} is outside the project root (it resolves to {shown})", hint)
        return False

    def _skill_folder(self, folder: str) -> Skill | None:
        """A skill folder whose links all stay inside it (the whole tree is hashed and installed)."""
        problems = link_problems(folder)
        for name, problem in problems:
            self.error("/skill", f"skill file {name!r} {problem}", LINK_HINT)
        if problems:
            return None
        return Skill(name=os.path.basename(folder), path=folder, kind="folder")

    # --- cases ----------------------------------------------------------------

    def _cases(self) -> None:
        seen: dict[str, str] = {}
        for i, raw in enumerate(_list(self.data.get("cases"))):
            if not isinstance(raw, dict):
                continue
            base = f"/cases/{i}"
            case_id = self._str(raw.get("id"), f"{base}/id")
            if case_id is not None:
                self._unique(seen, case_id, f"{base}/id", "case id", "; ids must be unique in a spec")
                self._name(f"{base}/id", "case id", case_id)
            self.inputs[i] = self._input_files(base, raw.get("input_files"))
            for key in ("output_file", "output_files"):
                self._workspace_paths(f"{base}/{key}", raw.get(key))
            captured = self._captured(base, raw)
            if captured is not None:
                self._collision_guard(base, raw, self.inputs[i], captured)
            self._checks(base, raw.get("checks"), captured, {f.dest for f in self.inputs[i]})
            self._section_formats(base, raw.get("sections"))
            if "inputs" in raw and self.clean(f"{base}/inputs"):
                self._render(base, raw)
            if self.clean(base) and case_id is not None:
                self._something_to_grade(base, raw, case_id)

    def _render(self, base: str, raw: dict[str, Any]) -> None:
        """A case's `inputs`: the prompt is the spec's prompt file (eva's prompt.xml) with its {{ name }}s replaced,
        read now, so the text sent is the file's as it is (self.rendered, Case.prompt)."""
        from skillmake.spec.adapters.eva import placeholders, render

        if "prompt" in raw:
            self.error(f"{base}/inputs", "a case has either `prompt` or `inputs`, not both",
                       "`inputs` renders the prompt file into the prompt: remove one of them")
            return
        if self.skill is None or self.skill.kind != "prompt":
            self.error(f"{base}/inputs", "`inputs` needs a prompt file as the skill (e.g. `skill: prompt.xml`)",
                       "write the case's `prompt` instead, or point `skill` at the prompt file it renders")
            return
        try:
            with open(self.skill.path, encoding="utf-8") as f:
                template = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            self.error("/skill", f"cannot read the prompt file: {exc}", "save it as UTF-8 text")
            return
        missing = sorted(placeholders(template) - set(raw["inputs"]))
        if missing:
            self.error(f"{base}/inputs", f"the prompt file uses {', '.join('{{' + m + '}}' for m in missing)}, which "
                       "this case's inputs do not give", f"add {', '.join(missing)} to the case's inputs")
            return
        self.rendered[int(base.rsplit("/", 1)[1])] = render(template, raw["inputs"])

    def _something_to_grade(self, base: str, raw: dict[str, Any], case_id: str) -> None:
        if raw.get("checks") or any(raw.get(k) for k in ("rubric", "expectations", "criteria", "sections")):
            return
        hint = "add checks, a rubric, expectations, criteria or sections"
        if raw.get("expected_output"):
            hint += " (expected_output alone grades nothing: it is context for a judge)"
        self.error(base, f"case {case_id!r} has nothing to grade", hint)

    def _captured(self, base: str, raw: dict[str, Any]) -> tuple[str | None, tuple[str, ...]] | None:
        """(output_file, output_files) a case captures, the case's own winning over the spec's; None when one of
        them failed the schema (then nothing is judged against them)."""
        found: list[Any] = []
        for key in ("output_file", "output_files"):
            where, value = (f"{base}/{key}", raw[key]) if key in raw else (f"/{key}", self.data.get(key))
            if not self.clean(where):
                return None
            found.append(value)
        output_file, output_files = found
        if not (output_file is None or isinstance(output_file, str)):
            return None
        if not all(isinstance(p, str) for p in _list(output_files)):
            return None
        return output_file, tuple(_list(output_files))

    def _input_files(self, base: str, entries: Any) -> list[InputFile]:
        """clauditor's rules: relative, contained after symlinks, existing, unique basenames."""
        staged: dict[str, int] = {}
        out = []
        for j, rel in enumerate(_list(entries)):
            pointer = f"{base}/input_files/{j}"
            if self._str(rel, pointer) is None:
                continue
            if os.path.isabs(rel) or rel.startswith("~"):
                self.error(pointer, f"absolute input file path {rel!r}",
                           "use a path relative to the spec's folder")
                continue
            joined = os.path.join(self.folder, rel)
            try:
                resolved = os.path.realpath(joined, strict=True)
            except OSError:
                self.error(pointer, f"input file {rel!r} does not exist",
                           f"create it, or fix the path (relative to {os.path.dirname(self.shown) or '.'})")
                continue
            problem = spec_file_problem(resolved, root=self.root)
            if problem:
                self.error(pointer, f"input file {rel!r} {problem}", SPEC_FILE_HINT)
                continue
            if not os.path.isfile(resolved):
                self.error(pointer, f"input file {rel!r} is not a regular file", "list files, not folders")
                continue
            dest = os.path.basename(rel)
            if dest in staged:
                self.error(pointer, f"input files {entries[staged[dest]]!r} and {rel!r} both stage as {dest!r}",
                           "destinations are flattened to basenames; rename one of the files")
                continue
            staged[dest] = j
            out.append(InputFile(source=resolved, relpath=rel, dest=dest))
        return out

    def _collision_guard(self, base: str, raw: dict[str, Any], inputs: list[InputFile],
                         captured: tuple[str | None, tuple[str, ...]]) -> None:
        output_file, output_files = captured
        names = {f.dest for f in inputs}
        literals = [p for p in output_files if not globmod.has_magic(p)]
        if output_file and not self._clauditor():  # clauditor reads a staged input named so back as the output
            literals.append(output_file)
        for pattern in literals:
            if os.path.basename(pattern) in names:
                where = f"{base}/output_files" if "output_files" in raw else (
                    f"{base}/output_file" if "output_file" in raw else "/output_files")
                self.error(where, f"output {pattern!r} has the same basename as a staged input file",
                           "capture the result under another name or subfolder, or read it from the kept "
                           "workspace's inputs")

    def _clauditor(self) -> bool:
        """Whether this is a translated clauditor spec (adapters/clauditor.py): its loader's rules, not all of ours."""
        seed = getattr(self.src, "seed", None)
        if seed is None or not isinstance(seed.data, dict):
            return False
        from skillmake.spec.adapters.detect import foreign_format

        return foreign_format(frozenset(seed.data), self.path) == "clauditor"

    # --- checks ---------------------------------------------------------------

    def _checks(self, base: str, entries: Any, captured: tuple[str | None, tuple[str, ...]] | None,
                staged: set[str]) -> None:
        seen: dict[str, str] = {}
        bounds: dict[tuple[str, str | None], list[tuple[int, int]]] = {}  # (type, file) -> [(index, bound)]
        for j, raw in enumerate(_list(entries)):
            pointer = f"{base}/checks/{j}"
            if not isinstance(raw, dict):
                continue
            check_id = self._str(raw.get("id"), f"{pointer}/id")
            if check_id is not None:
                self._unique(seen, check_id, f"{pointer}/id", "check id")
            kind = self._str(raw.get("type"), f"{pointer}/type")
            if kind is None:
                continue
            target = raw.get("file")
            if target is not None and self._str(target, f"{pointer}/file") is None:
                continue  # the target failed the schema: its error says it
            if target is not None and captured is not None:
                self._captured_target(pointer, kind, target, captured, staged)
            if kind in _REGEX_KEYS:
                value = self._str(raw.get(_REGEX_KEYS[kind]), f"{pointer}/{_REGEX_KEYS[kind]}")
                if value is not None:
                    self._regex(f"{pointer}/{_REGEX_KEYS[kind]}", value)
            elif kind == "has_format":
                fmt = self._str(raw.get("format"), f"{pointer}/format")
                if fmt is not None and fmt not in FORMATS:
                    self._regex(f"{pointer}/format", fmt, hint_extra=f"{fmt!r} is not a registered format either "
                                                                     f"(see docs: currency_eur … zip_us)")
            elif kind == "json_schema":
                self.errors.extend(json_schema_problems(self, pointer, raw))
            elif kind == "python":
                self.errors.extend(python_problems(self, pointer, raw))
            elif kind == "csv_row_count":
                self._row_count(pointer, raw)
            for low, high, key, _unit in _BOUND_PAIRS:
                if kind in (low, high) and isinstance(raw.get(key), int) and self.clean(f"{pointer}/{key}"):
                    bounds.setdefault((kind, target), []).append((j, raw[key]))
        self._contradicting_bounds(base, bounds)

    def _captured_target(self, pointer: str, kind: str, target: str,
                         captured: tuple[str | None, tuple[str, ...]], staged: set[str]) -> None:
        """A check reads only captured files (checks/base.file_bytes): one that is never captured always fails."""
        output_file, output_files = captured
        wanted = _norm(target)
        if output_file is not None and _norm(output_file) == wanted:
            return
        from skillmake.core.fstree import glob_regex

        if any(glob_regex(_norm(p)).match(wanted) for p in output_files):
            return
        declared = [p for p in (output_file, *output_files) if p]
        now = f"it captures {', '.join(repr(p) for p in declared)}" if declared else "it captures no files"
        if wanted in staged:
            self.error(f"{pointer}/file", f"{kind} check reads {target!r}, a staged input file the case never "
                       f"captures ({now})", "checks see captured output files only: have the agent write its "
                       "result under another name, and add that name to output_files")
            return
        self.error(f"{pointer}/file", f"{kind} check reads {target!r}, which the case never captures ({now})",
                   f"add {target!r} to the case's output_files (checks see captured files only, never the "
                   f"workspace)")

    def _row_count(self, pointer: str, raw: dict[str, Any]) -> None:
        low, high = (raw.get(k) if self.clean(f"{pointer}/{k}") else None for k in ("min", "max"))
        if "count" in raw and ("min" in raw or "max" in raw):
            other = "min" if "min" in raw else "max"
            self.error(f"{pointer}/{other}", f"csv_row_count sets both 'count' and '{other}': count wins, "
                       f"'{other}' is ignored", "keep 'count' for an exact number, or 'min'/'max' for a range")
        elif isinstance(low, int) and isinstance(high, int) and low > high:
            self.error(f"{pointer}/min", f"min {low} is greater than max {high}: no row count can pass",
                       f"swap them (min: {high}, max: {low}), or fix the one that is wrong")

    def _contradicting_bounds(self, base: str, bounds: dict[tuple[str, str | None], list[tuple[int, int]]]) -> None:
        for low_kind, high_kind, key, unit in _BOUND_PAIRS:
            for (kind, target), lows in bounds.items():
                if kind != low_kind:
                    continue
                for j, low in lows:
                    for k, high in bounds.get((high_kind, target), []):
                        if low > high:
                            on = f"content of {target!r}" if target else "output"
                            self.error(f"{base}/checks/{j}/{key}",
                                       f"{low_kind} {low} is greater than the {high_kind} {high} of "
                                       f"{base}/checks/{k}: no {on} can pass both",
                                       f"lower the {low_kind} or raise the {high_kind} (both count {unit})")

    def _section_formats(self, base: str, sections: Any) -> None:
        for s, section in enumerate(_list(sections)):
            for t, tier in enumerate(_list(_dict(section).get("tiers"))):
                for f, fld in enumerate(_list(_dict(tier).get("fields"))):
                    pointer = f"{base}/sections/{s}/tiers/{t}/fields/{f}/format"
                    fmt = self._str(_dict(fld).get("format"), pointer)
                    if fmt and fmt not in FORMATS:
                        self._regex(pointer, fmt)

    def _regex(self, pointer: str, pattern: str, hint_extra: str = "") -> None:
        try:
            re.compile(pattern)
        except re.error as exc:
            hint = "fix the regular expression (Python re syntax); escape literal characters with \\"
            if hint_extra:
                hint = f"{hint_extra}; or {hint}"
            where = f" at position {exc.pos}" if exc.pos is not None else ""
            self.error(pointer, f"bad regular expression {pattern!r}: {exc.msg}{where}", hint)

    def spec_relative(self, pointer: str, rel: str, what: str) -> str | None:
        """A file named relative to the spec's folder, resolved; None (and an error) when it is not usable."""
        if os.path.isabs(rel):
            self.error(pointer, f"absolute {what} path {rel!r}", "use a path relative to the spec's folder")
            return None
        try:
            resolved = os.path.realpath(os.path.join(self.folder, rel), strict=True)
        except OSError:
            self.error(pointer, f"{what} {rel!r} does not exist", "the path is relative to the spec's folder")
            return None
        problem = spec_file_problem(resolved, root=self.root)
        if problem:
            self.error(pointer, f"{what} {rel!r} {problem}", SPEC_FILE_HINT)
            return None
        return resolved

    def locate(self, pointer: str) -> Location:
        return self.src.locate(pointer)


def _norm(path: str) -> str:
    """Workspace-relative paths compare without a leading './' (checks/base.norm_path)."""
    while path.startswith("./"):
        path = path[2:]
    return path
