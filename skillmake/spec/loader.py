"""Loading a spec file: parse with a source map, validate against the schema, check the rules
the schema cannot express (rules.py), and build the frozen model."""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from skillmake.core.errors import Location, SkillmakeError, SpecError, SpecErrors
from skillmake.core.paths import SAFE_NAME_RULE, unsafe_name
from skillmake.spec import trigger_spec
from skillmake.spec.adapters.detect import foreign_format
from skillmake.spec.model import (
    WITH_SKILL,
    WITHOUT_SKILL,
    Adaptive,
    AgentConfig,
    Arm,
    Case,
    Check,
    Criterion,
    InputFile,
    JudgeConfig,
    Spec,
    Thresholds,
)
from skillmake.spec.rules import Rules
from skillmake.spec.schema import spec_errors
from skillmake.spec.source import Source, read_source

if TYPE_CHECKING:
    from skillmake.spec.parsecache import ParseCache

SPEC_SUFFIXES = (".eval.yaml", ".eval.yml", ".eval.json")
_CHECK_COMMON = ("type", "id", "name", "file")


def spec_name_of(path: str) -> str:
    base = os.path.basename(path)
    for suffix in SPEC_SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base.rsplit(".", 1)[0]


def load_spec(path: str, *, root: str | None = None, schema_valid: set[str] | None = None,
              default_agent: Mapping[str, Any] | None = None, parsed: ParseCache | None = None) -> Spec:
    """Load and fully check one spec; raise SpecErrors listing every problem found, in one run (see _load_spec).

    One spec's crash must never stop the others: an unexpected exception while loading it (a bug, a file that
    trips the reader) becomes that spec's one error, at its first line, and the other specs load and run."""
    try:
        return _load_spec(path, root=root, schema_valid=schema_valid, default_agent=default_agent, parsed=parsed)
    except SkillmakeError:
        raise
    except Exception as exc:  # reported as this spec's error, with what it was
        shown = os.path.relpath(path, root) if root else path
        raise SpecErrors([SpecError(f"this spec could not be loaded: {type(exc).__name__}: {exc}"[:500],
                                    loc=Location(path=shown, line=1, col=1),
                                    hint="this is a bug in skillmake; please report it with this spec (the other "
                                         "specs are checked and run)")]) from None


def _load_spec(path: str, *, root: str | None, schema_valid: set[str] | None,
               default_agent: Mapping[str, Any] | None, parsed: ParseCache | None = None) -> Spec:
    """Load and fully check one spec; raise SpecErrors listing every problem found, in one run.

    The schema and the rules it cannot express (rules.py) both run, the rules over every part of the spec
    the schema accepted, so a user fixes a file once, not once per round.

    `schema_valid` is a set of digests of spec texts already known to pass the schema (the schema
    check is a pure function of the text): a hit skips it, a pass is added. The rules that look at
    other files (fixtures, the skill) always run. `parsed`: parses kept by content (parsecache.py), so an
    unchanged file is not parsed again.
    """
    shown = os.path.relpath(path, root) if root else path
    src = read_source_collecting(path, shown, parsed)
    fmt = foreign_format(frozenset(src.data), path, src.data)
    if fmt is not None:
        return _load_seed(fmt, src, path, shown, root=root, default_agent=default_agent)
    folder = os.path.dirname(os.path.abspath(path))
    if lend_agent(src.data, default_agent, spec_folder=folder, root=os.path.abspath(root) if root else folder):
        schema_valid = None  # the text alone no longer decides what the schema sees
    named = _file_name_errors(src, path)
    digest = _file_digest(path) if schema_valid is not None else None
    errors: list[SpecError] = []
    if schema_valid is None or digest not in schema_valid:
        errors = spec_errors(src)
        if not errors and schema_valid is not None and digest is not None:
            schema_valid.add(digest)
    # Without a project root (a library call on one file) the spec's own folder is the root paths must stay in.
    rules = Rules(src, os.path.abspath(path), shown,
                  root=os.path.abspath(root) if root else os.path.dirname(os.path.abspath(path)),
                  bad=[e.loc.pointer for e in errors if e.loc])
    rules.run()
    errors += rules.errors + named
    if errors:
        raise SpecErrors(errors)
    return _build(src.data, rules)


