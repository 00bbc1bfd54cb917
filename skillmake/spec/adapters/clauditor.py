"""clauditor's `<skill>.eval.json`, read unchanged: one case (the skill run with `test_args`) plus spec-wide
settings, translated into a native spec. The skill is implied by placement (`<name>.md` beside the file, or the
SKILL.md folder it is in); the agent and the judge by clauditor's precedence: its command-line flag (`--harness`,
`--transport`, `--grading-provider`, `--sync-tasks`: skillmake takes them too, see FLAGS_VAR), then the CLAUDITOR_*
variable, then the spec's field, then `auto`."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from typing import Any

from skillmake.core.errors import SpecError, SpecErrors
from skillmake.spec.adapters import Translation
from skillmake.spec.adapters import clauditor_loader as loader
from skillmake.spec.adapters.clauditor_assertions import field_format, native_check
from skillmake.spec.adapters.detect import seed_spec_name
from skillmake.spec.formats import CLAUDITOR_FORMATS
from skillmake.spec.source import Source

SUFFIX = ".eval.json"
# clauditor's defaults where its reference states one and skillmake's differs.
_FIELD_REQUIRED = True  # a section field is required unless it says otherwise (skillmake's default is false)
# The environment variables clauditor reads between its command-line flags and the spec.
HARNESS_ENV, TRANSPORT_ENV, PROVIDER_ENV = "CLAUDITOR_HARNESS", "CLAUDITOR_TRANSPORT", "CLAUDITOR_GRADING_PROVIDER"
_OPENAI_MODEL = re.compile(r"^(gpt-|o[0-9])")
# variable → (what it names, its allowed values, the spec key it overrides); clauditor exits 2 on any other value.
ENV_CHOICES: dict[str, tuple[str, tuple[str, ...], str]] = {
    HARNESS_ENV: ("harness", ("claude-code", "codex", "auto"), "harness"),
    TRANSPORT_ENV: ("transport", ("api", "cli", "auto"), "transport"),
    PROVIDER_ENV: ("grading provider", ("anthropic", "openai", "auto"), "grading_provider"),
}


# clauditor's flags given to this run (`skillmake clauditor grade --harness codex`, or `skillmake --harness codex`):
# JSON {"harness", "transport", "grading_provider", "sync_tasks"}, set by the front end so doit's workers see it too.
FLAGS_VAR = "SKILLMAKE_CLAUDITOR_FLAGS"
FLAG_OPTIONS = {"harness": "--harness", "transport": "--transport", "grading_provider": "--grading-provider",
                "sync_tasks": "--sync-tasks"}


def flags(environ: Mapping[str, str]) -> dict[str, Any]:
    """clauditor's command-line flags for this run ({} when none were given)."""
    try:
        given = json.loads(environ.get(FLAGS_VAR) or "{}")
    except ValueError:
        return {}
    return {k: v for k, v in given.items() if k in FLAG_OPTIONS and v} if isinstance(given, dict) else {}


def chosen(environ: Mapping[str, str], var: str) -> tuple[str, str]:
    """The value that overrides the spec's field for `var`'s setting, and where it came from: clauditor's flag,
    then the CLAUDITOR_* variable; ("", "") when neither gives one."""
    key = ENV_CHOICES[var][2]
    flag = flags(environ).get(key)
    if flag in ENV_CHOICES[var][1]:
        return str(flag), FLAG_OPTIONS[key]
    value = env_value(environ, var)
    return (value, f"${var}") if value else ("", "")


class EnvValueError(SpecError):
    """A CLAUDITOR_* variable holds a value clauditor refuses (it exits 2): not silently ignored here either."""

    def __init__(self, var: str, value: str) -> None:
        what, allowed, key = ENV_CHOICES[var]
        shown = ", ".join(allowed[:-1]) + f" or {allowed[-1]}"
        self.var = var
        super().__init__(f"${var} is {value!r}, not a {what} (clauditor accepts {shown})",
                         hint=f"set {var} to {shown}, or unset it (it overrides the spec's {key!r})")


def env_value(environ: Mapping[str, str], var: str) -> str:
    """A CLAUDITOR_* variable's value, "" when unset or empty; EnvValueError when clauditor would refuse it."""
    value = environ.get(var, "").strip()
    if value and value not in ENV_CHOICES[var][1]:
        raise EnvValueError(var, value)
    return value


