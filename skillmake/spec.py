"""Loading a spec file: parse with a source map, validate against the schema, check the rules
the schema cannot express (files, regexes, ids), and build the frozen model."""

from __future__ import annotations

import glob as globmod
import os
import re
from typing import Any

from .errors import Location, SpecError, SpecErrors
from .formats import FORMATS
from .model import (
    WITH_SKILL,
    WITHOUT_SKILL,
    AgentConfig,
    Arm,
    Case,
    Check,
    Criterion,
    InputFile,
    JudgeConfig,
    Skill,
    Spec,
    Thresholds,
)
from .paths import (
    ALLOWED_ROOTS_VAR,
    LINK_HINT,
    MAX_NAME,
    SAFE_NAME_RULE,
    allowed_roots,
    link_problems,
    unsafe_name,
    within,
    workspace_path_problem,
)
from .schema import spec_errors
from .source import Source, read_source

SPEC_SUFFIXES = (".eval.yaml", ".eval.yml", ".eval.json")
_CHECK_COMMON = ("type", "id", "name", "file")
_REGEX_KEYS = {"regex": "pattern", "min_count": "pattern", "matches": "pattern", "not_matches": "pattern"}


def spec_name_of(path: str) -> str:
    base = os.path.basename(path)
    for suffix in SPEC_SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base.rsplit(".", 1)[0]


def load_spec(path: str, *, root: str | None = None, schema_valid: set[str] | None = None) -> Spec:
    """Load and fully check one spec; raise SpecErrors listing every problem found.

    `schema_valid` is a set of digests of spec texts already known to pass the schema (the schema
    check is a pure function of the text): a hit skips it, a pass is added. The checks that look at
    other files (fixtures, the skill) always run.
    """
    shown = os.path.relpath(path, root) if root else path
    src = read_source_collecting(path, shown)
    named = _file_name_errors(src, path)
    digest = _file_digest(path) if schema_valid is not None else None
    if schema_valid is None or digest not in schema_valid:
        errors = spec_errors(src)
        if errors:
            raise SpecErrors(errors + named)
        if schema_valid is not None and digest is not None:
            schema_valid.add(digest)
    # Without a project root (a library call on one file) the spec's own folder is the root paths must stay in.
    builder = _Builder(src, os.path.abspath(path), shown,
                       root=os.path.abspath(root) if root else os.path.dirname(os.path.abspath(path)))
    builder.errors.extend(named)
    return builder.build()


def _file_name_errors(src: Source, path: str) -> list[SpecError]:
    """A spec without `name:` is named after its file, and that name becomes folders and task names."""
    if "name" in src.data:
        return []
    name = spec_name_of(path)
    problem = unsafe_name(name)
    if problem is None:
        return []
    base = os.path.basename(path)
    suffix = next((s for s in SPEC_SUFFIXES if base.endswith(s)), "")
    return [SpecError(f"the spec name {name!r}, taken from the file name {base!r}, {problem}",
                      loc=Location(path=src.path, line=1, col=1),
                      hint=f"rename the file: the part before {suffix or 'the extension'} must be {SAFE_NAME_RULE} "
                           f"(or set `name:` in the spec)")]


# Bump when spec_errors judges the same text differently (a cached "passed the schema" must not outlive it).
_SCHEMA_RULES = b"schema-rules:2 strict-integers finite-numbers\n"


def _file_digest(path: str) -> str | None:
    """sha256 of the schema rules, the spec schema and the spec file's bytes together."""
    import hashlib

    from .schema import SPEC, schema_path

    try:
        with open(schema_path(SPEC), "rb") as f:
            h = hashlib.sha256(_SCHEMA_RULES + f.read())
        with open(path, "rb") as f:
            h.update(f.read())
    except OSError:
        return None
    return h.hexdigest()