def lend_agent(data: dict[str, Any], default_agent: Mapping[str, Any] | None, *, spec_folder: str,
                root: str) -> bool:
    """A spec that names no agent runs on the project's (`[tool.skillmake] agent`, when it names a kind): the
    agent becomes part of the spec as if written there, so its trials share keys with a spec that writes it.
    Program paths in the config are relative to the project root; in a spec they are relative to its folder, so
    they are rewritten as the spec would write them (`agent.py` → `../../agent.py` for skills/x/evals/evals.json)."""
    if "agent" in data or not default_agent or "kind" not in default_agent:
        return False
    agent = dict(default_agent)
    command = agent.get("command")
    if isinstance(command, list):
        agent["command"] = [_from_spec_folder(arg, spec_folder=spec_folder, root=root) for arg in command]
    data["agent"] = agent
    return True


def _from_spec_folder(arg: str, *, spec_folder: str, root: str) -> str:
    if os.path.isabs(arg) or not os.path.exists(os.path.join(root, arg)) or os.path.samefile(spec_folder, root):
        return arg
    return os.path.relpath(os.path.join(root, arg), spec_folder).replace(os.sep, "/")


def _load_seed(fmt: str, src: Source, path: str, shown: str, *, root: str | None,
               default_agent: Mapping[str, Any] | None = None) -> Spec:
    """A file in another tool's format: its own schema first (errors under its own field names), then its
    translation through the native schema and rules, every error located in the seed file at the seed's pointer."""
    from skillmake.spec import adapters

    if not adapters.supported(fmt):
        raise SpecErrors([SpecError(f"this is a {fmt} spec; reading {fmt} specs is not supported yet",
                                    loc=src.locate(""), hint="see docs/formats.md for its native translation")])
    reader = adapters.adapter(fmt)
    seed_errors = spec_errors(src, reader.schema)
    if seed_errors:
        raise SpecErrors(seed_errors)
    project_root = os.path.abspath(root) if root else os.path.dirname(os.path.abspath(path))
    translation = reader.translate(src, path=os.path.abspath(path), root=project_root)
    if translation.agent_is_default and default_agent and "kind" in default_agent:
        chosen = translation.data.pop("agent")  # its other settings (clauditor's sync_tasks, …) still apply
        lend_agent(translation.data, default_agent, spec_folder=os.path.dirname(os.path.abspath(path)),
                    root=project_root)
        translation.data["agent"].update({k: v for k, v in chosen.items() if k not in ("kind", "command")})
    if not lend_agent(translation.data, default_agent, spec_folder=os.path.dirname(os.path.abspath(path)),
                       root=project_root) and "agent" not in translation.data:
        raise SpecErrors([SpecError(f"this {fmt} spec names no agent, and the project sets none", loc=src.locate(""),
                                    hint=f"{fmt} files never name one: set it for the project, e.g. in "
                                         "skillmake.toml `agent = {kind = \"claude-code\"}` (or [tool.skillmake] "
                                         "agent in pyproject.toml)")])
    native = adapters.TranslatedSource(path=shown, data=translation.data, seed=src, translation=translation)
    errors = spec_errors(native)
    if translation.empty:  # the native schema asks for a case; the seed's tool runs none (the adapter warns)
        errors = [e for e in errors if not (e.loc and e.loc.pointer == "/cases")]
    rules = Rules(native, os.path.abspath(path), shown, root=project_root,
                  bad=[e.loc.pointer for e in errors if e.loc])
    rules.run()
    errors += rules.errors
    if errors:
        # Shown under the seed's own names: the pointer a seed user can find in their file.
        raise SpecErrors([SpecError(e.message, hint=e.hint, loc=dataclasses.replace(
            e.loc, pointer=translation.seed_pointer(e.loc.pointer))) if e.loc else e for e in errors])
    return dataclasses.replace(_build(native.data, rules), format=fmt, notes=tuple(translation.notes))


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
    try:
        h = _schema_hash().copy()
        with open(path, "rb") as f:
            h.update(f.read())
    except OSError:
        return None
    return h.hexdigest()