def claude_found(environ: Mapping[str, str]) -> bool:
    """Whether `claude` is there for `auto` to choose: SKILLMAKE_CLAUDE (the path the claude-code agent uses)
    or PATH, as clauditor's `shutil.which("claude")`."""
    explicit = environ.get("SKILLMAKE_CLAUDE")
    if explicit:
        return bool(shutil.which(explicit) if os.sep not in explicit else os.access(explicit, os.X_OK))
    return shutil.which("claude", path=environ.get("PATH")) is not None


def harness(data: Mapping[str, Any], environ: Mapping[str, str]) -> tuple[str, str]:
    """The agent kind a clauditor spec runs on, and why: --harness, CLAUDITOR_HARNESS, then `harness`, then auto
    (claude-code when claude is found, else codex)."""
    value, source = chosen(environ, HARNESS_ENV)
    if not value:
        value, source = data.get("harness", "auto"), "harness"
    if value == "auto":
        found = claude_found(environ)
        return ("claude-code" if found else "codex"), f"{source} auto: claude {'found' if found else 'not found'}"
    return value, source


def judge_provider(data: Mapping[str, Any], environ: Mapping[str, str]) -> tuple[str, str]:
    """The judge provider: grading_provider (--grading-provider, then CLAUDITOR_GRADING_PROVIDER first; auto
    infers it from the model, falling back to anthropic), then for anthropic the transport (--transport, then
    CLAUDITOR_TRANSPORT first): api → the SDK, cli → the claude binary, auto → cli when claude is found."""
    provider = chosen(environ, PROVIDER_ENV)[0]
    if not provider:
        provider = data.get("grading_provider") or "auto"
    if provider == "auto":
        model = data.get("grading_model") or ""
        provider = "openai" if _OPENAI_MODEL.match(model) else "anthropic"
    if provider == "openai":
        return "openai", "/grading_provider"
    transport = chosen(environ, TRANSPORT_ENV)[0]
    if not transport:
        transport = data.get("transport", "auto")
    if transport == "auto":
        transport = "cli" if claude_found(environ) else "api"
    return ("claude-code" if transport == "cli" else "anthropic"), "/transport"


# `skillmake clauditor CMD SKILL --eval PATH`: JSON {"eval": PATH, "skill": SKILL} (absolute), set by the front end so
# the spec at PATH, wherever it is, runs on the skill the command line names, as clauditor's --eval.
EVAL_VAR = "SKILLMAKE_CLAUDITOR_EVAL"


def eval_skill(path: str, environ: Mapping[str, str]) -> str | None:
    """The skill (absolute: a command .md, a SKILL.md or its folder) that --eval gives the spec `path`, else None."""
    try:
        given = json.loads(environ.get(EVAL_VAR) or "{}")
    except ValueError:
        return None
    if not (isinstance(given, dict) and isinstance(given.get("eval"), str) and isinstance(given.get("skill"), str)):
        return None
    return given["skill"] if os.path.abspath(given["eval"]) == os.path.abspath(path) else None


def stray(path: str, root: str, environ: Mapping[str, str]) -> bool:
    """A clauditor spec with no skill beside it and none from --eval: clauditor uses such a file only through
    `--eval`, so a project search leaves it alone (discovery.py) instead of failing the project's validate."""
    return skill_of(path, root, environ) is None