def read_source_collecting(path: str, shown: str) -> Source:
    try:
        src = read_source(path)
    except SpecError as exc:
        raise SpecErrors([exc]) from None
    except OSError as exc:
        raise SpecErrors([SpecError(f"cannot read: {exc.strerror}", loc=Location(path=shown),
                                    hint="check the path and its permissions")]) from None
    src.path = shown
    if src.data is None:
        raise SpecErrors([SpecError("the spec is empty", loc=src.locate(""),
                                    hint="write 'skill', 'agent' and 'cases' (see examples/shout.eval.yaml)")])
    if not isinstance(src.data, dict):
        raise SpecErrors([SpecError("a spec must be a mapping with 'skill', 'agent' and 'cases'",
                                    loc=src.locate(""), hint="see examples/ for a complete spec")])
    return src


class _Builder:
    """Checks what the schema cannot, collecting every error, then builds the Spec."""

    def __init__(self, src: Source, path: str, shown: str, *, root: str) -> None:
        self.src = src
        self.root = root
        self.data: dict[str, Any] = src.data
        self.path = path
        self.folder = os.path.dirname(path)
        self.real_folder = os.path.realpath(self.folder)
        self.shown = shown
        self.errors: list[SpecError] = []

    def _shown(self, path: str) -> str:
        """`path` as the user sees it: relative to the project root when inside it."""
        rel = os.path.relpath(path, self.root)
        return path if rel.startswith("..") else rel

    def error(self, pointer: str, message: str, hint: str | None = None, *, key: bool = False) -> None:
        self.errors.append(SpecError(message, loc=self.src.locate(pointer, key=key), hint=hint))

    def build(self) -> Spec:
        data = self.data
        skill = self._skill()
        agent = _agent(data["agent"])
        arms = [Arm(name=WITH_SKILL, agent=agent, skill=True)]
        if data.get("baseline"):
            arms.append(Arm(name=WITHOUT_SKILL, agent=agent, skill=False))
        seen_variants: dict[str, int] = {}
        for i, variant in enumerate(data.get("variants", [])):
            if variant["name"] in seen_variants:
                self.error(f"/variants/{i}/name", f"duplicate variant name {variant['name']!r}",
                           f"it is already used by /variants/{seen_variants[variant['name']]}; rename one")
            seen_variants[variant["name"]] = i
            self._name(f"/variants/{i}/name", "variant name", variant["name"])
            merged = {**data["agent"], **variant.get("agent", {})}
            if merged.get("kind") == "command" and "command" not in merged:
                self.error(f"/variants/{i}/agent", "a command agent needs 'command'", "add 'command'")
                continue
            arms.append(Arm(name=variant["name"], agent=_agent(merged), skill=variant.get("skill", True)))
        sandbox = data.get("sandbox", {})
        for i, pattern in enumerate(sandbox.get("forbidden_files", [])):
            self._regex(f"/sandbox/forbidden_files/{i}", pattern)
        for key in ("output_file", "output_files"):
            self._workspace_paths(f"/{key}", data.get(key))
        if "name" in data:
            self._name("/name", "spec name", data["name"])
        cases = self._cases()
        if self.errors:
            raise SpecErrors(self.errors)
        judge = data.get("judge", {})
        th = data.get("thresholds", {})
        triggers = data.get("trigger_tests", {})
        assert skill is not None
        return Spec(
            name=data.get("name") or spec_name_of(self.path), path=self.path, relpath=self.shown, skill=skill,
            agent=agent, arms=tuple(arms), cases=tuple(cases), trials=data.get("trials", 1),
            timeout=float(data.get("timeout", 300)), description=data.get("description"),
            system_prompt=data.get("system_prompt"),
            judge=JudgeConfig(provider=judge.get("provider"), model=judge.get("model"),
                              pass_threshold=judge.get("pass_threshold", 4)),
            thresholds=Thresholds(**th),
            forbidden_files=tuple(sandbox.get("forbidden_files", ())),
            extra_path=tuple(sandbox.get("extra_path", ())),
            trigger_tests={k: tuple(v) for k, v in triggers.items()}, tags=tuple(data.get("tags", ())))

    def _name(self, pointer: str, what: str, name: str) -> None:
        """Names become folders under .skillmake/ and task names: the schema's pattern, checked in full here."""
        problem = unsafe_name(name)
        if problem:
            self.error(pointer, f"{what} {name!r} {problem}", f"use {SAFE_NAME_RULE}, at most {MAX_NAME} characters")

    def _workspace_paths(self, pointer: str, value: str | list[str] | None) -> None:
        """Outputs are captured from the trial's workspace: a path must not lead out of it."""
        for i, path in enumerate([value] if isinstance(value, str) else value or []):
            problem = workspace_path_problem(path)
            if problem:
                where = pointer if isinstance(value, str) else f"{pointer}/{i}"
                self.error(where, f"output path {path!r} {problem}",
                           "outputs are captured from the trial's workspace: write a path relative to it, "
                           "without '..' (like out/result.json)")

    def _skill(self) -> Skill | None:
        rel = self.data["skill"]
        path = os.path.normpath(os.path.join(self.folder, os.path.expanduser(rel)))
        if (os.path.isdir(path) or os.path.isfile(path)) and not self._skill_allowed(rel, path):
            return None
        if os.path.isdir(path):
            if not os.path.isfile(os.path.join(path, "SKILL.md")):
                self.error("/skill", f"{rel!r} is a folder without SKILL.md",
                           "point 'skill' at a folder that holds SKILL.md, or at a command .md file")
                return None
            return self._skill_folder(rel, path)
        if os.path.isfile(path):
            if os.path.basename(path) == "SKILL.md":
                return self._skill_folder(rel, os.path.dirname(path))
            if not path.endswith(".md"):
                self.error("/skill", f"{rel!r} is not a .md file",
                           "point 'skill' at a SKILL.md folder or a command .md")
                return None
            return Skill(name=os.path.basename(path)[:-3], path=path, kind="command")
        self.error("/skill", f"skill {rel!r} does not exist (looked at {self._shown(path)})",
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

    def _skill_folder(self, rel: str, folder: str) -> Skill | None:
        """A skill folder whose links all stay inside it (the whole tree is hashed and installed)."""
        problems = link_problems(folder)
        for name, problem in problems:
            self.error("/skill", f"skill file {name!r} {problem}", LINK_HINT)
        if problems:
            return None
        return Skill(name=os.path.basename(folder), path=folder, kind="folder")

    def _cases(self) -> list[Case]:
        data = self.data
        seen: dict[str, int] = {}
        cases = []
        for i, raw in enumerate(data["cases"]):
            base = f"/cases/{i}"
            if raw["id"] in seen:
                self.error(f"{base}/id", f"duplicate case id {raw['id']!r}",
                           f"it is already used by /cases/{seen[raw['id']]}; ids must be unique in a spec")
            seen[raw["id"]] = i
            self._name(f"{base}/id", "case id", raw["id"])
            inputs = self._input_files(base, raw.get("input_files", []))
            output_file = raw.get("output_file", data.get("output_file"))
            output_files = tuple(raw.get("output_files", data.get("output_files", ())))
            for key in ("output_file", "output_files"):
                self._workspace_paths(f"{base}/{key}", raw.get(key))
            self._collision_guard(base, raw, inputs, output_file, output_files)
            checks = self._checks(base, raw.get("checks", []))
            cases.append(Case(
                id=raw["id"], index=i, prompt=raw.get("prompt"), args=raw.get("args"),
                description=raw.get("description"), user_prompt=raw.get("user_prompt"), setup=raw.get("setup"),
                cleanup=raw.get("cleanup"), input_files=tuple(inputs), output_file=output_file,
                output_files=output_files, timeout=raw.get("timeout"), checks=tuple(checks),
                rubric=raw.get("rubric"), pass_threshold=raw.get("pass_threshold"),
                expectations=tuple(raw.get("expectations", ())), expected_output=raw.get("expected_output"),
                criteria=tuple(Criterion(id=c.get("id") or f"criterion-{j}", criterion=c["criterion"])
                               for j, c in enumerate(raw.get("criteria", []))),
                sections=tuple(raw.get("sections", ())), tags=tuple(raw.get("tags", ())),
                required=raw.get("required", False), raw=raw))
            self._section_formats(base, raw.get("sections", []))
            if not checks and not cases[-1].has_judge:
                hint = "add checks, a rubric, expectations, criteria or sections"
                if raw.get("expected_output"):
                    hint += " (expected_output alone grades nothing: it is context for a judge)"
                self.error(base, f"case {raw['id']!r} has nothing to grade", hint)
        return cases

    def _input_files(self, base: str, entries: list[str]) -> list[InputFile]:
        """clauditor's rules: relative, contained after symlinks, existing, unique basenames."""
        staged: dict[str, int] = {}
        out = []
        for j, rel in enumerate(entries):
            pointer = f"{base}/input_files/{j}"
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
            if os.path.commonpath([resolved, self.real_folder]) != self.real_folder:
                outside = os.path.relpath(resolved, self.real_folder)
                self.error(pointer, f"input file {rel!r} resolves outside the spec's folder (to {outside})",
                           "input files must live under the spec's folder (symlinks are followed)")
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

    def _collision_guard(self, base: str, raw: dict[str, Any], inputs: list[InputFile], output_file: str | None,
                         output_files: tuple[str, ...]) -> None:
        names = {f.dest for f in inputs}
        literals = [p for p in output_files if not globmod.has_magic(p)]
        if output_file:
            literals.append(output_file)
        for pattern in literals:
            if os.path.basename(pattern) in names:
                where = f"{base}/output_files" if "output_files" in raw else (
                    f"{base}/output_file" if "output_file" in raw else "/output_files")
                self.error(where, f"output {pattern!r} has the same basename as a staged input file",
                           "capture the result under another name or subfolder, or read it from the kept "
                           "workspace's inputs")

    def _checks(self, base: str, entries: list[dict[str, Any]]) -> list[Check]:
        out = []
        seen: dict[str, int] = {}
        for j, raw in enumerate(entries):
            pointer = f"{base}/checks/{j}"
            kind = raw["type"]
            if "id" in raw:
                if raw["id"] in seen:
                    self.error(f"{pointer}/id", f"duplicate check id {raw['id']!r}",
                               f"it is already used by {base}/checks/{seen[raw['id']]}")
                seen[raw["id"]] = j
            if kind in _REGEX_KEYS:
                self._regex(f"{pointer}/{_REGEX_KEYS[kind]}", raw[_REGEX_KEYS[kind]])
            elif kind == "has_format" and raw["format"] not in FORMATS:
                self._regex(f"{pointer}/format", raw["format"],
                            hint_extra=f"{raw['format']!r} is not a registered format either "
                                       f"(see docs: currency_eur … zip_us)")
            elif kind == "json_schema":
                self._json_schema(pointer, raw)
            elif kind == "python":
                self._python(pointer, raw)
            params = {k: v for k, v in raw.items() if k not in _CHECK_COMMON}
            out.append(Check(type=kind, index=j, id=raw.get("id"), name=raw.get("name"), file=raw.get("file"),
                             params=params, raw=raw))
        return out

    def _section_formats(self, base: str, sections: list[dict[str, Any]]) -> None:
        for s, section in enumerate(sections):
            for t, tier in enumerate(section["tiers"]):
                for f, fld in enumerate(tier["fields"]):
                    fmt = fld.get("format")
                    if fmt and fmt not in FORMATS:
                        self._regex(f"{base}/sections/{s}/tiers/{t}/fields/{f}/format", fmt)

    def _regex(self, pointer: str, pattern: str, hint_extra: str = "") -> None:
        try:
            re.compile(pattern)
        except re.error as exc:
            hint = "fix the regular expression (Python re syntax); escape literal characters with \\"
            if hint_extra:
                hint = f"{hint_extra}; or {hint}"
            self.error(pointer, f"bad regular expression {pattern!r}: {exc.msg} at position {exc.pos}", hint)

    def _spec_relative(self, pointer: str, rel: str, what: str) -> str | None:
        if os.path.isabs(rel):
            self.error(pointer, f"absolute {what} path {rel!r}", "use a path relative to the spec's folder")
            return None
        try:
            resolved = os.path.realpath(os.path.join(self.folder, rel), strict=True)
        except OSError:
            self.error(pointer, f"{what} {rel!r} does not exist", "the path is relative to the spec's folder")
            return None
        if os.path.commonpath([resolved, self.real_folder]) != self.real_folder:
            self.error(pointer, f"{what} {rel!r} resolves outside the spec's folder",
                       "keep it under the spec's folder")
            return None
        return resolved

    def _json_schema(self, pointer: str, raw: dict[str, Any]) -> None:
        from jsonschema import Draft202012Validator, SchemaError, validators

        if "schema_file" in raw:
            resolved = self._spec_relative(f"{pointer}/schema_file", raw["schema_file"], "schema file")
            if resolved is None:
                return
            try:
                import orjson
                with open(resolved, "rb") as f:
                    schema = orjson.loads(f.read())
            except ValueError as exc:
                self.error(f"{pointer}/schema_file", f"schema file is not valid JSON: {exc}", "fix the file")
                return
            where = f"{pointer}/schema_file"
        else:
            schema, where = raw["schema"], f"{pointer}/schema"
        cls = validators.validator_for(schema, default=Draft202012Validator) if isinstance(schema, dict) else None
        try:
            if cls is not None:
                cls.check_schema(schema)
        except SchemaError as exc:
            self.error(where, f"not a valid JSON Schema: {exc.message}", "fix the schema")

    def _python(self, pointer: str, raw: dict[str, Any]) -> None:
        if "script" in raw:
            self._spec_relative(f"{pointer}/script", raw["script"], "script")
            return
        try:
            compile(raw["code"], f"{self.shown}{pointer}", "exec")
        except SyntaxError as exc:
            line, col = self._code_position(f"{pointer}/code", exc.lineno or 1, exc.offset or 1)
            self.errors.append(SpecError(f"Python syntax error in code: {exc.msg} (code line {exc.lineno})",
                                         loc=Location(path=self.shown, line=line, col=col, pointer=f"{pointer}/code"),
                                         hint="fix the inline Python"))

    def _code_position(self, pointer: str, code_line: int, code_col: int) -> tuple[int, int]:
        """Where line `code_line` of a YAML block scalar (`code: |`) is in the file; else the value's start."""
        line, col = self.src.positions.get(pointer, (1, 1))
        try:
            with open(self.path, encoding="utf-8") as f:
                lines = f.read().splitlines()
            indicator = lines[line - 1][col - 1:].lstrip()[:1]
        except (OSError, IndexError, UnicodeDecodeError):
            return line, col
        if indicator not in ("|", ">") or line + code_line > len(lines):
            return line, col
        text = lines[line - 1 + code_line]
        indent = len(text) - len(text.lstrip())
        return line + code_line, indent + code_col


def _agent(raw: dict[str, Any]) -> AgentConfig:
    command = raw.get("command")
    return AgentConfig(
        kind=raw["kind"], command=tuple(command) if isinstance(command, list) else command, model=raw.get("model"),
        max_turns=raw.get("max_turns"), max_tokens=raw.get("max_tokens"), budget_usd=raw.get("budget_usd"),
        flags=tuple(raw.get("flags", ())), env=tuple(sorted(raw.get("env", {}).items())),
        pass_env=tuple(raw.get("pass_env", ())), allowed_tools=tuple(raw.get("allowed_tools", ())),
        sync_tasks=raw.get("sync_tasks", False), allow_hang_heuristic=raw.get("allow_hang_heuristic", True))


_SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".skillmake", "node_modules", "__pycache__", ".venv", "venv",
                        ".tox", ".nox", ".mypy_cache", ".ruff_cache", ".pytest_cache", "site-packages", ".tools"})


def discover(root: str) -> list[str]:
    """Every spec file under `root`, sorted, skipping VCS, caches, virtualenvs and node_modules."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS
                         and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg")))
        found.extend(os.path.join(folder, f) for f in files if f.endswith(SPEC_SUFFIXES))
    return sorted(found)