@functools.cache
def _schema_hash() -> Any:
    """sha256 of the schema rules and the spec schema, once per process (finding the schema costs ~2 ms)."""
    import hashlib

    from skillmake.spec.schema import SPEC, schema_path

    with open(schema_path(SPEC), "rb") as f:
        return hashlib.sha256(_SCHEMA_RULES + f.read())


def read_source_collecting(path: str, shown: str, parsed: ParseCache | None = None) -> Source:
    try:
        src = parsed.read(path) if parsed is not None else read_source(path)
    except SpecError as exc:
        lenient = _caliper_with_duplicates(path, exc)
        if lenient is not None:
            lenient.path = shown
            return lenient
        loc = exc.loc and dataclasses.replace(exc.loc, path=shown)
        raise SpecErrors([SpecError(exc.message, loc=loc, hint=exc.hint)]) from None
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


def _caliper_with_duplicates(path: str, exc: SpecError) -> Source | None:
    """A caliper file with a duplicate YAML key, read as caliper reads it (PyYAML: the last value wins; the
    adapter warns); None for any other file or error, which stays refused."""
    if not exc.message.startswith("duplicate key") or path.endswith(".json"):
        return None
    try:
        src = read_source(path, duplicates_ok=True)
    except (SpecError, OSError):
        return None
    data = src.data
    return src if isinstance(data, dict) and foreign_format(frozenset(data), path, data) == "caliper" else None


def _build(data: dict[str, Any], rules: Rules) -> Spec:
    """The frozen model of a spec that passed the schema and every rule."""
    agent = _agent(data["agent"])
    arms = [Arm(name=WITH_SKILL, agent=agent, skill=True)]
    if data.get("baseline"):
        arms.append(Arm(name=WITHOUT_SKILL, agent=agent, skill=False))
    for variant in data.get("variants", []):
        merged = {**data["agent"], **variant.get("agent", {})}
        arms.append(Arm(name=variant["name"], agent=_agent(merged), skill=variant.get("skill", True)))
    judge = data.get("judge", {})
    sandbox = data.get("sandbox", {})
    assert rules.skill is not None
    return Spec(
        name=data.get("name") or spec_name_of(rules.path), path=rules.path, relpath=rules.shown, skill=rules.skill,
        agent=agent, arms=tuple(arms), cases=tuple(_case(data, raw, i, rules.inputs[i], rules.rendered.get(i))
                                                   for i, raw in enumerate(data["cases"])),
        trials=_trials(data.get("trials", 1)), adaptive=_adaptive(data.get("trials")),
        timeout=float(data.get("timeout", 300)), description=data.get("description"),
        system_prompt=data.get("system_prompt"),
        judge=JudgeConfig(provider=judge.get("provider"), model=judge.get("model"),
                          pass_threshold=judge.get("pass_threshold", 4), temperature=judge.get("temperature"),
                          batch=judge.get("batch")),
        thresholds=_thresholds(data.get("thresholds", {})),
        forbidden_files=tuple(sandbox.get("forbidden_files", ())),
        extra_path=tuple(sandbox.get("extra_path", ())),
        trigger_tests=trigger_spec.build(data.get("trigger_tests"), agent=agent, folder=rules.folder,
                                         make_agent=_agent, base_agent=data["agent"], root=rules.root),
        tags=tuple(data.get("tags", ())),
        declared=frozenset(data))