def skill_of(path: str, root: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Where the skill of the clauditor spec `path` is, relative to the spec's folder: the one --eval gives it,
    else `<stem>.md` beside it (clauditor's `X.md` → `X.eval.json`), else the nearest folder holding SKILL.md from
    the spec's folder up to `root` (`SKILL.eval.json` beside SKILL.md, or an `assets/` folder inside the skill)."""
    folder = os.path.dirname(path)
    given = eval_skill(path, os.environ if environ is None else environ)
    if given is not None:
        skill = os.path.dirname(given) if os.path.basename(given) == "SKILL.md" else given
        return os.path.relpath(skill, folder).replace(os.sep, "/")
    stem = os.path.basename(path)[: -len(SUFFIX)] if path.endswith(SUFFIX) else ""
    if stem and stem != "SKILL" and os.path.isfile(os.path.join(folder, f"{stem}.md")):
        return f"{stem}.md"
    probe, top = folder, os.path.abspath(root)
    while True:
        if os.path.isfile(os.path.join(probe, "SKILL.md")):
            return os.path.relpath(probe, folder)
        if probe == top or os.path.dirname(probe) == probe or not probe.startswith(top + os.sep):
            return None
        probe = os.path.dirname(probe)


class ClauditorAdapter:
    format = "clauditor"
    schema = "clauditor.schema.json"

    def translate(self, src: Source, *, path: str, root: str,
                  environ: Mapping[str, str] | None = None) -> Translation:
        data: dict[str, Any] = {k: v for k, v in src.data.items() if v is not None}
        env = os.environ if environ is None else environ
        errors: list[SpecError] = []
        skill = skill_of(path, root, env)
        stem = os.path.basename(path)[: -len(SUFFIX)] if path.endswith(SUFFIX) else os.path.basename(path)
        # A bare `eval.json` (or SKILL.eval.json) is named after its skill folder: so is its case, by default.
        name = seed_spec_name(self.format, path)
        for var, (_, _, key) in ENV_CHOICES.items():
            try:
                env_value(env, var)
            except EnvValueError as bad:  # at the key it overrides, else the top of the file
                errors.append(SpecError(bad.message, hint=bad.hint, loc=src.locate(f"/{key}" if key in data else "")))
        if skill is None:
            errors.append(SpecError(
                f"no skill for this clauditor spec: no {stem}.md beside it and no SKILL.md in its folder or above",
                loc=src.locate(""), hint=f"put the spec beside the command it tests (.claude/commands/{stem}.md), "
                                         f"or inside the skill's SKILL.md folder as SKILL.eval.json"))
        errors += loader.errors(src, data)
        if errors:
            raise SpecErrors(errors)

        notes: list[str] = loader.warnings(data)
        data = {k: v for k, v in data.items() if k in loader.KNOWN_KEYS}  # clauditor ignores the others
        origin: dict[str, str] = {"/cases": "", "/cases/0": ""}
        native: dict[str, Any] = {"skill": skill}
        if name is not None:  # discovery names the spec the same way
            native["name"] = name
        for key in ("description", "timeout", "system_prompt"):
            if key in data:
                native[key] = data[key]
                origin[f"/{key}"] = f"/{key}"

        kind, why = harness(data, env)
        # `auto` (written or by default) is clauditor's own pick: the project's agent, when it sets one, wins.
        chosen_by_default = "auto:" in why
        agent: dict[str, Any] = {"kind": kind}
        origin["/agent"] = "/harness" if "harness" in data else ""
        notes.append(f"harness → agent kind {kind} ({why})")
        for key in ("sync_tasks", "allow_hang_heuristic"):
            if key in data:
                agent[key] = data[key]
                origin[f"/agent/{key}"] = f"/{key}"
        if flags(env).get("sync_tasks"):  # clauditor: --sync-tasks wins over the field (it can only turn it on)
            agent["sync_tasks"] = True
            notes.append("sync_tasks → true (--sync-tasks)")
        native["agent"] = agent

        case: dict[str, Any] = {"id": loader.case_id(data.get("skill_name", name or stem), name or stem),
                                "args": data.get("test_args", "")}
        origin["/cases/0/id"] = "/skill_name" if "skill_name" in data else ""
        origin["/cases/0/args"] = "/test_args" if "test_args" in data else ""
        for key in ("user_prompt", "input_files", "output_file", "output_files"):
            if key in data:
                case[key] = data[key]
                origin[f"/cases/0/{key}"] = f"/{key}"
        for seed_key, key in (("assertions", "checks"), ("grading_criteria", "criteria"), ("sections", "sections")):
            if data.get(seed_key):
                case[key] = {"checks": _checks, "criteria": _criteria, "sections": _sections}[key](data[seed_key])
                origin[f"/cases/0/{key}"] = f"/{seed_key}"
        if not case.get("checks") and not case.get("criteria") and not case.get("sections"):
            # clauditor's validate runs the skill and passes it with no assertion: a check every output passes.
            case["checks"] = [{"type": "min_length", "length": 0, "name": "no assertions: every run passes"}]
        native["cases"] = [case]

        if case.get("criteria") or case.get("sections"):
            provider, at = judge_provider(data, env)
            judge = {"provider": provider}
            origin["/judge"] = at if at[1:] in data else ""
            origin["/judge/provider"] = origin["/judge"]
            if "grading_model" in data:
                judge["model"] = data["grading_model"]
                origin["/judge/model"] = "/grading_model"
            native["judge"] = judge

        # clauditor runs the skill once (`--variance N` adds N runs); variance.n_runs is read by neither grade nor
        # validate. Its grade gates each run on the share of criteria passed and their mean score, its defaults
        # applying when grade_thresholds is absent (results/thresholds.py, clauditor_gates).
        variance = data.get("variance") or {}
        if "n_runs" in variance:
            notes.append(f"variance.n_runs {variance['n_runs']} is not a trial count: clauditor runs the skill once "
                         "(`skillmake clauditor grade --variance N` adds N runs)")
        if case.get("criteria"):
            given = data.get("grade_thresholds") or {}
            thresholds = {key: _unit(given.get(key, default)) for key, default in CLAUDITOR_THRESHOLDS.items()}
            thresholds["min_stability"] = _unit(variance.get("min_stability", 0.8))
            native["thresholds"] = thresholds
            origin["/thresholds"] = "/grade_thresholds" if "grade_thresholds" in data else ""
            origin["/thresholds/min_stability"] = "/variance/min_stability" if "min_stability" in variance else ""
        triggers = data.get("trigger_tests")
        if triggers:  # clauditor reads these two lists and ignores any other key
            native["trigger_tests"] = {k: v for k, v in triggers.items() if k in _TRIGGER_KEYS}
            origin["/trigger_tests"] = "/trigger_tests"
            notes.append("trigger_tests run as trigger trials (3 runs per query, threshold 0.5) on claude-code or "
                         "codex; see docs/triggers.md")
        if "output_file" in data and "output_files" in data:
            notes.append("output_file and output_files: clauditor reads output_file only; skillmake captures both")
        return Translation(data=native, origin=origin, notes=tuple(notes), agent_is_default=chosen_by_default)


# clauditor's GradeThresholds defaults (schemas.py): they gate every grade, written or not.
CLAUDITOR_THRESHOLDS = {"min_pass_rate": 0.7, "min_mean_score": 0.5}


def _unit(value: Any) -> float:
    """A threshold as a share: clauditor takes any number (loader.warnings says when one is outside 0..1)."""
    return min(1.0, max(0.0, float(value))) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else 0.0


def _criteria(criteria: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # clauditor takes a blank criterion (loader.warnings says so): the judge is shown that it is blank.
    return [{"id": c["id"], "criterion": c["criterion"] if c["criterion"].strip() else "(a blank criterion)"}
            for c in criteria]


_TRIGGER_KEYS = ("should_trigger", "should_not_trigger")
_CHECK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")  # the native check id (schemas/spec.schema.json)


def _checks(assertions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """clauditor's assertions as native checks that count as clauditor counts (clauditor_assertions.py)."""
    checks = [native_check(a) for a in assertions]
    taken = {c["id"] for c in checks if _CHECK_ID.fullmatch(c.get("id", ""))}
    for i, check in enumerate(checks):  # clauditor takes any id; a native check id names report rows
        if "id" in check and not _CHECK_ID.fullmatch(check["id"]):
            base = re.sub(r"[^A-Za-z0-9_.:-]+", "-", check["id"]).strip("-_.:") or "assertion"
            check["id"] = base if base not in taken else f"{base}-{i}"
            taken.add(check["id"])
    lows = [c["length"] for c in checks if c["type"] == "min_length"]
    for check in checks:  # min_length above a max_length: clauditor runs both (one fails); native rules refuse the pair
        if check["type"] == "max_length" and lows and max(lows) > check["length"]:
            length = check.pop("length")
            check.update(type="not_matches", pattern=f"\\A[\\s\\S]{{{length + 1}}}", name=f"max_length<={length}")
    return checks


def _sections(sections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """clauditor's sections with its default written out (a field is required unless it says `required: false`),
    and each field's format as clauditor matches it: its own registry's pattern, in full."""
    def field(f: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"required": _FIELD_REQUIRED, **{k: f[k] for k in ("id", "name", "required") if k in f}}
        if isinstance(f.get("format"), str) and f["format"] in CLAUDITOR_FORMATS:
            out["format"] = field_format(f["format"])
        return out

    def tier(t: dict[str, Any]) -> dict[str, Any]:  # clauditor reads these keys and ignores any other
        return {**{k: t[k] for k in ("label", "min_entries", "max_entries") if k in t and t[k] is not None},
                "fields": [field(f) for f in t.get("fields") or ()]}
    return [{"name": section["name"], "tiers": [tier(t) for t in section["tiers"]]} for section in sections]


ADAPTER = ClauditorAdapter()