def _case(data: dict[str, Any], raw: dict[str, Any], i: int, inputs: list[InputFile],
          rendered: str | None = None) -> Case:
    checks = tuple(Check(type=c["type"], index=j, id=c.get("id"), name=c.get("name"), file=c.get("file"),
                         params={k: v for k, v in c.items() if k not in _CHECK_COMMON}, raw=c)
                   for j, c in enumerate(raw.get("checks", [])))
    texts, names, types = _expectations(raw.get("expectations", ()))
    return Case(
        id=raw["id"], index=i, eval_id=raw.get("eval_id"), prompt=raw.get("prompt", rendered), args=raw.get("args"),
        description=raw.get("description"), user_prompt=raw.get("user_prompt"), setup=raw.get("setup"),
        cleanup=raw.get("cleanup"), input_files=tuple(inputs),
        output_file=raw.get("output_file", data.get("output_file")),
        output_files=tuple(raw.get("output_files", data.get("output_files", ()))), timeout=raw.get("timeout"),
        checks=checks, rubric=raw.get("rubric"), pass_threshold=raw.get("pass_threshold"),
        judge_model=raw.get("judge", {}).get("model"),
        expectations=texts, expectation_names=names, expectation_types=types,
        expected_output=raw.get("expected_output"),
        criteria=tuple(Criterion(id=c.get("id") or f"criterion-{j}", criterion=c["criterion"])
                       for j, c in enumerate(raw.get("criteria", []))),
        sections=tuple(raw.get("sections", ())), tags=tuple(raw.get("tags", ())),
        required=raw.get("required", False), raw=raw)


def _expectations(items: Any) -> tuple[tuple[str, ...], tuple[str | None, ...], tuple[str | None, ...]]:
    """Texts, names and types of `expectations` (each a string or {text, name, type}). The texts alone are what a
    plain-string spec had, so its grade key is unchanged; names and types stay empty unless one is given."""
    texts = tuple(e if isinstance(e, str) else e["text"] for e in items)

    def labels(key: str) -> tuple[str | None, ...]:
        found = tuple(None if isinstance(e, str) else e.get(key) for e in items)
        return found if any(v is not None for v in found) else ()
    return texts, labels("name"), labels("type")


def _agent(raw: dict[str, Any]) -> AgentConfig:
    command = raw.get("command")
    return AgentConfig(
        kind=raw["kind"], command=tuple(command) if isinstance(command, list) else command, model=raw.get("model"),
        max_turns=raw.get("max_turns"), max_tokens=raw.get("max_tokens"), budget_usd=raw.get("budget_usd"),
        flags=tuple(raw.get("flags", ())), env=tuple(sorted(raw.get("env", {}).items())),
        pass_env=tuple(raw.get("pass_env", ())), allowed_tools=tuple(raw.get("allowed_tools", ())),
        sync_tasks=raw.get("sync_tasks", False), allow_hang_heuristic=raw.get("allow_hang_heuristic", True))


def _trials(given: Any) -> int:
    """The trials a cell may run: the count, or an adaptive spec's max."""
    return int(given["max"]) if isinstance(given, Mapping) else int(given)


def _adaptive(given: Any) -> Adaptive | None:
    """`trials: {min, max, decide, batch, alpha, inconclusive}` from validated data (rules.py checks min <= max)."""
    if not isinstance(given, Mapping):
        return None
    least = min(int(given.get("min", 3)), int(given["max"]))
    return Adaptive(least=least, most=int(given["max"]), decide=float(given["decide"]),
                    batch=int(given.get("batch", least)), alpha=float(given.get("alpha", 0.05)),
                    inconclusive=str(given.get("inconclusive", "fail")))


def _thresholds(data: Mapping[str, Any]) -> Thresholds:
    """Thresholds from validated data: `min_pass_rate` is a number (the point) or {value, on: point|lower|upper}."""
    given = dict(data)
    rate = given.get("min_pass_rate")
    if isinstance(rate, Mapping):
        given["min_pass_rate"] = rate["value"]
        given["min_pass_rate_on"] = rate.get("on", "point")
    return Thresholds(**given)
